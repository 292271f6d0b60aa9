package index

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/neardup/neardup/store"
)

// BulkDocs is the number of documents from which a write goes through a
// store bulk (store.NewBulk) instead of a batch: an Add of at least this
// many documents, and a Bulk once it holds this many. Below it the
// write-ahead-log path of a batch is cheaper than writing and ingesting
// tables (and keeps small online adds from making small tables).
const BulkDocs = 4096

// bulkDocs is BulkDocs; tests lower it.
var bulkDocs = BulkDocs

// ErrBulkOpen is returned by Add and Remove while a Bulk of the index is
// open, and by NewBulk when one already is: a bulk reads the records it
// replaces when documents are added to it and writes at Commit, so no
// other write may come between.
var ErrBulkOpen = errors.New("index: a bulk build is open")

// Bulk adds many documents to an index — a whole build, more documents
// than one Add should hold — in as few writes as the store allows. Its
// documents go into one store bulk (store.NewBulk: on Pebble, postings
// sorted in memory and in runs on disk, then handed over as finished
// tables in one ingestion), instead of one write-ahead-log record and
// memtable insert per posting that compactions rewrite again. The writes
// of the first BulkDocs documents are held in memory until either Commit
// (they go through one ordinary batch: a small build stays on the
// write-ahead-log path) or the BulkDocs-th document (they go into the
// store bulk with the rest: a large build writes no log at all).
//
// Documents are read, replaced and posted exactly as Add does; what a
// Bulk holds becomes visible, atomically and durably, when Commit
// returns. One exception commits early: a name added again after an
// earlier Add of the same Bulk (the earlier document is committed, then
// read and replaced).
// A failed Add or Commit discards everything since the last commit.
//
// While a Bulk is open the index's Add and Remove fail with ErrBulkOpen;
// queries see the index as it was at the last commit. A Bulk is not safe
// for concurrent use.
type Bulk struct {
	x      *Index
	b      store.Batch
	bulk   bool  // b is a store bulk
	docs   int   // documents staged in b
	ids    idSet // their ids, unless inOrder
	err    error // the first failure since the last commit
	closed bool
	sorted bool // documents come in increasing id order (NewSortedBulk)

	// A sorted Bulk keeps the ids of its staged documents in staged, in
	// increasing order, while they come in that order (inOrder); the first
	// one out of order moves them all to ids.
	staged  []uint64
	inOrder bool

	docIDs []uint64 // the ids of the documents of an Add, reused
}

// NewBulk opens a Bulk on the index. Close it when done.
func (x *Index) NewBulk() (*Bulk, error) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if x.bulkOpen {
		return nil, ErrBulkOpen
	}
	x.bulkOpen = true
	x.dropPostings() // a Bulk's writes do not reach the in-memory postings
	return &Bulk{x: x, b: &logBatch{}}, nil
}

// NewSortedBulk opens a Bulk whose documents the caller adds in strictly
// increasing ID(Name) order, across Adds, up to each Commit (a batch build
// that sorts its documents, as dedup does): on a store that takes records
// in order (store.SortedBulker, Pebble) they go straight into finished
// tables, with no sort and no run on disk. A document out of order fails
// the Bulk: its Commit returns the error and writes nothing.
func (x *Index) NewSortedBulk() (*Bulk, error) {
	k, err := x.NewBulk()
	if err == nil {
		k.sorted, k.inOrder = true, true
	}
	return k, err
}

// storeBulk returns a new store bulk of the Bulk's kind.
func (k *Bulk) storeBulk() store.Batch {
	if k.sorted {
		return store.NewSortedBulk(k.x.st)
	}
	return store.NewBulk(k.x.st)
}

// Add stages docs (see Index.Add, whose result it returns for them). They
// are written at Commit, or earlier as the type's comment says.
func (k *Bulk) Add(ctx context.Context, docs ...*Doc) (AddResult, error) {
	x := k.x
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if k.closed {
		return AddResult{}, errBulkClosed
	}
	if k.err != nil {
		return AddResult{}, k.err
	}
	if len(docs) == 0 {
		return AddResult{}, nil
	}
	k.docIDs = appendIDs(k.docIDs[:0], docs)
	again := false
	for _, id := range k.docIDs {
		if k.holds(id) {
			again = true
			break
		}
	}
	if again {
		// Commit what is staged: its records are then read like any
		// stored document's.
		if err := k.commit(ctx); err != nil {
			return AddResult{}, err
		}
	}
	if !k.bulk && k.docs+len(docs) >= bulkDocs {
		// From here on a store bulk; what the log holds goes into it.
		lb := k.b.(*logBatch)
		k.b, k.bulk = k.storeBulk(), true
		lb.replay(k.b)
	}
	res, fps, err := x.stage(ctx, k.b, docs, k.docIDs, k.note)
	if err == nil {
		err = x.fps.add(ctx, x, k.b, fps)
	}
	if err != nil {
		k.fail(err)
		return AddResult{}, err
	}
	k.docs += res.Added + res.Replaced
	if c := x.collapser.Load(); c != nil {
		// Staged, not yet committed: should the commit fail, the table
		// holds signatures of documents the store does not, and Collapse,
		// which reads the records of the pairs it proposes, drops them.
		c.putAll(docs)
	}
	return res, nil
}

