package feature

import (
	"math"
	"math/bits"
	"slices"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/rabin"
)

// Labels that derive the two Rabin polynomials from Options.Seed.
const (
	labelTokenPoly  = 0x746f6b656e // "token": polynomial for token bytes
	labelWindowPoly = 0x77696e646f // "windo": polynomial for the word window
)

// Extractor turns documents into weighted features: it normalizes a
// document (HTML to visible text, Unicode, case, delimiters), cuts it into
// units (k-word shingles, words or character n-grams), fingerprints each
// unit into a 64-bit id and weighs the distinct ids.
//
// Feature ids are Rabin fingerprints (book 2.2, 3.3). Each token's bytes are
// fingerprinted with one random primitive polynomial, and a k-unit window
// slides over those word fingerprints with a second, independent polynomial,
// so each shingle costs O(1) whatever k is. Two polynomials, because the
// book (2.2, warning 1) cautions against fingerprinting fingerprints with
// the same polynomial: differences would be intrinsically related to it and
// collisions far more common than 2^-64. Both polynomials are drawn from
// Options.Seed (rabin.RandomPrimitive of rng.Key(Seed, label)), so ids are
// stable across runs, machines and versions (golden vectors pin them).
//
// Extract appends one Feature per distinct id, in order of first occurrence.
// In steady state (once its buffers have grown to the largest document seen)
// Extract allocates nothing for plain text; an HTML document costs the few
// allocations of golang.org/x/net/html's tokenizer (its construction, one
// per raw-text element such as <title> or <script>, and two per tag
// attribute, which it copies to detect duplicates). Cost is
// linear in the document. For ASCII text on a CPU with carry-less
// multiplication (PCLMULQDQ; clmul.go) and AVX-512 it is about 7 to 10 ns
// of CPU per 5-word shingle on the (shared) development machine, against
// 17.5 to 21 without them (the table route), where splitting words and
// hashing each once takes about 5 (BenchmarkFloor): a word's fingerprint
// and a shingle's are each a few multiplications (four words and eight
// shingles per instruction with AVX-512), and the rest is finding the
// words and the deduplication table. With AVX2 and VPCLMULQDQ on 256-bit
// vectors but no AVX-512 (an AMD EPYC), the two-lane kernels (clWords4x2F,
// clWindow4, spans256, dedupSet4) make it about 13 ns, against 25 with the
// 128-bit loops; spans256 case- and digit-folds the text as it classifies
// it, so that clWords4x2F needs not, which with leaner word loads and
// deduplication took BenchmarkExtractCorpus on the development Xeon with
// GODEBUG=cpu.avx512f=off from 10.6 to 8.8 CPU ns per shingle (-17%,
// benchstat of 10 interleaved runs), but left bench/sketch's Zipf corpus
// (4,000 documents cycled from memory, where copying each document in
// from DRAM takes a fifth of the time) at 10.5 (no significant change). Chinese and Japanese text (one token per character,
// three bytes each; tokenizeFrom's run loop, then the same window and
// deduplication) costs about 20 CPU ns per shingle on the same machine
// under load (BenchmarkExtractCJK; 9 for English text in the same runs),
// and raw text to a sketch runs at 0.57 to 0.61 of English's bytes per
// second (bench/sketch's "cjk extract + oph" row). The table route spends most of its time in the three
// 8-lookup table folds per word that the Rabin ids need (the token's
// bytes, and the window's append and drop). HTML costs about 115 ns per
// shingle, three quarters of it in x/net/html's tokenizer.
//
// An Extractor is not safe for concurrent use: use one per goroutine (New
// costs about two milliseconds, for the two polynomials). The zero value is
// not usable: use New. Buffers are kept between calls and sized by the
// largest document seen; the deduplication table holds 12 bytes per unit at 2x
// load.
type Extractor struct {
	o    Options // with defaults
	n    *normalizer
	tokT *rabin.Table
	winT *rabin.Table
	wh   *winHasher // the window polynomial's rabin.WordWindow of span K, as two folds
	fast *asciiPath // the one-pass ASCII route (nil for UnitChar and PunctKeep)
	lazy bool       // the last Extract went the ASCII route: n.text and n.toks are not filled (materialize)

	units  []uint64 // the units of the last document: n.fps (words) or cunits (runes)
	cunits []uint64 // UnitChar: the runes of the normalized text
	uzones []zone   // zone of each unit (when boosts apply, or UnitChar)
	acc    accum
	first  []int32 // per emitted feature: extended index of its first occurrence's first unit (-1: the whole short document)
	base   int     // len(dst) at the start of the last Extract
	occ    int     // unit occurrences (shingles before deduplication) in the last document
	boost  [numZones]float64
}

