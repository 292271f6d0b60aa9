package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/neardup/neardup/identity"
)

// The exact-fingerprint table: every document added with an identity
// fingerprint is posted under idKey(fingerprint), in the same atomic batch
// as its record (which holds the fingerprint, so that replacing or
// removing the document removes that posting too), and the key is added
// to a Bloom
// filter (bloom.go: cache-blocked, sized for false-positive rate
// Config.BloomFP at its capacity) that answers "never seen" without
// touching the store.
//
// The filter lives in memory and is recorded in the store's metadata by
// Flush. While the recorded filter is older than the postings, a marker
// (dirtyMeta) says so — it is written in the first batch of Adds after a
// Flush, atomically with the postings — and whoever opens the index next
// rebuilds the filter from the records. A filter is sized when it is made:
// by the first Flush or lookup, for four times the fingerprints known then
// (at least minFilter); a Flush that finds it over capacity rebuilds it
// four times larger. So a false negative is impossible and a false
// positive costs one posting lookup.
const (
	filterMeta = "neardup.index.fingerprints"
	dirtyMeta  = "neardup.index.fingerprints.dirty"
	// legacyFilterMeta is the filter earlier releases' dedup kept beside
	// fingerprint postings its records did not hold; it is not read (those
	// postings cannot be trusted: a replaced document left its own behind),
	// and Check with repair deletes it.
	legacyFilterMeta = "neardup.dedup.fingerprints.bloom"

	// The filter's formats: version 1 holds a classic filter
	// (bits-and-blooms/bloom), which earlier releases recorded and a rate
	// under about 7e-8 still makes; version 2 a blocked one (blockBloom);
	// version 3 (filterChunked, filterchunks.go) is the head of either
	// recorded in chunks, past filterChunkBytes.
	filterClassic = 1
	filterBlocked = 2
	minFilter     = 1 << 16
)

// filter is the Bloom filter state. Its methods run under Index.wmu
// (writers) or its own mutex (lookups).
type filter struct {
	mu       sync.Mutex
	loaded   bool
	bf       fpFilter // nil until made
	capacity uint     // fingerprints bf was sized for
	pending  []uint64 // fingerprints added before bf is made
	n        uint64   // fingerprints added (with repeats)
	marked   bool     // dirtyMeta is in the store
	marking  bool     // dirtyMeta is in the batch being committed
}

// load reads the recorded filter, or rebuilds it when the marker says the
// recorded one is stale. Called with f.mu held.
func (f *filter) load(ctx context.Context, x *Index) error {
	if f.loaded {
		return nil
	}
	_, dirty, err := x.st.Meta(ctx, dirtyMeta, nil)
	if err != nil {
		return fmt.Errorf("index: reading the fingerprint filter: %w", err)
	}
	if dirty {
		if err := f.rebuild(ctx, x, 0); err != nil {
			return err
		}
		f.marked, f.loaded = true, true
		return nil
	}
	raw, ok, err := x.st.Meta(ctx, filterMeta, nil)
	if err != nil {
		return fmt.Errorf("index: reading the fingerprint filter: %w", err)
	}
	if ok {
		if raw, err = readFilterValue(ctx, x.st, raw); err != nil {
			return fmt.Errorf("index: reading the fingerprint filter: %w", err)
		}
		if err := f.decode(raw); err != nil {
			return err
		}
	}
	f.loaded = true
	return nil
}

func (f *filter) decode(raw []byte) error {
	bad := fmt.Errorf("%w: fingerprint filter", ErrCorrupt)
	if len(raw) < 1 || (raw[0] != filterClassic && raw[0] != filterBlocked) {
		return bad
	}
	v := raw[0]
	raw = raw[1:]
	capacity, w := binary.Uvarint(raw)
	if w <= 0 {
		return bad
	}
	raw = raw[w:]
	n, w := binary.Uvarint(raw)
	if w <= 0 {
		return bad
	}
	bf, err := decodeFilter(v, raw[w:])
	if err != nil {
		return fmt.Errorf("%w: %v", bad, err)
	}
	f.bf, f.capacity, f.n = bf, uint(capacity), n
	return nil
}

func (f *filter) encode() ([]byte, error) {
	b := []byte{f.bf.version()}
	b = binary.AppendUvarint(b, uint64(f.capacity))
	b = binary.AppendUvarint(b, f.n)
	return f.bf.appendData(b)
}

// rebuild makes a filter from the fingerprints of every record, sized for
// four times their number (at least want). Called with f.mu held.
func (f *filter) rebuild(ctx context.Context, x *Index, want uint) error {
	var fps []uint64
	err := x.st.ScanDocs(ctx, func(_ uint64, rec []byte) error {
		if v, err := parse(rec); err == nil && v.flags&recIdentity != 0 {
			fps = append(fps, idKey(v.id))
		}
		return nil // Check reports what does not parse
	})
	if err != nil {
		return fmt.Errorf("index: rebuilding the fingerprint filter: %w", err)
	}
	f.make(x, max(want, uint(4*len(fps))), fps)
	f.n = uint64(len(fps))
	return nil
}

// make replaces the filter by an empty one of the given capacity holding
// fps and the pending fingerprints.
func (f *filter) make(x *Index, capacity uint, fps []uint64) {
	f.capacity = max(capacity, minFilter)
	f.bf = newFPFilter(f.capacity, x.cfg.BloomFP)
	f.bf.add(fps...)
	f.bf.add(f.pending...)
	f.pending = nil
}