// holds reports whether a document of the given id is staged. A sorted
// Bulk's ids come in increasing order, so only an id not above the last
// one is searched for (a map of a whole build's ids costs more than the
// rest of staging its documents).
func (k *Bulk) holds(id uint64) bool {
	if !k.inOrder {
		return k.ids.has(id)
	}
	if n := len(k.staged); n == 0 || id > k.staged[n-1] {
		return false
	}
	_, ok := slices.BinarySearch(k.staged, id)
	return ok
}

// note records the id of a staged document.
func (k *Bulk) note(id uint64) {
	if k.inOrder {
		if n := len(k.staged); n == 0 || id > k.staged[n-1] {
			k.staged = append(k.staged, id)
			return
		}
		for _, s := range k.staged {
			k.ids.add(s)
		}
		k.staged, k.inOrder = k.staged[:0], false
	}
	k.ids.add(id)
}

// forget empties the record of staged ids.
func (k *Bulk) forget() {
	k.ids.clear()
	k.staged, k.inOrder = k.staged[:0], k.sorted
}

// Commit writes what the Bulk holds, atomically and durably. The Bulk
// stays open for more documents.
func (k *Bulk) Commit(ctx context.Context) error {
	k.x.wmu.Lock()
	defer k.x.wmu.Unlock()
	if k.closed {
		return errBulkClosed
	}
	return k.commit(ctx)
}

// commit is Commit with x.wmu held.
func (k *Bulk) commit(ctx context.Context) error {
	if k.err != nil {
		err := k.err
		k.err = nil
		return err
	}
	if k.docs == 0 {
		return nil
	}
	n := k.docs
	var err error
	if lb, ok := k.b.(*logBatch); ok {
		// A small bulk: one batch through the write-ahead log.
		b := k.x.st.NewBatch()
		lb.replay(b)
		err = b.Commit(ctx)
		b.Close()
	} else {
		err = k.b.Commit(ctx)
	}
	k.docs = 0
	k.forget()
	if err != nil {
		k.x.fps.failed()
		return fmt.Errorf("index: adding %d documents: %w", n, err)
	}
	k.x.fps.committed()
	return nil
}

// fail discards what is staged since the last commit: a later Commit
// returns err.
func (k *Bulk) fail(err error) {
	k.b.Close()
	if k.bulk {
		k.b = k.storeBulk()
	} else {
		k.b = &logBatch{}
	}
	k.docs = 0
	k.forget()
	k.x.fps.failed()
	k.err = err
}

// Close discards what was not committed and closes the Bulk: the index
// takes Add and Remove again. It may be called more than once.
func (k *Bulk) Close() {
	k.x.wmu.Lock()
	defer k.x.wmu.Unlock()
	if k.closed {
		return
	}
	k.closed = true
	k.b.Close()
	k.ids, k.staged = idSet{}, nil
	k.x.bulkOpen = false
}

var errBulkClosed = errors.New("index: bulk is closed")

// logBatch is a store.Batch that only records its writes, to replay them
// into a batch or a bulk once the Bulk knows its size.
type logBatch struct{ store.Writes }

// Commit is never called: a Bulk replays the log instead.
func (l *logBatch) Commit(context.Context) error {
	return errors.New("index: internal error: a write log was committed")
}

func (l *logBatch) Close() { l.Writes = store.Writes{} }

// replay applies the recorded writes to b, in order, and empties the log.
func (l *logBatch) replay(b store.Batch) {
	l.Replay(b)
	l.Close()
}

// idSet is the set of the ids staged in a Bulk whose documents do not
// come in id order: sorted runs whose lengths halve from the first (the
// logarithmic method), the latest ids unsorted in tail. It takes 8 bytes
// an id where a Go map took about 29 (at 300,000 documents under a 96 MiB
// budget the map was a tenth of the heap), and a lookup is a scan of tail
// and a binary search of each run. The zero value is empty.
type idSet struct {
	tail []uint64
	runs [][]uint64 // sorted; each at least twice as long as the next
}

// idSetTail is the most ids idSet keeps unsorted.
const idSetTail = 256

// has reports whether id is in the set.
func (s *idSet) has(id uint64) bool {
	if slices.Contains(s.tail, id) {
		return true
	}
	for _, r := range s.runs {
		if _, ok := slices.BinarySearch(r, id); ok {
			return true
		}
	}
	return false
}

// add adds id, which the set does not hold.
func (s *idSet) add(id uint64) {
	s.tail = append(s.tail, id)
	if len(s.tail) < idSetTail {
		return
	}
	run := slices.Clone(s.tail)
	slices.Sort(run)
	s.tail = s.tail[:0]
	for n := len(s.runs); n > 0 && len(s.runs[n-1]) < 2*len(run); n = len(s.runs) {
		run = mergeIDs(s.runs[n-1], run)
		s.runs[n-1] = nil
		s.runs = s.runs[:n-1]
	}
	s.runs = append(s.runs, run)
}

// clear empties the set.
func (s *idSet) clear() {
	s.tail = s.tail[:0]
	clear(s.runs)
	s.runs = s.runs[:0]
}

// mergeIDs returns the sorted union of the sorted a and b, in a new array.
func mergeIDs(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
