package store

// Bulk builds by table ingestion (issue 14).
//
// A batch puts every posting through the write-ahead log and the
// memtable, and compactions then rewrite it level after level: for a
// large build that is most of the work. A bulk instead keeps its writes
// in memory, sorts them when the memory budget is reached and writes them
// to a sorted run file, and at Commit merges the runs (later writes win),
// writes the result as finished tables with Pebble's sstable writer, and
// hands them to DB.Ingest, which links them into the LSM in one atomic,
// synced MANIFEST edit. Ingested tables take the newest sequence number,
// so a bulk overwrites what the store held exactly as a batch committed at
// the same moment would, removals included (they become tombstones).

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// bulkTableBytes is the size at which a bulk starts a new table (tests
// lower it).
var bulkTableBytes uint64 = 64 << 20

const (
	// bulkPostingBytes is what a buffered posting costs in memory.
	bulkPostingBytes = 24
	// bulkEntryOverhead is what a buffered record or metadata value costs
	// besides its bytes.
	bulkEntryOverhead = 40
)

var bulkDirSeq atomic.Uint64

// NewBulk implements Bulker: the bulk buffers up to PebbleOptions.BulkBytes
// of writes in memory, then spills sorted runs into a directory inside the
// store's (removed at Commit, Close, or the next OpenPebble after a
// crash). Commit costs a sort of what is buffered, a merge of the runs,
// and one write of the result as tables; it is durable and atomic when it
// returns. Like a batch, a bulk is not safe for concurrent use.
func (s *Pebble) NewBulk() Batch { return &pebbleBulk{s: s} }

// NewSortedBulk implements SortedBulker: the bulk's records (PutDoc,
// DeleteDoc), which must come in strictly increasing id order, go
// straight into tables of their own as they come, instead of through the
// buffer, its sort and the runs on disk; the other writes are buffered as
// NewBulk's are. The record tables hold no other kind of key, so they
// overlap none of the merged tables, and Commit ingests them all at once.
func (s *Pebble) NewSortedBulk() Batch { return &pebbleBulk{s: s, sortedDocs: true} }

type bulkPosting struct {
	key, id uint64
	seq     uint32
	del     bool
}

type bulkValue struct {
	key   []byte // the store key ('d' id or 'm' name)
	value []byte
	seq   uint32
	del   bool
}

type pebbleBulk struct {
	s        *Pebble
	postings []bulkPosting
	values   []bulkValue
	seq      uint32
	bytes    int64 // memory held by the buffer
	n        int   // writes since the last Commit
	runs     []string
	dir      string // the run directory, once made
	err      error  // the first error spilling a run or writing a record table
	closed   bool

	// The records of a sorted bulk (NewSortedBulk): the table being
	// written, the finished tables, the last key written and how many.
	sortedDocs bool
	dw         *sstable.Writer
	dtables    []string
	dlast      [9]byte
	dn         int
}

func (b *pebbleBulk) next() uint32 {
	b.seq++
	b.n++
	return b.seq
}

func (b *pebbleBulk) AddPosting(key, id uint64) {
	b.postings = append(b.postings, bulkPosting{key: key, id: id, seq: b.next()})
	b.grew(bulkPostingBytes)
}

func (b *pebbleBulk) RemovePosting(key, id uint64) {
	b.postings = append(b.postings, bulkPosting{key: key, id: id, seq: b.next(), del: true})
	b.grew(bulkPostingBytes)
}

func (b *pebbleBulk) PutDoc(id uint64, rec []byte) {
	var kb [9]byte
	if b.sortedDocs {
		b.direct(docKey(&kb, id), rec, false)
		return
	}
	b.value(docKey(&kb, id), rec, false)
}

func (b *pebbleBulk) DeleteDoc(id uint64) {
	var kb [9]byte
	if b.sortedDocs {
		b.direct(docKey(&kb, id), nil, true)
		return
	}
	b.value(docKey(&kb, id), nil, true)
}

