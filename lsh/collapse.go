package lsh

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
)

// Collapsing near-duplicates out of a ranked result list (book 6.1): the
// Bing design kept, beside each document of the search index, 6
// supershingles of 16 bits each — 12 bytes — and at query time dropped
// from each result list every document that agreed with a better-ranked
// one on at least 4 of the 6. No posting table is involved: the list is
// short (tens to hundreds of results), so its members are compared with
// each other directly, and the only state is a small, fixed-size signature
// per document held in memory.

// Limits of a collapse table.
const (
	// MaxCollapseBands is the largest B of a CollapseTable.
	MaxCollapseBands = 8
	// MaxCollapseKeyBits is the widest supershingle value a CollapseTable
	// keeps.
	MaxCollapseKeyBits = 16
	// Unknown marks, in the result of CollapseTable.Collapse, an id the
	// table holds no signature for.
	Unknown = -1
)

// CollapseOptions configure ChooseCollapse. Only Threshold is required.
type CollapseOptions struct {
	// Threshold is the Jaccard similarity at and above which two results
	// should collapse, in (0, 1).
	Threshold float64
	// BudgetBytes bounds the signature bytes per document, B × 2. The
	// default is 12 (Bing's 6 × 16 bits); at most 16.
	BudgetBytes int
	// MaxSamples is the number of samples available per document (the
	// sketch's k). The default is 256.
	MaxSamples int
	// SampleBits is the width of b-bit samples (0: full samples); see
	// Params.SampleBits.
	SampleBits int
	// FPWeight and FNWeight weigh wrongly collapsed results (below the
	// threshold) against near-duplicates left in the list, as in
	// ChooseOptions. Defaults 0.5 each.
	FPWeight, FNWeight float64
	// Seed keys the supershingle hashes; it is copied into the result.
	Seed uint64
}

// ChooseCollapse picks the parameters of a CollapseTable for a threshold:
// Choose over every (r, b, m) with 16-bit supershingles and b × 2 bytes
// within the budget, minimizing the weighted false-positive and
// false-negative areas under the exact S-curve (Params.Prob, which counts
// the accidental agreement of 16-bit values). At the defaults it returns
// 6 supershingles, like Bing's, with r and m fitted to the threshold
// (threshold 0.8: r = 7, b = 6, m = 2, P(0.7) = 8%, P(0.85) = 62%).
func ChooseCollapse(o CollapseOptions) (Choice, error) {
	if o.BudgetBytes == 0 {
		o.BudgetBytes = 12
	}
	if o.BudgetBytes < 2 || o.BudgetBytes > 2*MaxCollapseBands {
		return Choice{}, fmt.Errorf("%w: collapse budget %d bytes, want 2..%d", ErrParams, o.BudgetBytes, 2*MaxCollapseBands)
	}
	return Choose(ChooseOptions{
		Threshold:   o.Threshold,
		FPWeight:    o.FPWeight,
		FNWeight:    o.FNWeight,
		BudgetBytes: o.BudgetBytes,
		MaxSamples:  o.MaxSamples,
		MaxBands:    MaxCollapseBands,
		MaxKeys:     MaxKeys, // no keys are made: only the bytes count
		KeyBits:     MaxCollapseKeyBits,
		SampleBits:  o.SampleBits,
		Seed:        o.Seed,
	})
}

