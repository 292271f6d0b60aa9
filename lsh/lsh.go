// Package lsh provides the keys under which near-duplicate documents collide:
// supershingles with the "at least m of b" rule, plain banding, the exact
// detection probability P(J) of any such scheme, a parameter chooser, and a
// Hamming-segment index for bit sketches (SimHash, b-bit minhash).
//
// A sketch of k consistent samples agrees with another in each position with
// probability J, their Jaccard similarity (Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book) ch. 2.4, 3). A
// supershingle hashes r consecutive samples into one value, so two documents
// share it with probability p = J^r; a document gets b supershingles, and it
// is a candidate near-duplicate of another when at least m of the b agree
// (book 2.5, 3.1, 6.1). Instead of comparing supershingles pairwise, every
// one of the C(b, m) ways of choosing m of the b bands is hashed into a
// 64-bit lookup key, so "at least m of b agree" becomes "some key is equal":
// a plain hash lookup in a posting table (AltaVista's 15 pair tables, Bing's
// 15 quadruple tables). With m = 1 this is ordinary LSH banding. The
// probability that a pair at similarity J becomes a candidate, P(J) = Σ_{i≥m}
// C(b,i) p^i (1−p)^{b−i}, is computed exactly by Scheme.Prob, and Choose
// picks (k, r, b, m) for a threshold by minimizing weighted false-positive
// and false-negative areas under that S-curve.
//
// For bit sketches compared by Hamming distance, HammingIndex splits a
// sketch into d+1 segments: by the pigeonhole principle two sketches within
// distance d agree exactly on at least one segment, so indexing each segment
// finds all of them without a scan (book 2.5; Manku, Jain and Das Sarma's
// permuted tables are the same idea with more, shorter tables).
//
// This package is not an index of documents: it only turns samples into
// keys; storing keys and verifying candidates is the job of the index and
// store packages. Keys are pure functions of (Params, samples) and are frozen
// by golden vectors: an index written today stays valid after an upgrade.
package lsh

import (
	"errors"
	"fmt"
	"math"

	"github.com/neardup/neardup/internal/rng"
)

// Limits on a scheme's shape.
const (
	// MaxBands is the largest number of supershingles per document.
	MaxBands = 64
	// MaxKeys is the largest number C(b, m) of lookup keys per document.
	MaxKeys = 1 << 14
)

// Errors returned by this package.
var (
	ErrParams       = errors.New("lsh: invalid parameters")
	ErrShortSketch  = errors.New("lsh: sketch has fewer samples than r*b")
	ErrSketchLength = errors.New("lsh: bit sketch has the wrong number of words")
)

// Params describe a supershingle scheme: b supershingles of r samples each,
// of which at least m must agree. The zero value is invalid; start from
// Banding, AltaVista, Bing or Choose.
type Params struct {
	// R is the number of samples hashed into one supershingle (rows per
	// band). Must be at least 1.
	R int
	// B is the number of supershingles (bands) per document, 1..MaxBands.
	B int
	// M is how many of the B supershingles must agree for a pair to become
	// a candidate, 1..B. M = 1 is plain banding. C(B, M) keys are made per
	// document and must not exceed MaxKeys.
	M int
	// KeyBits is the width of a stored supershingle value, 1..64; 0 means
	// 64. Narrow values (Bing used 16) save memory at the price of
	// accidental agreements with probability 2^-KeyBits, which Prob counts.
	KeyBits int
	// SampleBits is the width of the input samples when they are b-bit
	// samples (book 2.4), 1..64; 0 means full 64-bit samples. It does not
	// change the keys, only Prob: a b-bit sample agrees with probability
	// J + (1−J)/2^b.
	SampleBits int
	// Seed keys the supershingle and combination hashes. The default 0 is a
	// valid seed. Keys made with different seeds never match.
	Seed uint64
}

// Banding returns plain LSH banding: b bands of r samples, any one match.
func Banding(r, b int) Params { return Params{R: r, B: b, M: 1} }