// direct writes a record of a sorted bulk into its current record table.
func (b *pebbleBulk) direct(key, value []byte, del bool) {
	b.n++
	if b.err != nil {
		return
	}
	if b.dn > 0 && bytes.Compare(key, b.dlast[:]) <= 0 {
		b.err = fmt.Errorf("store: sorted bulk: record %x written after %x (records must come in increasing id order)", key[1:], b.dlast[1:])
		return
	}
	if b.dw == nil {
		path, w, err := b.newTable("records", len(b.dtables))
		if err != nil {
			b.err = err
			return
		}
		b.dw, b.dtables = w, append(b.dtables, path)
	}
	full, err := writeEntry(b.dw, key, value, del)
	if err == nil && full {
		err = b.finishDirect()
	}
	if err != nil {
		b.err = err
		return
	}
	copy(b.dlast[:], key)
	b.dn++
}

// newTable creates the bulk's table file NAME-n.sst in its directory and
// returns its path and a writer of it.
func (b *pebbleBulk) newTable(name string, n int) (string, *sstable.Writer, error) {
	dir, err := b.runDir()
	if err != nil {
		return "", nil, err
	}
	path := b.s.fs.PathJoin(dir, fmt.Sprintf("%s-%06d.sst", name, n))
	f, err := b.s.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", nil, err
	}
	return path, sstable.NewWriter(objstorageprovider.NewFileWritable(f), b.s.po.MakeWriterOptions(0, b.s.db.TableFormat())), nil
}

// writeEntry sets key to value in w, or deletes it, and reports whether
// the table has reached bulkTableBytes.
func writeEntry(w *sstable.Writer, key, value []byte, del bool) (full bool, err error) {
	if del {
		err = w.Delete(key)
	} else {
		err = w.Set(key, value)
	}
	return err == nil && w.Raw().EstimatedSize() >= bulkTableBytes, err
}

// finishDirect closes the current record table (syncing it, as Ingest
// requires).
func (b *pebbleBulk) finishDirect() error {
	if b.dw == nil {
		return nil
	}
	err := b.dw.Close()
	b.dw = nil
	return err
}

func (b *pebbleBulk) PutMeta(name string, value []byte) { b.value(metaKey(name), value, false) }

func (b *pebbleBulk) DeleteMeta(name string) { b.value(metaKey(name), nil, true) }

func (b *pebbleBulk) value(key, value []byte, del bool) {
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	b.values = append(b.values, bulkValue{key: buf[:len(key):len(key)], value: buf[len(key):], seq: b.next(), del: del})
	b.grew(int64(len(buf)) + bulkEntryOverhead)
}

func (b *pebbleBulk) Len() int { return b.n }

// grew accounts for memory and spills a run when the budget is reached.
func (b *pebbleBulk) grew(n int64) {
	b.bytes += n
	if b.bytes >= b.s.bulkBytes && b.err == nil {
		b.err = b.spill()
	}
}

// sorted sorts and deduplicates the buffer (the last write to a key wins)
// and returns it as a source.
func (b *pebbleBulk) sorted() *memSource {
	slices.SortFunc(b.postings, func(x, y bulkPosting) int {
		if c := cmp.Compare(x.key, y.key); c != 0 {
			return c
		}
		if c := cmp.Compare(x.id, y.id); c != 0 {
			return c
		}
		return cmp.Compare(x.seq, y.seq)
	})
	b.postings = compactLast(b.postings, func(x, y bulkPosting) bool { return x.key == y.key && x.id == y.id })
	slices.SortFunc(b.values, func(x, y bulkValue) int {
		if c := bytesCompare(x.key, y.key); c != 0 {
			return c
		}
		return cmp.Compare(x.seq, y.seq)
	})
	b.values = compactLast(b.values, func(x, y bulkValue) bool { return string(x.key) == string(y.key) })
	return &memSource{postings: b.postings, values: b.values, vi: -1, pi: -1}
}