// CollapseTable holds a signature of B supershingles of at most 16 bits per
// document id and collapses ranked lists of ids: a result is dropped when
// at least M of its B supershingles agree with those of a better-ranked
// kept result (book 6.1; lsh.Bing() is the book's 6 × 16 bits, 4 of 6).
// Two documents of Jaccard similarity J collapse with probability
// Params.Prob(J).
//
// The zero value is not usable; make one with NewCollapseTable. It is safe
// for concurrent use: Collapse, Missing, Has and Len share a read lock,
// Put and Remove take the write lock. Memory: a 32-bit tag of the id plus
// 2 × B bytes of signature per document (16 for B = 6, 14 for B = 5),
// plus under 4% of growth room and the bucket headers (Bytes reports it
// exactly). Two ids with the same tag (about n²/2^33 pairs among n ids:
// some 116 at a million) share one entry: the later Put wins, and the
// other id reads its signature. An owner that verifies the pairs the
// table proposes (CollapseFunc) still never collapses a wrong pair; one
// that does not may, for those few ids. Costs: Put and
// Remove O(log n + n/buckets) ≈ a binary search and a move of at most a
// few hundred entries; a lookup starts at the tag's place in its bucket
// (at most a few hundred ids, uniform over the bucket's range) and walks a
// cache line or two; Collapse of n ids is n lookups and at most n·kept
// signature comparisons of two words each, without allocating for n <= 256.
//
// The table is not a store: it lives in the memory of one process and is
// filled by its owner (package index) from the documents it adds and
// reads; the id of a document it has not seen is reported as Unknown, so
// the owner can fetch it (Missing) before collapsing.
type CollapseTable struct {
	p      Params
	scheme *Scheme
	mask   uint16

	mu      sync.RWMutex
	shift   uint     // bucket of an id = tag(id) >> shift
	buckets []bucket // len = 1 << (32 - shift)
	n       int
}

// bucket holds the entries whose tags share the table's top bits, sorted
// by tag: tags[i] has signature sigs[i*B : (i+1)*B].
type bucket struct {
	tags []uint32
	sigs []uint16
}

// tag is the 32 bits of a document id the table keeps: a mix of all 64
// (the finalizer of MurmurHash3), so ids that differ anywhere get
// different tags but for the chance 2^-32.
func tag(id uint64) uint32 {
	id ^= id >> 33
	id *= 0xff51afd7ed558ccd
	id ^= id >> 33
	id *= 0xc4ceb9fe1a85ec53
	id ^= id >> 33
	return uint32(id >> 32)
}

// Bucket sizes: a bucket is split (all of them, by one more bit) when the
// mean reaches splitAt, so buckets hold about splitAt/2..splitAt entries
// and at most a few times that.
const (
	splitAt        = 128
	initBucketBits = 4
	maxBucketBits  = 24
)

// NewCollapseTable returns an empty table for p, which must be valid with
// B <= MaxCollapseBands and KeyBits in 1..16 (0, meaning 64, is not
// allowed: the table keeps 16 bits per supershingle).
func NewCollapseTable(p Params) (*CollapseTable, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.B > MaxCollapseBands || p.KeyBits < 1 || p.KeyBits > MaxCollapseKeyBits {
		return nil, fmt.Errorf("%w: collapse table needs b <= %d and keybits in 1..%d, got %v", ErrParams, MaxCollapseBands, MaxCollapseKeyBits, p)
	}
	s, err := New(p)
	if err != nil {
		return nil, err
	}
	t := &CollapseTable{p: p, scheme: s, mask: uint16(1<<p.KeyBits - 1), shift: 32 - initBucketBits}
	t.buckets = make([]bucket, 1<<initBucketBits)
	return t, nil
}

// Params returns the table's parameters.
func (t *CollapseTable) Params() Params { return t.p }

// Signature appends the B supershingles of samples (at least R×B of them),
// truncated to KeyBits, to dst: what Put stores. No allocation when dst has
// room.
func (t *CollapseTable) Signature(dst []uint16, samples []uint64) ([]uint16, error) {
	var buf [MaxCollapseBands]uint64
	ss, err := t.scheme.Supershingles(buf[:0], samples)
	if err != nil {
		return dst, err
	}
	for _, v := range ss {
		dst = append(dst, uint16(v)&t.mask)
	}
	return dst, nil
}

// Put stores the signature of a document's samples under id, replacing
// any previous one. It fails (storing nothing) when samples holds fewer
// than R×B values.
func (t *CollapseTable) Put(id uint64, samples []uint64) error {
	var buf [MaxCollapseBands]uint16
	sig, err := t.Signature(buf[:0], samples)
	if err != nil {
		return err
	}
	t.PutSignature(id, sig)
	return nil
}