// AltaVista returns the AltaVista scheme of book 2.5 and 6.1: 84 samples in
// 6 supershingles of 14 samples, 64-bit values, a candidate when at least 2
// of 6 agree; 15 pair keys. By the book's formula 1 − (1−p)^5 (1+5p) with
// p = J^14 (book 3.2), a pair is a candidate with probability 87.9% at
// J = 0.95 and 0.068% at J = 0.7 ("just under one in a thousand", as book
// 3.2 says); the prose of book 6.1 quotes 0.7% at J = 0.7, which is the
// probability of one supershingle, 0.7^14, not of 2 of 6.
func AltaVista() Params { return Params{R: 14, B: 6, M: 2, KeyBits: 64} }

// Bing returns the Microsoft Search scheme of book 6.1: 30 samples in 6
// supershingles of 5 samples, stored as 16-bit values (12 bytes per
// document), a candidate when at least 4 of 6 agree; 15 quadruple keys.
func Bing() Params { return Params{R: 5, B: 6, M: 4, KeyBits: 16} }

func (p Params) keyBits() int {
	if p.KeyBits == 0 {
		return 64
	}
	return p.KeyBits
}

func (p Params) sampleBits() int {
	if p.SampleBits == 0 {
		return 64
	}
	return p.SampleBits
}

// K returns the number of samples a sketch needs: R*B.
func (p Params) K() int { return p.R * p.B }

// NumKeys returns the number of lookup keys per document, C(B, M).
func (p Params) NumKeys() int { return int(math.Round(binomial(p.B, p.M))) }

// Bytes returns the bytes needed to store one document's supershingles,
// B × ceil(KeyBits/8): 12 for Bing, 48 for AltaVista. This is the book's
// measure of index memory per document (6.1). A posting store additionally
// holds NumKeys() postings of (8-byte key, doc id) per document.
func (p Params) Bytes() int { return p.B * ((p.keyBits() + 7) / 8) }

// String formats the parameters as "k=84 r=14 b=6 m=2 keybits=64".
func (p Params) String() string {
	s := fmt.Sprintf("k=%d r=%d b=%d m=%d keybits=%d", p.K(), p.R, p.B, p.M, p.keyBits())
	if p.SampleBits != 0 && p.SampleBits != 64 {
		s += fmt.Sprintf(" samplebits=%d", p.SampleBits)
	}
	return s
}

// Validate reports every problem with p at once, wrapped in ErrParams.
func (p Params) Validate() error {
	var errs []error
	if p.R < 1 {
		errs = append(errs, fmt.Errorf("r = %d, want >= 1", p.R))
	}
	if p.B < 1 || p.B > MaxBands {
		errs = append(errs, fmt.Errorf("b = %d, want 1..%d", p.B, MaxBands))
	}
	if p.M < 1 || p.M > p.B {
		errs = append(errs, fmt.Errorf("m = %d, want 1..b (b = %d)", p.M, p.B))
	} else if p.B <= MaxBands && binomial(p.B, p.M) > MaxKeys {
		errs = append(errs, fmt.Errorf("C(b, m) = C(%d, %d) keys, want <= %d", p.B, p.M, MaxKeys))
	}
	if p.KeyBits < 0 || p.KeyBits > 64 {
		errs = append(errs, fmt.Errorf("keybits = %d, want 0..64", p.KeyBits))
	}
	if p.SampleBits < 0 || p.SampleBits > 64 {
		errs = append(errs, fmt.Errorf("samplebits = %d, want 0..64", p.SampleBits))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrParams, errors.Join(errs...))
}

// Scheme makes supershingles and lookup keys for one Params. Build it once
// with New; it is immutable afterwards and safe for concurrent use by any
// number of goroutines. The zero value is not usable.
type Scheme struct {
	p         Params
	mask      uint64
	bandSeed  []uint64 // per band
	comboSeed []uint64 // per combination
	combos    []uint8  // NumKeys × M band indices, lexicographic order
}