// New returns an Extractor for o, or the errors of o.Validate.
func New(o Options) (*Extractor, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	tp := rabin.RandomPrimitive(rng.Key(o.Seed, labelTokenPoly))
	wp := rabin.RandomPrimitive(rng.Key(o.Seed, labelWindowPoly))
	for i := uint64(1); wp == tp; i++ { // astronomically unlikely, but the two must differ
		wp = rabin.RandomPrimitive(rng.Key(o.Seed, labelWindowPoly, i))
	}
	e := &Extractor{
		o:    o,
		n:    newNormalizer(o),
		tokT: rabin.New(tp),
		winT: rabin.New(wp),
	}
	e.wh = newWinHasher(e.winT, rabin.NewWordWindow(e.winT, o.K))
	if o.Unit != UnitChar {
		e.n.hash = newTokHasher(e.tokT)
		if o.Punct == PunctDrop {
			e.fast = newASCIIPath(o, &e.n.word, e.tokT, e.wh)
			e.fast.cl = newCLRoute(e.tokT, e.winT, o.K, &e.n.word, e.fast.digits)
		}
	}
	e.boost = [numZones]float64{zoneBody: 1, zoneHeading: o.HeadingBoost, zoneTitle: o.TitleBoost}
	return e, nil
}

// Options returns the extractor's options with defaults filled in.
func (e *Extractor) Options() Options { return e.o }

// Normalize appends the normalized text of doc to dst and returns it: its
// tokens (words, and punctuation with PunctKeep), case- and
// Unicode-normalized per the options, joined by single spaces. Extract
// fingerprints exactly these tokens. Normalize shares the extractor's
// buffers: it invalidates the state AppendText reads.
func (e *Extractor) Normalize(dst, doc []byte) []byte {
	e.lazy = false
	h := e.n.hash
	e.n.hash = nil // no fingerprints needed
	e.n.normalize(doc)
	e.n.hash = h
	e.units = e.units[:0]
	e.occ = 0
	e.first = e.first[:0]
	return append(dst, e.n.text...)
}

// Occurrences returns how many units (shingles, words or character n-grams,
// before deduplication) the last Extract saw: the "ns per shingle"
// denominator.
func (e *Extractor) Occurrences() int { return e.occ }

// Extract appends the features of doc to dst and returns the extended
// slice. Each id appears once; its weight follows Options.Weighting
// (always > 0; a feature whose tf-idf weight is 0 is left out). Features
// come in order of first occurrence. A document without tokens has no
// features. doc is not retained. See Extractor for cost.
func (e *Extractor) Extract(dst []Feature, doc []byte) []Feature {
	e.base = len(dst)
	e.first = e.first[:0]
	e.lazy = false
	if e.fast != nil && e.viaASCII(doc) {
		dst = e.extractASCII(dst)
	} else {
		if e.fast == nil {
			e.n.normalize(doc)
		}
		switch {
		case e.o.Unit == UnitChar:
			e.charUnits()
			dst = e.emit(dst)
		case e.fast != nil && e.fast.cl != nil && !(e.o.Weighting != WeightSet && e.n.html):
			// Unweighted word units where the CPU multiplies
			// carry-lessly: the ASCII path's window and deduplication.
			e.wordUnits()
			dst = e.emitCL(dst, e.units)
		default:
			e.wordUnits()
			dst = e.emit(dst)
		}
	}
	if e.o.Weighting == WeightTFIDF {
		dst = e.tfidf(dst)
	}
	return dst
}

// wordUnits sets e.units to the token fingerprints that tokenize computed
// and, when boosts apply, e.uzones to the tokens' zones.
func (e *Extractor) wordUnits() {
	toks := e.n.toks
	e.units = e.n.fps
	if e.o.Weighting != WeightSet && e.n.html {
		e.uzones = growZ(e.uzones, len(toks))
		for i, t := range toks {
			e.uzones[i] = t.z
		}
	}
}