// PutSignature stores sig (B values, as made by Signature) under id,
// replacing any previous one. It panics if len(sig) != B.
func (t *CollapseTable) PutSignature(id uint64, sig []uint16) {
	b := t.p.B
	if len(sig) != b {
		panic(fmt.Sprintf("lsh: signature of %d values, want %d", len(sig), b))
	}
	tg := tag(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	bk := &t.buckets[tg>>t.shift]
	i, found := slices.BinarySearch(bk.tags, tg)
	if found {
		for j, v := range sig {
			bk.sigs[i*b+j] = v & t.mask
		}
		return
	}
	bk.tags = insert(bk.tags, i, tg, 1)
	bk.sigs = insert(bk.sigs, i*b, 0, b)
	for j, v := range sig {
		bk.sigs[i*b+j] = v & t.mask
	}
	t.n++
	if t.n >= splitAt<<(32-t.shift) && t.shift > 32-maxBucketBits {
		t.split()
	}
}

// insert opens n places at i in s, filled with v, growing its capacity by
// a 32nd (at least 4 entries) rather than doubling it: buckets are small,
// so a grow copies little, and the room left unused stays under 4%.
func insert[T any](s []T, i int, v T, n int) []T {
	if len(s)+n > cap(s) {
		c := len(s) + n + max(4*n, len(s)/32)
		ns := make([]T, len(s), c)
		copy(ns, s)
		s = ns
	}
	s = s[:len(s)+n]
	copy(s[i+n:], s[i:])
	for j := i; j < i+n; j++ {
		s[j] = v
	}
	return s
}

// split doubles the buckets, cutting each sorted bucket at its next id
// bit. Cost O(n) copying, amortized O(1) per Put.
func (t *CollapseTable) split() {
	b := t.p.B
	shift := t.shift - 1
	nb := make([]bucket, 2*len(t.buckets))
	for i, bk := range t.buckets {
		cut, _ := slices.BinarySearch(bk.tags, (uint32(2*i)+1)<<shift)
		nb[2*i] = bucket{tags: clip(bk.tags[:cut]), sigs: clip(bk.sigs[:cut*b])}
		nb[2*i+1] = bucket{tags: clip(bk.tags[cut:]), sigs: clip(bk.sigs[cut*b:])}
	}
	t.buckets, t.shift = nb, shift
}

// clip copies s into a slice with room for a 32nd more.
func clip[T any](s []T) []T {
	c := make([]T, len(s), len(s)+len(s)/32)
	copy(c, s)
	return c
}

// Remove deletes the signature of id and reports whether there was one.
func (t *CollapseTable) Remove(id uint64) bool {
	b := t.p.B
	tg := tag(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	bk := &t.buckets[tg>>t.shift]
	i, found := slices.BinarySearch(bk.tags, tg)
	if !found {
		return false
	}
	bk.tags = slices.Delete(bk.tags, i, i+1)
	bk.sigs = slices.Delete(bk.sigs, i*b, (i+1)*b)
	t.n--
	return true
}

// lookup returns the signature of id (aliasing the table; read lock
// held).
func (t *CollapseTable) lookup(id uint64) ([]uint16, bool) {
	tg := tag(id)
	bk := &t.buckets[tg>>t.shift]
	i, found := t.search(bk.tags, tg)
	if !found {
		return nil, false
	}
	b := t.p.B
	return bk.sigs[i*b : (i+1)*b : (i+1)*b], true
}

// search finds tg in the sorted tags of its bucket. Tags are uniform over
// the bucket's range, so it starts where tg's place in the range puts it
// and walks from there: a cache line or two, where a binary search of a
// bucket of a hundred tags touches four or more.
func (t *CollapseTable) search(tags []uint32, tg uint32) (int, bool) {
	n := len(tags)
	if n == 0 {
		return 0, false
	}
	low := uint64(tg) & (1<<t.shift - 1) // position within the bucket's range
	i := int(low * uint64(n) >> t.shift)
	for i > 0 && tags[i] > tg {
		i--
	}
	for i < n && tags[i] < tg {
		i++
	}
	return i, i < n && tags[i] == tg
}

// Get appends the signature of id to dst and reports whether there is one.
func (t *CollapseTable) Get(dst []uint16, id uint64) ([]uint16, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	sig, ok := t.lookup(id)
	return append(dst, sig...), ok
}

// Has reports whether the table holds a signature for id.
func (t *CollapseTable) Has(id uint64) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, ok := t.lookup(id)
	return ok
}

// Missing appends to dst the ids (in their order, each once) that the table
// holds no signature for: what an owner fetches from its store before
// Collapse.
func (t *CollapseTable) Missing(dst, ids []uint64) []uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	start := len(dst)
	for _, id := range ids {
		if _, ok := t.lookup(id); !ok && !slices.Contains(dst[start:], id) {
			dst = append(dst, id)
		}
	}
	return dst
}

