package index

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/store"
)

// Postings in memory, for serving (LoadPostings). A query's candidate
// lookup reads one posting list per LSH key (17 for the default scheme):
// from an embedded store each is a prefix seek through the memtables and
// every level's Bloom filter (most of a query's CPU time at a million
// documents), from a network store one command each. A process that
// answers many queries over one store instead keeps a copy of every
// posting in a hash table here: the store stays the durable truth, and the
// copy is loaded from it once (one scan of the postings) and kept current
// by the index's own writes, applied after each commit and before the
// write returns. A lookup is then a probe of an open-addressing table.
//
// The table is a multimap with linear probing over one uint64 per slot:
// the high 32 bits are the top half of a bijective mix of the lookup key
// (a multiplication by an odd constant), the low 32 a document number
// (1-based, so an empty slot is 0) naming a document id in a slice. The
// home slot of a key is the top log2(slots) bits of its mix, so it is
// known from the slot alone (for growing and for deleting by backward
// shift). A lookup walks from the home slot to the first empty one and
// takes the documents whose top half matches. Two different keys share a
// top half with probability 2^-32: a lookup meets such a foreign slot
// with that probability per slot it walks past, and it only adds a
// candidate that verification then rejects. Memory: 8 bytes per slot at a
// load factor between 3/8 and 3/4 (11 to 21 bytes per posting), plus 12
// bytes and a map entry per document.

// memPostings is the in-memory copy of the store's postings.
type memPostings struct {
	mu    sync.RWMutex
	slots []uint64 // top half of mix(key) << 32 | doc number; 0 is empty
	shift uint     // 64 - log2(len(slots))
	used  int      // non-empty slots
	ids   []uint64 // doc number - 1 -> id
	refs  []uint32 // doc number - 1 -> postings it holds (0: free)
	free  []uint32 // doc numbers to reuse
	num   map[uint64]uint32
	// follow, for a shared store, reads the journal; nil for a store of
	// this process alone, whose writes the index applies itself.
	follow *follower
}

const memMinBits = 10

func newMemPostings() *memPostings {
	return &memPostings{slots: make([]uint64, 1<<memMinBits), shift: 64 - memMinBits, num: map[uint64]uint32{}}
}

// mix is a bijection of the keys whose top bits are well spread even when
// a scheme's keys use fewer than 64 bits.
func mix(key uint64) uint64 { return key * 0x9e3779b97f4a7c15 }

func tagOf(key uint64) uint64 { return mix(key) &^ math.MaxUint32 }

// lookupMany calls fn(i, ids) for every keys[i], in order, with the ids of
// the documents posted under it (ids is reused after the call). Called
// with mu held for reading. The keys' first slots are read in one pass and
// their ids in another: the loads of a pass do not depend on each other,
// so the CPU overlaps their cache misses — a query's 17 keys in a table of
// a million documents cost about two misses' time, not 34 (one per key
// for the slot, one for the id).
func (t *memPostings) lookupMany(keys []uint64, fn func(i int, ids []uint64) error) error {
	const group = 32
	var (
		at    [group]int    // the key's first slot
		first [group]uint64 // its value
		end   [group]int    // the key's doc numbers end at nums[end[j]]
		nbuf  [4 * group]uint32
		ibuf  [4 * group]uint64
	)
	mask := len(t.slots) - 1
	for lo := 0; lo < len(keys); lo += group {
		g := keys[lo:min(lo+group, len(keys))]
		for j, k := range g {
			at[j] = int(tagOf(k) >> t.shift)
			first[j] = t.slots[at[j]]
		}
		nums := nbuf[:0]
		for j, k := range g {
			tag := tagOf(k)
			for i, s := at[j], first[j]; s != 0; {
				if s&^math.MaxUint32 == tag {
					nums = append(nums, uint32(s))
				}
				i = (i + 1) & mask
				s = t.slots[i]
			}
			end[j] = len(nums)
		}
		ids := ibuf[:0]
		for _, n := range nums {
			ids = append(ids, t.ids[n-1])
		}
		start := 0
		for j := range g {
			if err := fn(lo+j, ids[start:end[j]]); err != nil {
				return err
			}
			start = end[j]
		}
	}
	return nil
}