// charUnits makes every rune of the normalized text a unit; the space
// between two tokens takes the zone of the token after it.
func (e *Extractor) charUnits() {
	text := e.n.text
	toks := e.n.toks
	e.cunits = e.cunits[:0]
	e.uzones = e.uzones[:0]
	t := 0
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(text[i:])
		}
		for t < len(toks)-1 && int(toks[t].end) <= i {
			t++
		}
		e.cunits = append(e.cunits, uint64(r))
		e.uzones = append(e.uzones, toks[t].z)
		i += size
	}
	e.units = e.cunits
}

func growZ(s []zone, n int) []zone {
	if cap(s) < n {
		return make([]zone, n, n+n/4)
	}
	return s[:n]
}

// emit slides the window over the units and adds each shingle's id. The
// first K-1 units extend the fingerprint (rabin ExtendUint64); after that
// each step is one Slide (book 3.3): drop the oldest unit, append the next,
// as winHasher's two folds, of which only the append is on the dependency
// chain from one shingle to the next. With Wrap the units are extended by
// their first K-1 (in the units' own buffer) so that the loop needs no
// index arithmetic.
func (e *Extractor) emit(dst []Feature) []Feature {
	units := e.units
	n, k := len(units), e.o.K
	e.occ = 0
	if n == 0 {
		return dst
	}
	total := n // extended length: units, then the first K-1 again with Wrap
	if e.o.Wrap {
		total = n + k - 1
	}
	weighted := e.o.Weighting != WeightSet && e.n.html
	ext, zones := units, e.uzones
	if total > n {
		ext = units[:n]
		for j := n; j < total; j++ {
			ext = append(ext, units[j%n])
		}
		e.units = ext[:n] // keep a grown buffer for the next document
		if e.o.Unit == UnitChar {
			e.cunits = e.units
		} else {
			e.n.fps = e.units
		}
		if weighted {
			zones = zones[:n]
			for j := n; j < total; j++ {
				zones = append(zones, zones[j%n])
			}
			e.uzones = zones[:n]
		}
	}
	ext = ext[:total]
	e.acc.reset(total)
	set := e.o.Weighting == WeightSet
	lastTitle, lastHeading := math.MinInt/2, math.MinInt/2
	wh := e.wh
	fp := wh.q // Hash of the empty string
	base := e.base
	// Room for every occurrence up front, so that the loop makes no calls
	// and keeps its variables in registers: nd and nf count the features
	// and first occurrences written to db and fb.
	dst = slices.Grow(dst, total)
	e.first = slices.Grow(e.first, total)
	db, fb := dst[:cap(dst)], e.first[:cap(e.first)]
	nd, nf := len(dst), len(e.first)
	m := min(k-1, total)
	for j := 0; j < m; j++ {
		fp = wh.step(fp ^ ext[j])
		if weighted {
			switch zones[j] {
			case zoneTitle:
				lastTitle = j
			case zoneHeading:
				lastHeading = j
			}
		}
	}
	if !weighted && m < total {
		// The common case, in a small function of its own whose
		// variables fit in registers (spilling fp would lengthen the
		// window chain).
		var c int
		if set {
			fp, c = e.slideSet(db[nd:], fb[nf:], ext, fp, m, k)
		} else {
			fp, c = e.slideCount(db[nd:], fb[nf:], ext, fp, m, k)
		}
		nd, nf = nd+c, nf+c
		m = total // done
	}
	// The deduplication table, in locals so the loop keeps them in
	// registers (accum.put, inlined by hand).
	keys, idxs, shift := e.acc.keys, e.acc.idx, e.acc.shift
	idxs = idxs[:len(keys)]
	mask := uint64(len(keys) - 1)
	zeroAt := int32(-1) // index of the Feature of id 0, if any
	for j := m; j < total; j++ {
		var d uint64 // dropping ext[j-k], once the window is full
		if j >= k {
			d = wh.dropOf(ext[j-k])
		}
		fp = d ^ wh.step(fp^ext[j])
		if weighted {
			switch zones[j] {
			case zoneTitle:
				lastTitle = j
			case zoneHeading:
				lastHeading = j
			}
		}
		// One occurrence of fp, starting at extended index j-k+1: find
		// its slot (at = the index of its Feature), or add it.
		at := int32(-1)
		if fp != 0 {
			h := (fp * 0x9e3779b97f4a7c15) >> shift
			for {
				if key := keys[h]; key == 0 {
					keys[h] = fp
					if !set { // a set never looks its features up again
						idxs[h] = int32(nd - base)
					}
					break
				} else if key == fp {
					at = 0 // found; the index matters only if !set
					if !set {
						at = idxs[h]
					}
					break
				}
				h = (h + 1) & mask
			}
		} else if zeroAt >= 0 {
			at = zeroAt
		} else {
			zeroAt = int32(nd - base)
		}
		w := 1.0
		if weighted {
			w = e.boostOf(lastTitle, lastHeading, j-k+1)
		}
		if at < 0 {
			fb[nf] = int32(j - k + 1)
			nf++
			db[nd] = Feature{ID: fp, Weight: w}
			nd++
		} else if !set {
			db[base+int(at)].Weight += w
		}
	}
	dst, e.first = db[:nd], fb[:nf]
	if total >= k {
		e.occ = total - k + 1
	}
	if n < k && !e.o.Wrap {
		// A document shorter than one shingle is one shingle of all its
		// units: fp is the fingerprint of all of them.
		w := 1.0
		if weighted {
			w = e.boostOf(lastTitle, lastHeading, 0)
		}
		e.occ = 1
		e.first = append(e.first, -1)
		dst = append(dst, Feature{ID: fp, Weight: w})
	}
	return dst
}