// compactLast keeps the last of each run of equal neighbours.
func compactLast[T any](s []T, eq func(a, b T) bool) []T {
	out := s[:0]
	for i := range s {
		if i+1 < len(s) && eq(s[i], s[i+1]) {
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func bytesCompare(a, b []byte) int { return cmp.Compare(string(a), string(b)) }

func (b *pebbleBulk) reset() {
	b.postings, b.values = b.postings[:0], b.values[:0]
	b.seq, b.bytes = 0, 0
}

// runDir makes the bulk's directory inside the store's.
func (b *pebbleBulk) runDir() (string, error) {
	if b.dir != "" {
		return b.dir, nil
	}
	fs := b.s.fs
	dir := fs.PathJoin(b.s.dir, bulkDirPrefix+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(bulkDirSeq.Add(1), 10))
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b.dir = dir
	return dir, nil
}

// spill writes the buffer, sorted, as a run file: entries of
// uvarint(len(key)) key, op byte (0 delete, 1 set), uvarint(len(value)) value.
func (b *pebbleBulk) spill() error {
	dir, err := b.runDir()
	if err != nil {
		return err
	}
	fs := b.s.fs
	name := fs.PathJoin(dir, fmt.Sprintf("run-%06d", len(b.runs)))
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	src := b.sorted()
	var hdr [2*binary.MaxVarintLen64 + 1]byte
	for src.next() {
		k, v, del := src.key(), src.value(), src.del()
		n := binary.PutUvarint(hdr[:], uint64(len(k)))
		w.Write(hdr[:n])
		w.Write(k)
		op := byte(1)
		if del {
			op = 0
		}
		w.WriteByte(op)
		n = binary.PutUvarint(hdr[:], uint64(len(v)))
		w.Write(hdr[:n])
		if _, err := w.Write(v); err != nil {
			break
		}
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	b.runs = append(b.runs, name)
	b.reset()
	return nil
}

// Commit implements Batch: it merges the runs and the buffer, writes the
// tables and ingests them. On error nothing is applied and the bulk is
// empty.
func (b *pebbleBulk) Commit(ctx context.Context) error {
	s := b.s
	if b.closed || s.closed.Load() {
		return ErrClosed
	}
	if err := s.h.err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer b.discard()
	if b.err != nil {
		return s.h.describe("bulk", b.err)
	}
	if b.n == 0 {
		return nil
	}
	tables, err := b.writeTables()
	if err != nil {
		if s.h.err() != nil {
			return s.h.err()
		}
		var fe *FaultError
		if errors.As(err, &fe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return s.h.describe("bulk", err)
	}
	if len(tables) == 0 {
		return nil
	}
	s.dropIters() // ingestion may flush the memtable they pin
	err, _ = s.run(ctx, "ingest", func() error { return s.db.Ingest(ctx, tables) })
	if err != nil {
		return err
	}
	s.gen.Add(1)
	return nil
}

// writeTables merges the runs and the buffer into tables in the bulk's
// directory and returns their paths.
func (b *pebbleBulk) writeTables() (paths []string, err error) {
	s := b.s
	sources := []bulkSource{}
	for _, name := range b.runs {
		f, err := s.fs.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sources = append(sources, &runSource{r: bufio.NewReaderSize(f, 1<<20), name: name})
	}
	sources = append(sources, b.sorted())
	m := newMerge(sources)
	var w *sstable.Writer
	finish := func() error {
		if w == nil {
			return nil
		}
		err := w.Close() // syncs the file, as Ingest requires
		w = nil
		return err
	}
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	n := 0
	var kind byte // the kind of the keys in w's table
	for m.next() {
		if n&4095 == 0 {
			if err := s.h.err(); err != nil {
				return nil, err
			}
		}
		n++
		src := m.top()
		if w != nil && src.key()[0] != kind {
			// One kind of record per table: a table spanning documents
			// and postings would also span the metadata keys between
			// them, which sit in the memtable, and an ingested table
			// overlapping them cannot go to the last level.
			if err := finish(); err != nil {
				return nil, err
			}
		}
		if w == nil {
			path, nw, err := b.newTable("table", len(paths))
			if err != nil {
				return nil, err
			}
			w, paths = nw, append(paths, path)
		}
		kind = src.key()[0]
		full, err := writeEntry(w, src.key(), src.value(), src.del())
		if err != nil {
			return nil, err
		}
		if full {
			if err := finish(); err != nil {
				return nil, err
			}
		}
	}
	if err := m.err(); err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if err := b.finishDirect(); err != nil {
		return nil, err
	}
	return append(paths, b.dtables...), nil
}

// discard drops the buffer, the runs and the record tables.
func (b *pebbleBulk) discard() {
	b.reset()
	if b.dw != nil {
		b.dw.Close()
		b.dw = nil
	}
	b.dtables, b.dn = nil, 0
	b.n, b.err, b.runs = 0, nil, nil
	if b.dir != "" {
		b.s.fs.RemoveAll(b.dir)
		b.dir = ""
	}
}

// Close implements Batch: it discards what was not committed.
func (b *pebbleBulk) Close() {
	if !b.closed {
		b.discard()
		b.postings, b.values = nil, nil
		b.closed = true
	}
}

// A bulkSource yields writes in increasing key order, each key once.
type bulkSource interface {
	next() bool
	key() []byte
	value() []byte
	del() bool
	err() error
}

// memSource yields a sorted, deduplicated buffer: its values (documents
// 'd' and metadata 'm') first, then its postings ('p'), which is key
// order.
type memSource struct {
	postings []bulkPosting
	values   []bulkValue
	vi, pi   int
	kb       [postingKeyLen]byte
}

func (m *memSource) next() bool {
	if m.vi+1 < len(m.values) {
		m.vi++
		return true
	}
	m.vi = len(m.values)
	m.pi++
	if m.pi < len(m.postings) {
		p := m.postings[m.pi]
		postingKey(&m.kb, p.key, p.id)
		return true
	}
	return false
}

func (m *memSource) inValues() bool { return m.vi < len(m.values) }

func (m *memSource) key() []byte {
	if m.inValues() {
		return m.values[m.vi].key
	}
	return m.kb[:]
}

func (m *memSource) value() []byte {
	if m.inValues() {
		return m.values[m.vi].value
	}
	return nil
}

func (m *memSource) del() bool {
	if m.inValues() {
		return m.values[m.vi].del
	}
	return m.postings[m.pi].del
}

func (m *memSource) err() error { return nil }

// runSource reads a run file written by spill.
type runSource struct {
	r        *bufio.Reader
	name     string
	k, v     []byte
	isDel    bool
	readErr  error
	finished bool
}

func (r *runSource) next() bool {
	if r.finished {
		return false
	}
	klen, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		r.finished = true
		return false
	}
	if err == nil {
		r.k = growTo(r.k, int(klen))
		_, err = io.ReadFull(r.r, r.k)
	}
	var op byte
	if err == nil {
		op, err = r.r.ReadByte()
	}
	var vlen uint64
	if err == nil {
		vlen, err = binary.ReadUvarint(r.r)
	}
	if err == nil {
		r.v = growTo(r.v, int(vlen))
		_, err = io.ReadFull(r.r, r.v)
	}
	if err != nil {
		r.readErr = fmt.Errorf("bulk run %s: %w", r.name, err)
		r.finished = true
		return false
	}
	r.isDel = op == 0
	return true
}

func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func (r *runSource) key() []byte   { return r.k }
func (r *runSource) value() []byte { return r.v }
func (r *runSource) del() bool     { return r.isDel }
func (r *runSource) err() error    { return r.readErr }

// merge yields the writes of several sources in key order; of equal keys
// it yields the one of the latest source (the highest index) only.
type merge struct {
	h    mergeHeap
	cur  *mergeItem
	all  []*mergeItem
	fail error
}

type mergeItem struct {
	src bulkSource
	age int
}

type mergeHeap []*mergeItem

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytesCompare(h[i].src.key(), h[j].src.key()); c != 0 {
		return c < 0
	}
	return h[i].age > h[j].age // the newest first
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newMerge(sources []bulkSource) *merge {
	m := &merge{}
	for i, s := range sources {
		it := &mergeItem{src: s, age: i}
		m.all = append(m.all, it)
		if s.next() {
			m.h = append(m.h, it)
		} else if err := s.err(); err != nil {
			m.fail = err
		}
	}
	heap.Init(&m.h)
	return m
}

// next advances past the current key in every source that holds it and
// positions on the next key.
func (m *merge) next() bool {
	if m.fail != nil {
		return false
	}
	if m.cur != nil {
		key := string(m.cur.src.key())
		m.advance(m.cur)
		for len(m.h) > 0 && string(m.h[0].src.key()) == key {
			m.advance(m.h[0])
		}
		m.cur = nil
	}
	if m.fail != nil || len(m.h) == 0 {
		return false
	}
	m.cur = m.h[0]
	return true
}

// advance moves the source at the top of the heap to its next key.
func (m *merge) advance(it *mergeItem) {
	if it.src.next() {
		heap.Fix(&m.h, 0)
		return
	}
	if err := it.src.err(); err != nil {
		m.fail = err
	}
	heap.Pop(&m.h)
}

func (m *merge) top() bulkSource { return m.cur.src }

func (m *merge) err() error { return m.fail }