// Len returns the number of documents in the table.
func (t *CollapseTable) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.n
}

// Bytes returns the memory the table holds: the capacity of every bucket's
// id and signature arrays plus the bucket headers.
func (t *CollapseTable) Bytes() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := len(t.buckets) * 48 // two slice headers
	for _, bk := range t.buckets {
		n += 4*cap(bk.tags) + 2*cap(bk.sigs)
	}
	return n
}

// Match reports whether two signatures agree on at least M of their B
// values: whether the documents collapse.
func (t *CollapseTable) Match(a, b []uint16) bool {
	return t.matchPacked(t.pack(a), t.pack(b))
}

// Collapse appends to dst, for each ids[i] of a ranked list (best first),
// the index of the result it collapses into:
//
//   - i itself when ids[i] is kept: no better-ranked kept result matches it;
//   - j < i when ids[i] is dropped: ids[j] is the best-ranked kept result
//     whose signature agrees with ids[i]'s on at least M of B values (or
//     the same id, listed twice);
//   - Unknown when the table holds no signature for ids[i]; such a result
//     is kept and compared with nothing.
//
// A dropped result never represents another, so groups do not chain: every
// dropped result matches its representative directly. The result is
// dst[len(dst)-len(ids):]. No allocation for up to 256 ids when dst has
// room.
func (t *CollapseTable) Collapse(dst []int, ids []uint64) []int {
	dst, _ = t.CollapseFunc(dst, ids, nil)
	return dst
}

// CollapseFunc is Collapse with a second opinion: when the signatures of
// ids[i] and a kept ids[j] match, ids[i] collapses into ids[j] only if
// verify(i, j) also says so (for example a full-sketch or exact Jaccard
// check against the threshold); otherwise the next kept result is tried.
// The same id listed twice collapses without verification. With a verify
// that accepts only pairs at or above a threshold, every collapsed pair is
// such a pair, and the table's parameters can favour recall (candidates
// below the threshold cost a verification, not a wrong answer). An error
// from verify stops the collapse and is returned. verify may be nil.
func (t *CollapseTable) CollapseFunc(dst []int, ids []uint64, verify func(i, j int) (bool, error)) ([]int, error) {
	var sigBuf [256 * MaxCollapseBands]uint16
	var hasBuf [256]bool
	sigs, has := t.Signatures(sigBuf[:0], hasBuf[:0], ids)
	return t.CollapseSignatures(dst, ids, sigs, has, verify)
}