// add inserts the fingerprints of a batch being built into the filter, and
// puts the marker into the batch unless the store has it. Called with
// Index.wmu held.
func (f *filter) add(ctx context.Context, x *Index, b interface{ PutMeta(string, []byte) }, fps []uint64) error {
	if len(fps) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.load(ctx, x); err != nil {
		return err
	}
	if f.bf != nil {
		f.bf.add(fps...)
	} else {
		f.pending = append(f.pending, fps...)
	}
	f.n += uint64(len(fps))
	if !f.marked {
		b.PutMeta(dirtyMeta, []byte{1})
		f.marking = true
	}
	return nil
}

// reset forgets the filter: the next use loads it again.
func (f *filter) reset() {
	f.mu.Lock()
	f.loaded, f.bf, f.capacity, f.pending, f.n, f.marked, f.marking = false, nil, 0, nil, 0, false, false
	f.mu.Unlock()
}

// committed and failed follow the commit of a batch add prepared.
func (f *filter) committed() {
	f.mu.Lock()
	if f.marking {
		f.marked, f.marking = true, false
	}
	f.mu.Unlock()
}

func (f *filter) failed() {
	f.mu.Lock()
	f.marking = false // the extra fingerprints only cost false positives
	f.mu.Unlock()
}

// flush records the filter and removes the marker. Called with Index.wmu
// held.
func (f *filter) flush(ctx context.Context, x *Index) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.loaded || !f.marked {
		return nil // nothing added since the recorded filter
	}
	switch {
	case f.bf == nil:
		f.make(x, uint(4*len(f.pending)), nil)
	case f.n > uint64(f.capacity):
		if err := f.rebuild(ctx, x, uint(4*f.n)); err != nil {
			return err
		}
	}
	if err := f.record(ctx, x); err != nil {
		return fmt.Errorf("index: recording the fingerprint filter: %w", err)
	}
	f.marked = false
	return nil
}

// mayHold reports, for each fingerprint, whether the filter may hold it,
// appending the positions of the positives to dst.
func (f *filter) positives(ctx context.Context, x *Index, dst []int, fps []uint64) ([]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.load(ctx, x); err != nil {
		return dst, err
	}
	if f.bf == nil && len(f.pending) > 0 {
		f.make(x, uint(4*len(f.pending)), nil)
	}
	if f.bf == nil {
		return dst, nil // no fingerprint was ever added
	}
	for i, fp := range fps {
		if f.bf.test(fp) {
			dst = append(dst, i)
		}
	}
	return dst, nil
}

// FingerprintStats describe the work of one Identical call.
type FingerprintStats struct {
	// Bits and Probes are the filter's size m and number of probes k.
	Bits, Probes uint
	// Lookups is the number of fingerprints the filter passed on to the
	// store; FalsePositives the number of those with no posting at all.
	Lookups, FalsePositives int64
	// Unconfirmed is the number of stored documents posted under a
	// fingerprint's key whose record then did not confirm it (another
	// length or another 128 bits): not identical, left to near-duplicate
	// verification.
	Unconfirmed int64
}

// Identical looks up documents whose bodies are identical to others: for
// each i such that a stored document has the identity fingerprint fps[i]
// (package identity: length and 128 bits, made under this index's key)
// and its id is not skipped (skip may be nil), it calls fn(i, id, name)
// once, with the smallest such id, in increasing i. A posting counts only
// when the document's record carries that very fingerprint, length
// included; the 64-bit public fingerprints of records written before the
// identity key (Upgraded) never match. Cost: one filter test per
// fingerprint, then one multi-key posting lookup and one multi-key record
// lookup for the positives; fn's error stops the lookup.
func (x *Index) Identical(ctx context.Context, fps []identity.Fingerprint, skip func(id uint64) bool, fn func(i int, id uint64, name string) error) (FingerprintStats, error) {
	var st FingerprintStats
	keys := make([]uint64, len(fps))
	for i, f := range fps {
		keys[i] = idKey(f)
	}
	pos, err := x.fps.positives(ctx, x, nil, keys)
	if err != nil {
		return st, err
	}
	x.fps.mu.Lock()
	if x.fps.bf != nil {
		st.Bits, st.Probes = x.fps.bf.bits(), x.fps.bf.probes()
	}
	x.fps.mu.Unlock()
	if len(pos) == 0 {
		return st, nil
	}
	st.Lookups = int64(len(pos))
	pkeys := make([]uint64, len(pos))
	for j, i := range pos {
		pkeys[j] = keys[i]
	}
	cands := make([][]uint64, len(pos)) // ids posted under each positive's key
	var all []uint64
	err = x.st.LookupPostings(ctx, pkeys, func(j int, ids []uint64) error {
		if len(ids) == 0 {
			st.FalsePositives++
		}
		for _, id := range ids {
			if skip == nil || !skip(id) {
				cands[j] = append(cands[j], id)
				all = append(all, id)
			}
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("index: fingerprint lookup: %w", err)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	type entry struct {
		fp   identity.Fingerprint
		name string
	}
	recs := make(map[uint64]entry, len(all))
	err = x.lookupDocs(ctx, "reading identical documents", all, func(i int, rec []byte, ok bool) error {
		if !ok {
			return nil // removed since the posting was read
		}
		v, err := parse(rec)
		if err != nil {
			return fmt.Errorf("index: the record of id %016x: %w", all[i], err)
		}
		if v.flags&recIdentity != 0 {
			recs[all[i]] = entry{v.id, string(v.name)}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	for j, i := range pos {
		ids := cands[j]
		slices.Sort(ids)
		for _, id := range ids {
			e, ok := recs[id]
			if !ok {
				continue
			}
			if e.fp != fps[i] { // the confirmation: length and all 128 bits
				st.Unconfirmed++
				continue
			}
			if err := fn(i, id, e.name); err != nil {
				return st, err
			}
			break
		}
	}
	return st, nil
}
