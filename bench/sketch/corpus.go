package main

import (
	"fmt"
	"math"
	"sort"

	"github.com/neardup/neardup/internal/rng"
)

// shingleSize is the number of words per shingle, as in the feature
// package's default configuration.
const shingleSize = 5

// shingle is a 5-word shingle as word indices; vocabularies are capped at
// 65,536 words so that it is a compact comparable map key.
type shingle [shingleSize]uint16

// zipf draws word ranks 0…n−1 with P(r) ∝ 1/(r+1)^s by inverting the
// cumulative distribution with a binary search. Randomness comes from a
// caller's rng.Stream, so the corpus is a pure function of the seed.
type zipf struct{ cdf []float64 }

func newZipf(n int, s float64) *zipf {
	cdf := make([]float64, n)
	sum := 0.0
	for r := range cdf {
		sum += 1 / math.Pow(float64(r+1), s)
		cdf[r] = sum
	}
	for r := range cdf {
		cdf[r] /= sum
	}
	return &zipf{cdf: cdf}
}

func (z *zipf) draw(st *rng.Stream) uint16 {
	u := st.Float64()
	r := sort.SearchFloat64s(z.cdf, u)
	if r >= len(z.cdf) {
		r = len(z.cdf) - 1
	}
	return uint16(r)
}

// vocabulary returns n distinct lower-case ASCII words, 2 to 11 letters
// long, the more frequent (lower rank) ones shorter on average, as in text.
func vocabulary(n int, seed uint64) []string {
	st := rng.New(rng.Key(seed, 0x766f636162))
	seen := make(map[string]bool, n)
	words := make([]string, 0, n)
	buf := make([]byte, 0, 16)
	for len(words) < n {
		// Length grows with log rank: about 2–4 letters for the top
		// hundred words, up to 11 for the rare ones.
		base := 2 + int(math.Log10(float64(len(words)+1))*1.5)
		l := base + int(st.Intn(4))
		if l > 11 {
			l = 11
		}
		buf = buf[:0]
		for i := 0; i < l; i++ {
			buf = append(buf, byte('a'+st.Intn(26)))
		}
		if !seen[string(buf)] {
			seen[string(buf)] = true
			words = append(words, string(buf))
		}
	}
	return words
}

// shingles returns the distinct 5-shingles of words. A document shorter than
// five words is one shingle of all its words (the feature package's rule);
// the generator never makes one.
func shingles(words []uint16) map[shingle]struct{} {
	set := make(map[shingle]struct{}, len(words))
	for i := 0; i+shingleSize <= len(words); i++ {
		var s shingle
		copy(s[:], words[i:i+shingleSize])
		set[s] = struct{}{}
	}
	return set
}

// jaccardWith returns the exact Jaccard similarity of base (a shingle set)
// and the shingle set of words.
func jaccardWith(base map[shingle]struct{}, words []uint16) float64 {
	other := shingles(words)
	inter := 0
	for s := range other {
		if _, ok := base[s]; ok {
			inter++
		}
	}
	union := len(base) + len(other) - inter
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// pair is a base document and a near-duplicate variant of it, with the
// exact Jaccard similarity of their 5-shingle sets.
type pair struct {
	a, b   int // document indices
	level  int // index into corpus.targets
	target float64
	exact  float64
}

// corpus is the generated benchmark corpus: documents as word-index
// sequences and as text, and the near-duplicate pairs.
type corpus struct {
	vocab   []string
	words   [][]uint16 // per document
	text    [][]byte   // per document: words joined by single spaces
	pairs   []pair
	targets []float64
}

// generate makes nBase base documents of nWords Zipf(s) words each and one
// variant per base document, whose exact Jaccard similarity to its base is
// as close as word substitutions allow to targets[i mod len(targets)].
// Documents come in pairs: base 2i, variant 2i+1.
func generate(nBase, nWords, vocabSize int, s float64, targets []float64, seed uint64) *corpus {
	c := &corpus{vocab: vocabulary(vocabSize, seed), targets: targets}
	z := newZipf(vocabSize, s)
	for i := 0; i < nBase; i++ {
		st := rng.New(rng.Key(seed, 0x646f63, uint64(i)))
		base := make([]uint16, nWords)
		for j := range base {
			base[j] = z.draw(&st)
		}
		level := i % len(targets)
		variant, exact := makeVariant(base, targets[level], z, &st)
		c.pairs = append(c.pairs, pair{a: len(c.words), b: len(c.words) + 1, level: level, target: targets[level], exact: exact})
		c.words = append(c.words, base, variant)
	}
	c.text = make([][]byte, len(c.words))
	for i, ws := range c.words {
		var b []byte
		for j, w := range ws {
			if j > 0 {
				b = append(b, ' ')
			}
			b = append(b, c.vocab[w]...)
		}
		c.text[i] = b
	}
	return c
}

// makeVariant substitutes words of base, at positions in a random order, by
// other Zipf words, choosing the number m of substitutions whose exact
// Jaccard similarity is closest to target. J(m) is computed exactly for
// each candidate m (binary search on the nearly monotone J(m), then the
// better of the two neighbours).
func makeVariant(base []uint16, target float64, z *zipf, st *rng.Stream) ([]uint16, float64) {
	n := len(base)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(st.Intn(uint64(i + 1)))
		perm[i], perm[j] = perm[j], perm[i]
	}
	repl := make([]uint16, n)
	for i := range repl {
		w := z.draw(st)
		for w == base[perm[i]] {
			w = z.draw(st)
		}
		repl[i] = w
	}
	baseSet := shingles(base)
	variant := make([]uint16, n)
	apply := func(m int) float64 {
		copy(variant, base)
		for i := 0; i < m; i++ {
			variant[perm[i]] = repl[i]
		}
		return jaccardWith(baseSet, variant)
	}
	lo, hi := 0, n // smallest m with J(m) <= target lies in [lo, hi]
	for lo < hi {
		mid := (lo + hi) / 2
		if apply(mid) <= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	best, bestJ := lo, apply(lo)
	if lo > 0 {
		if j := apply(lo - 1); math.Abs(j-target) < math.Abs(bestJ-target) {
			best, bestJ = lo-1, j
		}
	}
	apply(best)
	return variant, bestJ
}

// levelSummary describes the exact similarities achieved at one target.
type levelSummary struct {
	Target float64 `json:"target"`
	Pairs  int     `json:"pairs"`
	Mean   float64 `json:"mean_exact"`
	Min    float64 `json:"min_exact"`
	Max    float64 `json:"max_exact"`
}

func (c *corpus) levels() []levelSummary {
	out := make([]levelSummary, len(c.targets))
	for i, t := range c.targets {
		out[i] = levelSummary{Target: t, Min: 2, Max: -1}
	}
	for _, p := range c.pairs {
		l := &out[p.level]
		l.Pairs++
		l.Mean += p.exact
		l.Min = math.Min(l.Min, p.exact)
		l.Max = math.Max(l.Max, p.exact)
	}
	for i := range out {
		if out[i].Pairs > 0 {
			out[i].Mean /= float64(out[i].Pairs)
		}
	}
	return out
}

func (l levelSummary) String() string {
	return fmt.Sprintf("J≈%.2f: %d pairs, exact mean %.4f [%.4f, %.4f]", l.Target, l.Pairs, l.Mean, l.Min, l.Max)
}
