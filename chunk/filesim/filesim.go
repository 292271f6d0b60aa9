// Package filesim provides file-similarity sketches over chunk streams and an
// inverted index that ranks similar files, after Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book) section 6.2 (the Remote
// Differential Compression file-similarity scheme).
//
// A file is represented by the set of its chunks' strong hashes (package
// chunk), each chunk a feature whose ID is the first 8 bytes of its hash.
// An unweighted consistent sampler (package sample; min-hash by default)
// draws k samples of that set, so sample i of two files agrees with
// probability equal to the Jaccard similarity of their chunk sets. Each
// sample is then reduced to b bits by a pseudo-random remix keyed by the
// sample value and its position, so unrelated samples collide with
// probability 2^-b and the estimate is J = (2^b Q - 1)/(2^b - 1) for a
// fraction Q of matching positions (book 2.4). The RDC preset is the book's
// 12 samples × 6 bits (9 bytes per file); Large is 128 × 8 bits. The Index
// keeps one inverted index per sample position (value -> files) and ranks
// candidates by the number of matching positions, as the book merges the
// twelve posting lists into lists of files with 1, 2, ..., 12 features in
// common.
//
// Estimates from 12 samples have a standard error near 0.14, so the Index
// only proposes candidates; Groups (similar files of a whole tree, joined
// into connected components) and Similar (the files closest to one) confirm
// them with ExactJaccard on the chunk lists; Summarize gives a tree's
// chunk-level account (what a store of distinct chunks keeps, which files
// are identical). This package does not read files or cut chunks (package
// chunk does).
package filesim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// Params says how file sketches are made. Sketches are comparable only when
// their Params are equal.
type Params struct {
	// Algorithm is the unweighted sampler (package sample). The default
	// (zero) is sketch.MinHash.
	Algorithm sketch.Algorithm
	// K is the number of samples. The default is 12.
	K int
	// Bits is the number of bits kept per sample, 1 to 64. The default is 6.
	Bits int
	// Seed selects the random functions. The default is 0.
	Seed uint64
}

// Presets.
var (
	// RDC is the book's preset: 12 min-hash samples of 6 bits.
	RDC = Params{Algorithm: sketch.MinHash, K: 12, Bits: 6}
	// Large is 128 one-permutation-hashing samples of 8 bits, for finer
	// estimates (standard error about 0.045).
	Large = Params{Algorithm: sketch.OPH, K: 128, Bits: 8}
)

// ErrParams reports invalid Params; ErrMismatch a comparison of sketches
// made with different Params.
var (
	ErrParams   = errors.New("filesim: invalid parameters")
	ErrMismatch = errors.New("filesim: sketches made with different parameters")
)

func (p Params) withDefaults() Params {
	if p.Algorithm == sketch.Invalid {
		p.Algorithm = sketch.MinHash
	}
	if p.K == 0 {
		p.K = 12
	}
	if p.Bits == 0 {
		p.Bits = 6
	}
	return p
}

// Sketch is a file's similarity sketch: K values of Bits bits each (empty
// for an empty file). A plain value, safe for concurrent reads.
type Sketch struct {
	Params Params
	Values []uint64
}

// Sketcher makes sketches. The zero value is not usable; make one with
// NewSketcher. Not safe for concurrent use (it reuses buffers).
type Sketcher struct {
	p    Params
	s    sample.Sampler
	fs   []feature.Feature
	vals []uint64
}

// NewSketcher returns a Sketcher for p (zero fields take their defaults).
func NewSketcher(p Params) (*Sketcher, error) {
	p = p.withDefaults()
	if p.Bits < 1 || p.Bits > 64 {
		return nil, fmt.Errorf("%w: bits %d not in [1, 64]", ErrParams, p.Bits)
	}
	if p.Algorithm.IsSet() || p.Algorithm.IsWeighted() {
		return nil, fmt.Errorf("%w: %v is not a slot-wise unweighted sampler", ErrParams, p.Algorithm)
	}
	s, err := sample.New(sample.Config{Algorithm: p.Algorithm, K: p.K, Seed: p.Seed})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParams, err)
	}
	return &Sketcher{p: p, s: s}, nil
}

// Params returns the parameters in effect.
func (s *Sketcher) Params() Params { return s.p }

const remixKey = 0x66696c6573696d // "filesim"

// Sketch returns the sketch of a file's chunk list. Cost: one sampler pass
// over the chunks plus K hashes; the result is newly allocated.
func (s *Sketcher) Sketch(chunks []chunk.Ref) Sketch {
	s.fs = s.fs[:0]
	for _, c := range chunks {
		s.fs = append(s.fs, feature.Feature{ID: c.Sum.Short(), Weight: 1})
	}
	s.vals = s.s.Sketch(s.vals[:0], s.fs)
	out := Sketch{Params: s.p, Values: make([]uint64, len(s.vals))}
	for i, v := range s.vals {
		if s.p.Bits < 64 {
			// The book's "6 new bits chosen with a pseudo-random
			// generator seeded with the fingerprint of the chunk".
			v = rng.Hash2(s.p.Seed^remixKey, v, uint64(i)) & (1<<s.p.Bits - 1)
		}
		out.Values[i] = v
	}
	return out
}