// slideSet is emit's main loop for unweighted sets: it slides the window
// from fp (the fingerprint of ext[:m], m = K-1 or the whole of a short
// Wrap document) over ext[m:], writes each new id to db and its first
// extended index to fb (both from 0), and returns the last fingerprint
// and the number of new ids. It works in two passes: the window writes
// every occurrence's id to db (a loop whose only dependency chain is the
// window's), then the deduplication compacts db in place, its table probes
// independent of each other.
func (e *Extractor) slideSet(db []Feature, fb []int32, ext []uint64, fp uint64, m, k int) (uint64, int) {
	wh := e.wh
	occ := len(ext) - m
	db, fb = db[:occ], fb[:occ] // both have room for every occurrence
	for j := m; j < len(ext); j++ {
		var d uint64 // dropping ext[j-k], once the window is full
		if j >= k {
			d = wh.dropOf(ext[j-k])
		}
		fp = d ^ wh.step(fp^ext[j])
		db[j-m].ID = fp
	}
	keys, shift := e.acc.keys, e.acc.shift
	mask := uint64(len(keys) - 1)
	c := 0
	for i := range db {
		id := db[i].ID
		if id == 0 {
			if e.acc.zero {
				continue
			}
			e.acc.zero = true
		} else {
			h := (id * 0x9e3779b97f4a7c15) >> shift
			for {
				key := keys[h]
				if key == 0 {
					keys[h] = id
					break
				}
				if key == id {
					goto next
				}
				h = (h + 1) & mask
			}
		}
		db[c] = Feature{ID: id, Weight: 1}
		fb[c] = int32(i + m - k + 1)
		c++
	next:
	}
	return fp, c
}

// slideCount is slideSet for unweighted multisets: a repeated id adds 1 to
// the weight of its Feature, found through acc.idx.
func (e *Extractor) slideCount(db []Feature, fb []int32, ext []uint64, fp uint64, m, k int) (uint64, int) {
	wh := e.wh
	keys, idxs, shift := e.acc.keys, e.acc.idx, e.acc.shift
	mask := uint64(len(keys) - 1)
	idxs = idxs[:len(keys)]
	r := min(len(db), len(fb)) // both have room for every occurrence
	db, fb = db[:r], fb[:r]
	c := 0
	for j := m; j < len(ext); j++ {
		var d uint64 // dropping ext[j-k], once the window is full
		if j >= k {
			d = wh.dropOf(ext[j-k])
		}
		fp = d ^ wh.step(fp^ext[j])
		if fp == 0 {
			if e.acc.zero {
				db[e.acc.zeroAt].Weight++
				continue
			}
			e.acc.zero, e.acc.zeroAt = true, int32(c)
		} else {
			h := (fp * 0x9e3779b97f4a7c15) >> shift
			for {
				key := keys[h]
				if key == 0 {
					keys[h] = fp
					idxs[h] = int32(c)
					break
				}
				if key == fp {
					db[idxs[h]].Weight++
					goto next
				}
				h = (h + 1) & mask
			}
		}
		db[c] = Feature{ID: fp, Weight: 1}
		fb[c] = int32(j - k + 1)
		c++
	next:
	}
	return fp, c
}