// Signatures appends to sigs the signature of each of ids (B values; B
// zeros for an id the table holds none for) and to has whether it holds
// one, reading the table once under its read lock: what an owner reads
// before it fetches the unknown ids (Missing's answer is the false has)
// and collapses with CollapseSignatures.
func (t *CollapseTable) Signatures(sigs []uint16, has []bool, ids []uint64) ([]uint16, []bool) {
	b := t.p.B
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, id := range ids {
		sig, ok := t.lookup(id)
		if !ok {
			sigs = append(sigs, make([]uint16, b)...) // b <= 8: no allocation
		} else {
			sigs = append(sigs, sig...)
		}
		has = append(has, ok)
	}
	return sigs, has
}

// packed is a signature of up to 8 values of 16 bits in two words, so
// that a comparison of two is a few word operations.
type packed [2]uint64

func (t *CollapseTable) pack(sig []uint16) packed {
	var p packed
	for i, v := range sig {
		p[i>>2] |= uint64(v) << (16 * (i & 3))
	}
	return p
}

// equalLanes counts the 16-bit lanes of x that are zero: a lane's high
// bit after (lane & 0x7fff) + 0x7fff, or-ed with the lane, is set exactly
// when the lane is not zero (no carry crosses lanes).
func equalLanes(x uint64) int {
	const low, high = 0x7fff7fff7fff7fff, 0x8000800080008000
	nonzero := ((x & low) + low | x) & high
	return bits.OnesCount64(^nonzero & high)
}

// matchPacked is Match over packed signatures; lanes past B are zero in
// both and counted equal, so they are taken off.
func (t *CollapseTable) matchPacked(a, b packed) bool {
	return equalLanes(a[0]^b[0])+equalLanes(a[1]^b[1])-(8-t.p.B) >= t.p.M
}

// packAll packs the signatures of n ids (B values each) into dst.
func (t *CollapseTable) packAll(dst []packed, sigs []uint16, n int) []packed {
	b := t.p.B
	for i := range n {
		dst = append(dst, t.pack(sigs[i*b:(i+1)*b]))
	}
	return dst
}

// MatchingPairs calls fn(i, j), j < i, for every pair of signatures (as
// Signatures reads them, has[i] and has[j] true) that agree on at least M
// of B values: the pairs a collapse of the list may propose (CollapseFunc
// asks about a subset of them). An owner that verifies pairs against a
// store fetches their documents at once with it. No allocation for up to
// 256 signatures.
func (t *CollapseTable) MatchingPairs(sigs []uint16, has []bool, fn func(i, j int)) {
	var buf [256]packed
	ps := t.packAll(buf[:0], sigs, len(has))
	for i := range ps {
		if !has[i] {
			continue
		}
		for j := range i {
			if has[j] && t.matchPacked(ps[i], ps[j]) {
				fn(i, j)
			}
		}
	}
}

// CollapseSignatures is CollapseFunc over the signatures sigs and has of
// ids that the caller read with Signatures (has[i] false: ids[i] is
// Unknown); the table itself is not read, so what the caller fetched and
// verified and what collapses are the same signatures.
func (t *CollapseTable) CollapseSignatures(dst []int, ids []uint64, sigs []uint16, has []bool, verify func(i, j int) (bool, error)) ([]int, error) {
	var keptBuf [256]int32
	var packBuf [256]packed
	kept := keptBuf[:0]
	if len(ids) > 256 {
		kept = make([]int32, 0, len(ids))
	}
	ps := t.packAll(packBuf[:0], sigs, len(ids))
	start := len(dst)
	for i := range ids {
		if !has[i] {
			dst = append(dst, Unknown)
		} else {
			dst = append(dst, i)
		}
	}
	out := dst[start:]
	for i, id := range ids {
		if out[i] == Unknown {
			continue
		}
		for _, j := range kept {
			if ids[j] == id {
				out[i] = int(j)
				break
			}
			if !t.matchPacked(ps[i], ps[j]) {
				continue
			}
			if verify != nil {
				ok, err := verify(i, int(j))
				if err != nil {
					return dst, err
				}
				if !ok {
					continue
				}
			}
			out[i] = int(j)
			break
		}
		if out[i] == i {
			kept = append(kept, int32(i))
		}
	}
	return dst, nil
}