// Estimate returns the estimated Jaccard similarity of the chunk sets of
// two files, J = (2^b Q - 1)/(2^b - 1) clamped to [0, 1], from the fraction
// Q of matching positions, and the number of matches.
func Estimate(a, b Sketch) (j float64, matches int, err error) {
	if a.Params != b.Params {
		return 0, 0, ErrMismatch
	}
	if len(a.Values) == 0 || len(b.Values) == 0 {
		if len(a.Values) == len(b.Values) {
			return 1, 0, nil
		}
		return 0, 0, nil
	}
	for i, v := range a.Values {
		if v == b.Values[i] {
			matches++
		}
	}
	return fromMatches(matches, len(a.Values), a.Params.Bits), matches, nil
}

func fromMatches(m, k, bits int) float64 {
	q := float64(m) / float64(k)
	if bits >= 64 {
		return q
	}
	p := chance(bits)
	return math.Max(0, math.Min(1, (q-p)/(1-p)))
}

// chance is the probability that two unrelated samples agree after the
// reduction to b bits: 2^-b.
func chance(b int) float64 { return math.Ldexp(1, -b) }

// MatchProb returns the probability that one sample position of two files
// agrees when their chunk sets have Jaccard similarity j: the samples agree
// with probability j, and unrelated samples reduced to Bits bits collide
// with probability 2^-Bits, so j + (1-j)·2^-Bits — the book's (63p+1)/64
// for the RDC preset's 6 bits (section 6.2). Estimate inverts it. Zero
// fields of p take their defaults.
func MatchProb(p Params, j float64) float64 {
	p = p.withDefaults()
	if p.Bits >= 64 {
		return j
	}
	return j + (1-j)*chance(p.Bits)
}

// CandidateProb returns the probability that two files whose chunk sets
// have Jaccard similarity j agree in at least m of the K sample positions,
// the number an Index query (minMatches) or Groups (MinMatches) asks for:
// the binomial tail P(Bin(K, MatchProb(p, j)) ≥ m). It assumes independent
// positions, as min-hashing's K hash functions give (the RDC preset); for
// one-permutation hashing (Large) it is an approximation. Zero fields of p
// take their defaults.
func CandidateProb(p Params, j float64, m int) float64 {
	p = p.withDefaults()
	q := MatchProb(p, j)
	m = max(m, 0)
	if m > p.K {
		return 0
	}
	tail := 0.0
	for i := p.K; i >= m; i-- { // smallest terms first
		lc, _ := math.Lgamma(float64(p.K + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(p.K - i + 1))
		tail += math.Exp(lc-li-lr) * math.Pow(q, float64(i)) * math.Pow(1-q, float64(p.K-i))
	}
	return math.Min(tail, 1)
}

// ExactJaccard returns the Jaccard similarity of the sets of chunk hashes of
// two chunk lists (1 for two empty lists), by sketch.ExactJaccard over
// their sorted short hashes. Cost: O(n log n), allocates.
func ExactJaccard(a, b []chunk.Ref) float64 {
	return sketch.ExactJaccard(shortSet(a), shortSet(b))
}

func shortSet(rs []chunk.Ref) []uint64 {
	s := make([]uint64, len(rs))
	for i, r := range rs {
		s[i] = r.Sum.Short()
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// Index is a set of inverted indices, one per sample position, from sample
// value to the files whose sketch has that value there. The zero value is
// not usable; make one with NewIndex. Not safe for concurrent use; Query may
// run concurrently with other Queries but not with Add.
type Index struct {
	p     Params
	posts []map[uint64][]int32
	n     int
}

// NewIndex returns an empty index for sketches made with p.
func NewIndex(p Params) *Index {
	p = p.withDefaults()
	ix := &Index{p: p, posts: make([]map[uint64][]int32, p.K)}
	for i := range ix.posts {
		ix.posts[i] = make(map[uint64][]int32)
	}
	return ix
}

// Len returns the number of sketches added.
func (ix *Index) Len() int { return ix.n }

// Add indexes s and returns its id (0, 1, 2, ... in order of addition).
// Empty sketches get an id but are never returned by Query. Cost: O(K).
func (ix *Index) Add(s Sketch) (int, error) {
	if s.Params != ix.p {
		return 0, ErrMismatch
	}
	id := ix.n
	ix.n++
	for i, v := range s.Values {
		ix.posts[i][v] = append(ix.posts[i][v], int32(id))
	}
	return id, nil
}

// Match is a candidate returned by Query.
type Match struct {
	ID      int
	Matches int     // matching sample positions
	J       float64 // estimated Jaccard similarity
}

// Query returns the indexed files sharing at least minMatches sample
// positions with s (at least 1), most matches first (ties by id), at most
// limit of them (all if limit <= 0). Cost: proportional to the posting
// lists read; allocates the result and a count table.
func (ix *Index) Query(s Sketch, minMatches, limit int) ([]Match, error) {
	if s.Params != ix.p {
		return nil, ErrMismatch
	}
	minMatches = max(minMatches, 1)
	counts := make(map[int32]int)
	for i, v := range s.Values {
		for _, id := range ix.posts[i][v] {
			counts[id]++
		}
	}
	var out []Match
	for id, c := range counts {
		if c >= minMatches {
			out = append(out, Match{ID: int(id), Matches: c, J: fromMatches(c, ix.p.K, ix.p.Bits)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Matches != out[j].Matches {
			return out[i].Matches > out[j].Matches
		}
		return out[i].ID < out[j].ID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