// boostOf is the largest boost among the zones seen at or after extended
// index from.
func (e *Extractor) boostOf(lastTitle, lastHeading, from int) float64 {
	w := 1.0
	if lastTitle >= from {
		w = e.boost[zoneTitle]
	}
	if lastHeading >= from && e.boost[zoneHeading] > w {
		w = e.boost[zoneHeading]
	}
	return w
}

// tfidf turns the boosted counts of dst[e.base:] into tf-idf weights and
// drops features of weight 0.
func (e *Extractor) tfidf(dst []Feature) []Feature {
	t := e.o.IDFTable
	n := float64(t.Docs())
	out := e.base
	for i := e.base; i < len(dst); i++ {
		f := dst[i]
		tf := f.Weight
		if e.o.SublinearTF {
			tf = 1 + math.Log(tf) // tf >= 1: boosts are >= 1
		}
		df := float64(t.DF(f.ID))
		var idf float64
		if e.o.RawIDF {
			if n > 0 {
				idf = math.Log(n / math.Max(df, 1))
			}
		} else {
			idf = math.Log((1+n)/(1+df)) + 1
		}
		if w := tf * idf; w > 0 {
			dst[out] = Feature{ID: f.ID, Weight: w}
			e.first[out-e.base] = e.first[i-e.base]
			out++
		}
	}
	e.first = e.first[:out-e.base]
	return dst[:out]
}

// AppendText appends the text of the i-th feature that the last Extract
// appended (i counts from 0 at the first feature of that call) to dst: the
// normalized words of its first occurrence joined by spaces (UnitShingle,
// UnitWord) or its runes (UnitChar). It is for inspection; it panics if i
// is out of range. Valid until the next Extract or Normalize.
func (e *Extractor) AppendText(dst []byte, i int) []byte {
	e.materialize()
	s := int(e.first[i])
	n := len(e.units)
	cnt := e.o.K
	if s < 0 {
		s, cnt = 0, n
	}
	for j := 0; j < cnt; j++ {
		u := (s + j) % n
		if e.o.Unit == UnitChar {
			dst = utf8.AppendRune(dst, rune(e.units[u]))
			continue
		}
		if j > 0 {
			dst = append(dst, ' ')
		}
		t := e.n.toks[u]
		dst = append(dst, e.n.text[t.start:t.end]...)
	}
	return dst
}

// accum deduplicates the ids of one document: an open-addressing table
// (linear probing, Fibonacci hashing) of ids, sized to the document (a
// power of two at least twice its occurrences) and cleared per document,
// 0 marking an empty slot; idx holds, for a filled slot, the index
// (relative to the call's first feature) of the id's Feature. emit probes
// it inline and keeps the id 0 (possible, if unlikely) in a local instead.
// Eight bytes of ids per slot keep the part that every probe reads small
// (16 KiB for a 1,000-word document), and clearing it costs less than a
// cache miss per document.
type accum struct {
	keys   []uint64
	idx    []int32
	shift  uint
	zero   bool  // slideSet, slideCount: whether id 0 occurred
	zeroAt int32 // slideCount: the index of the Feature of id 0
}

// reset prepares the table for up to n distinct ids at load <= 1/2.
func (a *accum) reset(n int) {
	need := 2 * n
	if need < 16 {
		need = 16
	}
	size := 1 << bits.Len(uint(need-1))
	if cap(a.keys) < size {
		a.keys = make([]uint64, size)
		a.idx = make([]int32, size)
	}
	a.keys = a.keys[:size]
	a.idx = a.idx[:size]
	clear(a.keys)
	a.shift = uint(64 - bits.Len(uint(size-1)))
	a.zero = false
}