// find returns the slot holding v, or -1.
func (t *memPostings) find(v uint64) int {
	mask := len(t.slots) - 1
	for i := int(v >> t.shift); ; i = (i + 1) & mask {
		switch t.slots[i] {
		case 0:
			return -1
		case v:
			return i
		}
	}
}

// add posts id under key (a no-op if it is there). Called with mu held.
func (t *memPostings) add(key, id uint64) error {
	tag := tagOf(key)
	n, ok := t.num[id]
	if ok {
		if t.find(tag|uint64(n)) >= 0 {
			return nil
		}
	} else {
		if len(t.free) > 0 {
			n = t.free[len(t.free)-1]
			t.free = t.free[:len(t.free)-1]
			t.ids[n-1] = id
		} else {
			if len(t.ids) >= math.MaxUint32-1 {
				return errors.New("index: more than 2^32-2 documents for the in-memory postings")
			}
			t.ids, t.refs = append(t.ids, id), append(t.refs, 0)
			n = uint32(len(t.ids))
		}
		t.num[id] = n
	}
	if (t.used+1)*4 > len(t.slots)*3 {
		if len(t.slots) == 1<<32 {
			return errors.New("index: more than 2^32 postings in memory")
		}
		t.resize(len(t.slots) * 2)
	}
	t.put(tag | uint64(n))
	t.used++
	t.refs[n-1]++
	return nil
}

// put stores v in the first empty slot from its home.
func (t *memPostings) put(v uint64) {
	mask := len(t.slots) - 1
	i := int(v >> t.shift)
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = v
}

// resize rehashes into n slots (a power of two).
func (t *memPostings) resize(n int) {
	old := t.slots
	t.slots = make([]uint64, n)
	t.shift = uint(64 - log2(n))
	for _, v := range old {
		if v != 0 {
			t.put(v)
		}
	}
}

func log2(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

// remove removes id from under key (a no-op if it is not there), by
// backward shift: later slots of the probe run move up so that no lookup
// meets an empty slot before its key's slots. Called with mu held.
func (t *memPostings) remove(key, id uint64) {
	n, ok := t.num[id]
	if !ok {
		return
	}
	i := t.find(tagOf(key) | uint64(n))
	if i < 0 {
		return
	}
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		h := int(t.slots[j] >> t.shift)
		// slots[j] may move to i when its home is not cyclically in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = 0
	t.used--
	if t.refs[n-1]--; t.refs[n-1] == 0 {
		delete(t.num, id)
		t.free = append(t.free, n)
	}
}

// postings reports the number of postings held.
func (t *memPostings) postings() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.used
}

// postingOp is a posting write recorded for the in-memory table.
type postingOp struct {
	key, id uint64
	add     bool
}

// apply applies recorded writes in order.
func (t *memPostings) apply(ops []postingOp) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range ops {
		if !o.add {
			t.remove(o.key, o.id)
		} else if err := t.add(o.key, o.id); err != nil {
			return err
		}
	}
	return nil
}

// recorder is a store.Batch that passes every write to b and records the
// posting writes, to apply to the in-memory table once b is committed.
type recorder struct {
	store.Batch
	ops []postingOp
}

func (r *recorder) AddPosting(key, id uint64) {
	r.Batch.AddPosting(key, id)
	r.ops = append(r.ops, postingOp{key, id, true})
}

func (r *recorder) RemovePosting(key, id uint64) {
	r.Batch.RemovePosting(key, id)
	r.ops = append(r.ops, postingOp{key, id, false})
}

// record wraps b in a recorder when the index serves postings from memory.
// Called with x.wmu held.
func (x *Index) record(b store.Batch) (store.Batch, *recorder) {
	if t := x.mem.Load(); t == nil || t.follow != nil {
		return b, nil // no table, or one that reads every write from the journal
	}
	r := &recorder{Batch: b}
	return r, r
}

