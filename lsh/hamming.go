package lsh

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/neardup/neardup/internal/rng"
)

// Segments cuts bit sketches of Bits bits into MaxDist+1 nearly equal
// segments and hashes each into a 64-bit lookup key (book 2.5). Two sketches
// within Hamming distance MaxDist agree on at least one whole segment
// (pigeonhole: MaxDist differing bits cannot touch all MaxDist+1 segments),
// so they share at least one key. Use it to put bit sketches into a posting
// store; HammingIndex is the in-memory version. A Segments value is
// immutable once made by NewSegments and safe for concurrent use.
type Segments struct {
	bits, words, maxDist int
	bounds               []int    // segment j is bits [bounds[j], bounds[j+1])
	seeds                []uint64 // per segment
}

// NewSegments returns the segmenter for sketches of nbits bits (stored in
// ceil(nbits/64) little-endian words: bit i is word i/64, bit i%64) and
// distances up to maxDist. It needs maxDist+1 <= nbits; segments shorter than
// about 16 bits make each lookup return many candidates, so keep
// nbits/(maxDist+1) comfortably above log2 of the collection size.
func NewSegments(nbits, maxDist int, seed uint64) (*Segments, error) {
	if nbits < 1 || maxDist < 0 || maxDist+1 > nbits {
		return nil, fmt.Errorf("%w: %d-bit sketches with max distance %d", ErrParams, nbits, maxDist)
	}
	n := maxDist + 1
	s := &Segments{bits: nbits, words: (nbits + 63) / 64, maxDist: maxDist}
	s.bounds = make([]int, n+1)
	for j := 0; j <= n; j++ {
		s.bounds[j] = j * nbits / n
	}
	s.seeds = make([]uint64, n)
	for j := range s.seeds {
		s.seeds[j] = rng.Key(seed, 'h', uint64(nbits), uint64(n), uint64(j))
	}
	return s, nil
}

// Bits returns the sketch length in bits; Words the number of uint64 words.
func (s *Segments) Bits() int  { return s.bits }
func (s *Segments) Words() int { return s.words }

// MaxDist returns the largest distance for which lookups are complete.
func (s *Segments) MaxDist() int { return s.maxDist }

// NumKeys returns the number of segments (keys per sketch), MaxDist+1.
func (s *Segments) NumKeys() int { return len(s.seeds) }

// Keys appends the MaxDist+1 segment keys of sketch to dst. Key j is a hash
// of segment j's bits and j. Cost: O(words), no allocation when dst has room.
func (s *Segments) Keys(dst, sketch []uint64) ([]uint64, error) {
	if len(sketch) != s.words {
		return dst, fmt.Errorf("%w: %d words, want %d", ErrSketchLength, len(sketch), s.words)
	}
	for j, seed := range s.seeds {
		h := seed
		for lo, hi := s.bounds[j], s.bounds[j+1]; lo < hi; lo += 64 {
			h = rng.Hash(h, extract(sketch, lo, min(64, hi-lo)))
		}
		dst = append(dst, h)
	}
	return dst, nil
}

// extract returns n <= 64 bits of words starting at bit lo.
func extract(words []uint64, lo, n int) uint64 {
	w, off := lo/64, uint(lo%64)
	v := words[w] >> off
	if off != 0 && w+1 < len(words) {
		v |= words[w+1] << (64 - off)
	}
	if n < 64 {
		v &= 1<<uint(n) - 1
	}
	return v
}

// Hamming returns the number of differing bits of a and b, which must have
// the same length.
func Hamming(a, b []uint64) int {
	d := 0
	for i := range a {
		d += bits.OnesCount64(a[i] ^ b[i])
	}
	return d
}

// HammingMatch is one result of HammingIndex.Query.
type HammingMatch struct {
	ID       uint64
	Distance int
}

// HammingIndex finds all stored bit sketches within Hamming distance d of a
// query without scanning: each sketch is posted under its Segments keys,
// and a query verifies only the sketches sharing a key with it (book 2.5).
// Memory: the sketch words plus MaxDist+1 postings (about 12 bytes each) per
// sketch. The zero value is not usable; make one with NewHammingIndex. It is
// safe for concurrent use: Add and Remove lock exclusively, Query shares.
type HammingIndex struct {
	seg     *Segments
	mu      sync.RWMutex
	post    map[uint64][]int32
	ids     []uint64
	data    []uint64 // sketches, seg.words per slot
	removed []bool
	live    int
}

// NewHammingIndex returns an empty index for nbits-bit sketches answering
// queries up to distance maxDist.
func NewHammingIndex(nbits, maxDist int, seed uint64) (*HammingIndex, error) {
	seg, err := NewSegments(nbits, maxDist, seed)
	if err != nil {
		return nil, err
	}
	return &HammingIndex{seg: seg, post: make(map[uint64][]int32)}, nil
}

// Segments returns the index's segmenter.
func (x *HammingIndex) Segments() *Segments { return x.seg }

// Len returns the number of live sketches.
func (x *HammingIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Add stores a copy of sketch under id. Adding an id twice stores two
// entries, both returned by queries. Cost: O(words + MaxDist) amortized.
func (x *HammingIndex) Add(id uint64, sketch []uint64) error {
	var buf [64]uint64
	keys, err := x.seg.Keys(buf[:0], sketch)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	slot := int32(len(x.ids))
	x.ids = append(x.ids, id)
	x.data = append(x.data, sketch...)
	x.removed = append(x.removed, false)
	x.live++
	for _, k := range keys {
		x.post[k] = append(x.post[k], slot)
	}
	return nil
}

// Remove deletes every entry stored under id and reports how many there
// were. Cost: O(number of entries) (a scan of ids; removal is rare in
// near-duplicate workloads). Removed entries keep their memory.
func (x *HammingIndex) Remove(id uint64) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for i, v := range x.ids {
		if v == id && !x.removed[i] {
			x.removed[i] = true
			x.live--
			n++
		}
	}
	return n
}

// Query appends to dst every stored sketch within Hamming distance d of
// sketch (d <= MaxDist, else an error), ordered by distance then id; each
// entry at most once. Cost: MaxDist+1 lookups plus one distance computation
// per candidate sharing a segment; no scan of the collection.
func (x *HammingIndex) Query(dst []HammingMatch, sketch []uint64, d int) ([]HammingMatch, error) {
	if d < 0 || d > x.seg.maxDist {
		return dst, fmt.Errorf("%w: distance %d outside 0..%d", ErrParams, d, x.seg.maxDist)
	}
	var buf [64]uint64
	keys, err := x.seg.Keys(buf[:0], sketch)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	w := x.seg.words
	x.mu.RLock()
	for _, k := range keys {
		for _, slot := range x.post[k] {
			if x.removed[slot] {
				continue
			}
			if dist := Hamming(sketch, x.data[int(slot)*w:int(slot+1)*w]); dist <= d {
				// ID holds the slot until deduplication: an entry sharing
				// several segments with the query is found several times.
				dst = append(dst, HammingMatch{ID: uint64(slot), Distance: dist})
			}
		}
	}
	found := dst[start:]
	slices.SortFunc(found, func(a, b HammingMatch) int { return cmp.Compare(a.ID, b.ID) })
	found = slices.Compact(found)
	for i := range found {
		found[i].ID = x.ids[found[i].ID]
	}
	x.mu.RUnlock()
	slices.SortFunc(found, func(a, b HammingMatch) int {
		if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return dst[:start+len(found)], nil
}