// New validates p and precomputes its seeds and combination table.
// Cost: O(C(b, m) · m).
func New(p Params) (*Scheme, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &Scheme{p: p, mask: ^uint64(0)}
	if kb := p.keyBits(); kb < 64 {
		s.mask = 1<<kb - 1
	}
	s.bandSeed = make([]uint64, p.B)
	for i := range s.bandSeed {
		s.bandSeed[i] = rng.Key(p.Seed, 'b', uint64(p.R), uint64(i))
	}
	n := p.NumKeys()
	s.combos = make([]uint8, 0, n*p.M)
	idx := make([]uint8, p.M)
	for i := range idx {
		idx[i] = uint8(i)
	}
	for {
		s.combos = append(s.combos, idx...)
		// advance to the next m-combination of b in lexicographic order
		i := p.M - 1
		for i >= 0 && int(idx[i]) == p.B-p.M+i {
			i--
		}
		if i < 0 {
			break
		}
		idx[i]++
		for j := i + 1; j < p.M; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
	s.comboSeed = make([]uint64, n)
	for c := range s.comboSeed {
		s.comboSeed[c] = rng.Key(p.Seed, 'c', uint64(p.B), uint64(p.M), uint64(c))
	}
	return s, nil
}

// MustNew is New for parameters known to be valid (presets); it panics on
// invalid parameters.
func MustNew(p Params) *Scheme {
	s, err := New(p)
	if err != nil {
		panic(err)
	}
	return s
}

// Params returns the scheme's parameters.
func (s *Scheme) Params() Params { return s.p }

// NumKeys returns C(b, m), the number of keys Keys appends per document.
func (s *Scheme) NumKeys() int { return len(s.comboSeed) }

// Combination returns the band indices of key number c (0 <= c < NumKeys)
// in increasing order, for explaining which supershingles collided. The
// returned slice aliases the scheme's table: do not modify it.
func (s *Scheme) Combination(c int) []uint8 {
	return s.combos[c*s.p.M : (c+1)*s.p.M : (c+1)*s.p.M]
}

// Supershingles appends the b supershingles of samples to dst: value i is a
// hash of samples[i*r:(i+1)*r], truncated to KeyBits. samples must hold at
// least r*b values (extra ones are ignored). Cost: about 2 ns per sample, no
// allocation when dst has room.
func (s *Scheme) Supershingles(dst, samples []uint64) ([]uint64, error) {
	r, b := s.p.R, s.p.B
	if len(samples) < r*b {
		return dst, fmt.Errorf("%w: %d samples, need %d", ErrShortSketch, len(samples), r*b)
	}
	for i := 0; i < b; i++ {
		dst = append(dst, s.band(i, samples[i*r:(i+1)*r]))
	}
	return dst, nil
}

// band returns supershingle i of a document: a hash of its r samples,
// truncated to KeyBits.
func (s *Scheme) band(i int, samples []uint64) uint64 {
	h := s.bandSeed[i]
	for _, x := range samples {
		h = rng.Hash(h, x)
	}
	return h & s.mask
}

// Combine appends the C(b, m) lookup keys of b supershingles (as made by
// Supershingles, possibly stored and reloaded) to dst. Key c is a 64-bit hash
// of the combination index and its m supershingle values, so two documents
// share key c exactly when they agree on all m bands of combination c
// (barring 64-bit hash collisions). Keys are in combination order.
func (s *Scheme) Combine(dst, supershingles []uint64) []uint64 {
	m := s.p.M
	if len(supershingles) < s.p.B {
		panic("lsh: Combine needs b supershingles")
	}
	for c, seed := range s.comboSeed {
		h := seed
		for _, j := range s.combos[c*m : (c+1)*m] {
			h = rng.Hash(h, supershingles[j])
		}
		dst = append(dst, h)
	}
	return dst
}

// Keys appends the C(b, m) lookup keys of a sketch to dst: Supershingles
// followed by Combine, without allocating. Two documents are candidates when
// they share at least one key. Cost: about 2 ns per sample plus about
// 2m ns per key; see BenchmarkKeys.
func (s *Scheme) Keys(dst, samples []uint64) ([]uint64, error) {
	var buf [MaxBands]uint64
	ss, err := s.Supershingles(buf[:0], samples)
	if err != nil {
		return dst, err
	}
	return s.Combine(dst, ss), nil
}

// Agreements returns how many of the b supershingles of two documents are
// equal; they are candidates under the scheme when it is at least m.
func (s *Scheme) Agreements(a, b []uint64) int {
	n := 0
	for i := 0; i < s.p.B && i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

// Prob returns the exact probability that two documents of Jaccard
// similarity j become candidates: see Params.Prob.
func (s *Scheme) Prob(j float64) float64 { return s.p.Prob(j) }