// committed applies what r recorded (nil: nothing) to the in-memory table
// after its batch was committed. Should the table refuse (beyond 2^32
// documents), the index stops serving from it and reads the store again.
// Called with x.wmu held.
func (x *Index) committed(r *recorder) {
	if r == nil {
		return
	}
	if t := x.mem.Load(); t != nil {
		if err := t.apply(r.ops); err != nil {
			x.mem.Store(nil)
		}
	}
}

// journalMeta marks an index created on a journaled store
// (store.Journaled). Kept for the indexes of earlier releases, which
// replayed the whole journal; followers now start from the postings.
const journalMeta = "neardup.index.journal"

// LoadPostings copies every posting of the store into memory and from
// then on answers the index's candidate lookups (Candidates, Query,
// QueryMany, QueryBatch) from the copy. It returns the number of postings
// loaded. The store remains the durable record: the copy is rebuilt by
// the next LoadPostings, in this process or another.
//
// A store of this process alone (store.Capabilities Shared false) is read
// with one scan of its postings, and this Index's Add and Remove apply
// their writes to the copy after each commit. A shared store must be
// journaled (store.Journaled, as store/redis is): the index joins the
// journal as a follower, scans the postings, and applies the journal from
// where it joined; before each lookup it reads the journal's tail (one
// round trip, shared by the lookups that wait for it) and applies it, so
// a lookup sees every write any process committed before it began, and
// it acknowledges what it has read so that the store can trim it. Should
// it have been silent past the store's expiry (its journal position
// trimmed), it rebuilds the copy from the postings. A shared store that
// is not journaled fails, and the index keeps reading postings from the
// store. ReleasePostings leaves the journal.
//
// Opening a Bulk or repairing with Check drops the copy (queries read the
// store again until the next LoadPostings). Memory: about 16 bytes per
// posting (one per LSH key and one per fingerprint of each document),
// plus about 40 bytes per document.
func (x *Index) LoadPostings(ctx context.Context) (int, error) {
	var js store.Journaled
	if x.st.Capabilities().Shared {
		j, ok := x.st.(store.Journaled)
		if !ok {
			return 0, errors.New("index: postings in memory need a store of this process alone, or a journaled one; this one is shared")
		}
		js = j
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if x.bulkOpen {
		return 0, ErrBulkOpen
	}
	t := newMemPostings()
	if js != nil {
		t.follow = &follower{js: js, reader: readerName(), scan: x.st.ScanPostings, note: x.applyNote}
		if err := t.rebuild(ctx); err != nil {
			return 0, err
		}
	} else if err := x.st.ScanPostings(ctx, func(key, id uint64) error {
		return t.add(key, id)
	}); err != nil {
		return 0, fmt.Errorf("index: loading the postings: %w", err)
	}
	if old := x.mem.Swap(t); old != nil && old.follow != nil {
		old.follow.leave(ctx)
	}
	return t.postings(), nil
}

// readerName names this process's follower of a journal: unique among
// the processes sharing a store.
func readerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:12])
}

// ReleasePostings stops serving postings from memory (lookups read the
// store again) and, for a follower of a shared store's journal, leaves
// the journal so that it no longer holds entries for this process. A
// server calls it when it shuts down.
func (x *Index) ReleasePostings(ctx context.Context) error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if t := x.mem.Swap(nil); t != nil && t.follow != nil {
		return t.follow.leave(ctx)
	}
	return nil
}

// follower reads a journaled store's tail into the in-memory postings.
type follower struct {
	js     store.Journaled
	reader string
	scan   func(ctx context.Context, fn func(key, id uint64) error) error
	note   func([]byte) error
	mu     sync.Mutex // serializes reads of the journal
	pos    string     // the journal position applied
	began  time.Time  // when the last completed read began
	acked  time.Time  // when pos was last acknowledged
	// Rebuilds counts the copies made from the postings after joining
	// (the first load) or after the position was trimmed.
	rebuilds atomic.Int64
}

func (f *follower) leave(ctx context.Context) error {
	if err := f.js.LeaveJournal(ctx, f.reader); err != nil {
		return fmt.Errorf("index: leaving the store's journal: %w", err)
	}
	return nil
}

// rebuild joins the journal, scans the postings into a new table, applies
// the journal from where it joined, and makes that t's content. Called
// with f.mu held, or before t is shared.
func (t *memPostings) rebuild(ctx context.Context) error {
	f := t.follow
	began := time.Now()
	pos, err := f.js.FollowJournal(ctx, f.reader)
	if err != nil {
		return fmt.Errorf("index: joining the store's journal: %w", err)
	}
	n := newMemPostings()
	if err := f.scan(ctx, func(key, id uint64) error { return n.add(key, id) }); err != nil {
		return fmt.Errorf("index: loading the postings: %w", err)
	}
	pos, err = f.js.ReadJournal(ctx, pos, func(key, id uint64, add bool, note []byte) error {
		if note != nil {
			return f.note(note)
		}
		if !add {
			n.remove(key, id)
			return nil
		}
		return n.add(key, id)
	})
	if err != nil {
		return fmt.Errorf("index: following the store's journal: %w", err)
	}
	t.mu.Lock()
	t.slots, t.shift, t.used, t.ids, t.refs, t.free, t.num = n.slots, n.shift, n.used, n.ids, n.refs, n.free, n.num
	t.mu.Unlock()
	f.pos, f.began, f.acked = pos, began, began
	f.rebuilds.Add(1)
	return nil
}

// ackEvery is how often a follower acknowledges its journal position
// (a heartbeat: well within any sensible expiry).
const ackEvery = time.Second

// sync applies what the journal holds beyond the table's position,
// unless a read that began after start has completed meanwhile (it holds
// everything committed before start). Once a second it first
// acknowledges the position; should the store answer that this process
// was dropped (silent past the store's expiry, so entries it had not
// read may be trimmed), it rebuilds the table from the postings instead.
func (t *memPostings) sync(ctx context.Context, start time.Time) error {
	f := t.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.began.After(start) {
		return nil
	}
	began := time.Now()
	if began.Sub(f.acked) >= ackEvery {
		err := f.js.AckJournal(ctx, f.reader, f.pos)
		if errors.Is(err, store.ErrJournalTrimmed) {
			return t.rebuild(ctx)
		}
		if err != nil {
			return fmt.Errorf("index: acknowledging the store's journal: %w", err)
		}
		f.acked = began
	}
	var ops []postingOp
	var notes [][]byte
	pos, err := f.js.ReadJournal(ctx, f.pos, func(key, id uint64, add bool, note []byte) error {
		if note != nil {
			notes = append(notes, slices.Clone(note))
		} else {
			ops = append(ops, postingOp{key, id, add})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: following the store's journal: %w", err)
	}
	if err := t.apply(ops); err != nil {
		return err
	}
	for _, n := range notes {
		if err := f.note(n); err != nil {
			return err
		}
	}
	f.pos, f.began = pos, began
	return nil
}

// JournalState describes an index's following of a shared store's
// journal (FollowState).
type JournalState struct {
	// Following is true while the index serves postings from memory,
	// following a journal.
	Following bool
	// Entries and Bytes are the journal's size in the store (Bytes -1
	// when the store does not say).
	Entries, Bytes int64
	// Rebuilds counts the in-memory copies made from the postings: 1 for
	// the first load, one more each time the index had been silent past
	// the store's expiry.
	Rebuilds int64
}

// FollowState reports the journal the index follows, if any (one
// round trip to the store).
func (x *Index) FollowState(ctx context.Context) (JournalState, error) {
	t := x.mem.Load()
	if t == nil || t.follow == nil {
		return JournalState{}, nil
	}
	e, b, err := t.follow.js.JournalSize(ctx)
	if err != nil {
		return JournalState{}, fmt.Errorf("index: %w", err)
	}
	return JournalState{Following: true, Entries: e, Bytes: b, Rebuilds: t.follow.rebuilds.Load()}, nil
}

// dropPostings stops serving postings from memory (leaving a journal it
// follows, at the cost of a round trip). Called with x.wmu held.
func (x *Index) dropPostings() {
	if t := x.mem.Swap(nil); t != nil && t.follow != nil {
		_ = t.follow.leave(context.Background()) // else its place expires
	}
}

// lookupPostings is store.LookupPostings, answered by the in-memory table
// when the index has one. fn's ids are not ordered.
func (x *Index) lookupPostings(ctx context.Context, keys []uint64, fn func(i int, ids []uint64) error) error {
	t := x.mem.Load()
	if t == nil {
		return x.st.LookupPostings(ctx, keys, fn)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.follow != nil {
		if err := t.sync(ctx, time.Now()); err != nil {
			return err
		}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.lookupMany(keys, fn)
}

// Journal notes (store.JournalBatch) carry the collapse signatures of the
// documents a batch adds and the ids a batch removes, so that every
// process's collapse table follows the others' writes:
//
//	'c' | uvarint len(params) | params (lsh.Params.String of the table) |
//	    n × (id uint64 LE | B × signature uint16 LE)
//	'x' | n × id uint64 LE
//
// A process whose table has other parameters ignores 'c' notes (and reads
// those documents from the store when a collapse meets them).

// noteAdded adds to b, if it is a journaled store's batch and the index
// has a collapser, the note of the signatures of docs (of each name, its
// last occurrence).
func (x *Index) noteAdded(b store.Batch, docs []*Doc) {
	jb, ok := b.(store.JournalBatch)
	c := x.collapser.Load()
	if !ok || c == nil {
		return
	}
	p := c.t.Params().String()
	note := append([]byte{'c'}, byte(len(p)))
	note = append(note, p...)
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[d.Name] = i
	}
	var sig []uint16
	for i, d := range docs {
		if last[d.Name] != i {
			continue
		}
		var err error
		if sig, err = c.t.Signature(sig[:0], d.Sketch.Values); err != nil {
			continue // too short for a signature: unknown to collapse
		}
		note = binary.LittleEndian.AppendUint64(note, ID(d.Name))
		for _, v := range sig {
			note = binary.LittleEndian.AppendUint16(note, v)
		}
	}
	jb.Note(note)
}

// noteRemoved adds to b, if it is a journaled store's batch, the note of
// the removed ids.
func (x *Index) noteRemoved(b store.Batch, ids []uint64) {
	jb, ok := b.(store.JournalBatch)
	if !ok || len(ids) == 0 {
		return
	}
	note := []byte{'x'}
	for _, id := range ids {
		note = binary.LittleEndian.AppendUint64(note, id)
	}
	jb.Note(note)
}

// applyNote applies a journal note to the collapse table, if any.
func (x *Index) applyNote(note []byte) error {
	c := x.collapser.Load()
	if c == nil || len(note) == 0 {
		return nil
	}
	bad := fmt.Errorf("%w: journal note of %d bytes", ErrCorrupt, len(note))
	switch note[0] {
	case 'c':
		if len(note) < 2 || len(note) < 2+int(note[1]) {
			return bad
		}
		if string(note[2:2+int(note[1])]) != c.t.Params().String() {
			return nil
		}
		b := c.t.Params().B
		rest := note[2+int(note[1]):]
		if len(rest)%(8+2*b) != 0 {
			return bad
		}
		sig := make([]uint16, b)
		for ; len(rest) > 0; rest = rest[8+2*b:] {
			for j := range sig {
				sig[j] = binary.LittleEndian.Uint16(rest[8+2*j:])
			}
			c.putSignature(binary.LittleEndian.Uint64(rest), sig)
		}
	case 'x':
		if (len(note)-1)%8 != 0 {
			return bad
		}
		for rest := note[1:]; len(rest) > 0; rest = rest[8:] {
			c.remove(binary.LittleEndian.Uint64(rest))
		}
	}
	return nil
}

// FollowJournal reads the journal's tail now, when the index follows one
// (LoadPostings on a shared store), and acknowledges it. Lookups do so
// anyway; a server that may stay idle calls it periodically (well within
// the store's expiry, say every few seconds) so that it keeps its place
// and the journal stays trimmed.
func (x *Index) FollowJournal(ctx context.Context) error { return x.followJournal(ctx) }

// followJournal reads the journal's tail, when the index follows one, so
// that what other processes committed before now is in memory.
func (x *Index) followJournal(ctx context.Context) error {
	if t := x.mem.Load(); t != nil && t.follow != nil {
		return t.sync(ctx, time.Now())
	}
	return nil
}
