package sketch_test

// Tests of the sketch estimators on sketches made by package weighted (an
// external test package may import it: weighted imports sketch, not the
// reverse).

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
)

// logUniform returns n features with IDs from st and weights log-uniform
// over [lo, hi].
func logUniform(st *rng.Stream, n int, lo, hi float64) []feature.Feature {
	fs := make([]feature.Feature, n)
	for i := range fs {
		fs[i] = feature.Feature{ID: st.Uint64(), Weight: lo * math.Pow(hi/lo, st.Float64())}
	}
	return fs
}

// perturbed returns a variant of a: each feature kept with probability
// keep, its weight times e^(spread·(u−1/2)), plus extra new features, all
// weights then times c.
func perturbed(st *rng.Stream, a []feature.Feature, keep, spread float64, extra int, c float64) []feature.Feature {
	var b []feature.Feature
	for _, f := range a {
		if st.Float64() < keep {
			b = append(b, feature.Feature{ID: f.ID, Weight: c * f.Weight * math.Exp(spread*(st.Float64()-0.5))})
		}
	}
	for _, f := range logUniform(st, extra, 0.1, 10) {
		b = append(b, feature.Feature{ID: f.ID, Weight: c * f.Weight})
	}
	return b
}

func scaled(fs []feature.Feature, c float64) []feature.Feature {
	out := make([]feature.Feature, len(fs))
	for i, f := range fs {
		out[i] = feature.Feature{ID: f.ID, Weight: c * f.Weight}
	}
	return out
}

func total(fs []feature.Feature) float64 {
	var s float64
	for _, f := range fs {
		s += f.Weight
	}
	return s
}

// hmtOracle is Algorithm 3.4 written independently of the package's
// positional arithmetic: each sketch becomes a map from scale number to its
// block of bins, and the scales present in both maps are compared.
func hmtOracle(t *testing.T, a, b *sketch.Sketch) (j, se float64, below bool, scales int) {
	p, bins, err := a.Header.HMT()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Values) == 0 || len(b.Values) == 0 {
		if len(a.Values) == len(b.Values) {
			return 1, 0, false, 0
		}
		return 0, 0, true, 0
	}
	blocks := func(v []uint64) map[int64][]uint64 {
		m := map[int64][]uint64{}
		for r := range p.Scales {
			m[int64(v[0])+int64(r)] = v[2+r*bins : 2+(r+1)*bins]
		}
		return m
	}
	la, lb := math.Float64frombits(a.Values[1]), math.Float64frombits(b.Values[1])
	if r := math.Exp2(-math.Abs(la - lb)); r < p.Alpha {
		return r, 0, true, 0
	}
	ma, mb := blocks(a.Values), blocks(b.Values)
	keys := make([]int64, 0, len(ma))
	for i := range ma {
		keys = append(keys, i)
	}
	slices.Sort(keys)
	var sum, vsum float64
	for _, i := range keys {
		bb, ok := mb[i]
		if !ok {
			continue
		}
		eq, m := 0, 0
		for x, v := range ma[i] {
			if v != weighted.Empty || bb[x] != weighted.Empty {
				m++
				if v == bb[x] {
					eq++
				}
			}
		}
		if m == 0 {
			continue
		}
		q := float64(eq) / float64(m)
		sum += q
		vsum += q * (1 - q) / float64(m)
		scales++
	}
	if scales == 0 {
		return 0.5, 0.5, false, 0
	}
	return sum / float64(scales), math.Sqrt(vsum) / float64(scales), false, scales
}

// TestHMTJaccardMatchesOracle: on 480 pairs over four parameter sets (both
// rounding variants; weight ratios 1/4 … 4, so first scales differ and
// "below α" occurs), sketch.Jaccard equals the scale-keyed oracle and
// weighted.EstimateJaccard field for field, and both paths are exercised.
func TestHMTJaccardMatchesOracle(t *testing.T) {
	configs := []weighted.Options{
		{K: 256},
		{K: 256, Independent: true},
		{K: 128, Alpha: 0.25, Tau: 2, Scales: 4, L: 5},
		{K: 64, Alpha: 0.7, Tau: 1, Scales: 2, L: 4, Independent: true},
	}
	st := rng.New(61)
	var differ, below, est int
	for ci, o := range configs {
		for p := range 120 {
			o.Seed = uint64(p)
			h, err := weighted.NewHMT(o)
			if err != nil {
				t.Fatal(err)
			}
			a := logUniform(&st, 20+int(st.Intn(60)), 0.01, 100)
			c := math.Exp2(4*st.Float64() - 2)
			b := perturbed(&st, a, 0.8, 0.6, int(st.Intn(10)), c)
			sa, sb := sample.Make(h, a), sample.Make(h, b)
			e, err := sketch.Jaccard(sa, sb)
			if err != nil {
				t.Fatal(err)
			}
			r, err := weighted.EstimateJaccard(sa, sb)
			if err != nil {
				t.Fatal(err)
			}
			if r != (weighted.Result{J: e.J, StdErr: e.StdErr, Below: e.Below, Alpha: e.Alpha, Scales: e.Scales}) {
				t.Fatalf("config %d pair %d: sketch.Jaccard %+v, weighted.EstimateJaccard %+v", ci, p, e, r)
			}
			j, se, bl, n := hmtOracle(t, sa, sb)
			if e.Below != bl || e.Scales != n || math.Abs(e.J-j) > 1e-12 || math.Abs(e.StdErr-se) > 1e-12 {
				t.Fatalf("config %d pair %d: %+v, oracle J=%v SE=%v below=%v scales=%d", ci, p, e, j, se, bl, n)
			}
			if e.Alpha != h.Alpha() {
				t.Fatalf("alpha %v, want %v", e.Alpha, h.Alpha())
			}
			if !e.Below && len(sa.Values) > 0 && len(sb.Values) > 0 && sa.Values[0] != sb.Values[0] {
				differ++
			}
			if e.Below {
				below++
			} else {
				est++
			}
		}
	}
	t.Logf("%d estimates (%d with different first scales), %d below α", est, differ, below)
	if differ < 50 || below < 50 {
		t.Fatalf("too few pairs exercise scale alignment (%d) or below α (%d)", differ, below)
	}
}

// TestHMTDifferentFirstScales: A has total weight 100 and B = 1.5·A, so
// with the defaults (target L·k/(t−τ) = 512, β = 1/2) their first scales
// are ⌈log₂ 5.12⌉ = 3 and ⌈log₂ 3.41⌉ = 2, and the exact weighted Jaccard
// is 1/1.5. Compared by scale number, the mean estimate over R = 100 seeds
// is within the rounding bias 1/(W'−1) (W' ≥ 512, HMT Theorem 3.1) plus
// 4 SE of 2/3; compared by position (the old behaviour) the blocks belong
// to different scales, whose element hashes are independent, and almost
// no bin agrees.
func TestHMTDifferentFirstScales(t *testing.T) {
	const R = 100
	st := rng.New(5)
	a := logUniform(&st, 80, 0.01, 100)
	a = scaled(a, 100/total(a))
	b := scaled(a, 1.5)
	want := 1 / 1.5
	var sum, sum2, pos float64
	for r := range R {
		h, _ := weighted.NewHMT(weighted.Options{K: 256, Seed: uint64(r)})
		sa, sb := sample.Make(h, a), sample.Make(h, b)
		if int64(sa.Values[0]) != 3 || int64(sb.Values[0]) != 2 {
			t.Fatalf("first scales %d, %d; want 3, 2", int64(sa.Values[0]), int64(sb.Values[0]))
		}
		e, err := sketch.Jaccard(sa, sb)
		if err != nil || e.Below || e.Scales != 2 {
			t.Fatalf("%+v, %v", e, err)
		}
		sum += e.J
		sum2 += e.J * e.J
		eq := 0
		for i := 2; i < len(sa.Values); i++ {
			if sa.Values[i] == sb.Values[i] && sa.Values[i] != weighted.Empty {
				eq++
			}
		}
		pos += float64(eq) / float64(len(sa.Values)-2)
	}
	m := sum / R
	sd := math.Sqrt(sum2/R - m*m)
	if math.Abs(m-want) > 1.0/511+4*sd/math.Sqrt(R) {
		t.Errorf("mean estimate %.4f, want %.4f ± %.4f", m, want, 1.0/511+4*sd/math.Sqrt(R))
	}
	if pos/R > 0.05 {
		t.Errorf("positional agreement %.4f: blocks of different scales should not agree", pos/R)
	}
	t.Logf("by scale %.4f (exact %.4f), by position %.4f", m, want, pos/R)
}

// TestHMTHandBuilt pins the alignment on values built by hand: a starts at
// scale 5, b at scale 6; scale 6 agrees in all 4 bins, scale 7 in 2 of 4
// (one bin empty in both, so 2 of 3), the unshared scales 5 and 8 are
// ignored.
func TestHMTHandBuilt(t *testing.T) {
	p := sketch.HMTParams{Alpha: 0.5, Tau: 1, Scales: 3, L: 4}
	h := sketch.Header{Algorithm: sketch.HMTDep, Version: 1, K: 2 + 3*4, Bits: 64, Params: p.Pack()}
	E := sketch.HMTEmpty
	a := &sketch.Sketch{Header: h, Values: []uint64{5, math.Float64bits(10),
		1, 2, 3, 4, // scale 5
		10, 11, 12, 13, // scale 6
		20, 21, E, 23, // scale 7
	}}
	b := &sketch.Sketch{Header: h, Values: []uint64{6, math.Float64bits(10.5),
		10, 11, 12, 13, // scale 6
		20, 99, E, 23, // scale 7
		1, 2, 3, 4, // scale 8
	}}
	e, err := sketch.Jaccard(a, b)
	if err != nil {
		t.Fatal(err)
	}
	wantJ := (1 + 2.0/3) / 2
	wantSE := math.Sqrt(0+(2.0/3)*(1.0/3)/3) / 2
	if e.Below || e.Scales != 2 || math.Abs(e.J-wantJ) > 1e-15 || math.Abs(e.StdErr-wantSE) > 1e-15 || e.Alpha != 0.5 {
		t.Fatalf("%+v, want J=%v SE=%v over 2 scales", e, wantJ, wantSE)
	}
	// Symmetric.
	if f, _ := sketch.Jaccard(b, a); f != e {
		t.Fatalf("not symmetric: %+v vs %+v", f, e)
	}
	// Weights 2^10 and 2^11.5: ratio 2^−1.5 < 1/2, so below α, J the bound.
	b.Values[1] = math.Float64bits(11.5)
	e, _ = sketch.Jaccard(a, b)
	if !e.Below || e.J != math.Exp2(-1.5) || e.StdErr != 0 || e.Scales != 0 {
		t.Fatalf("below: %+v", e)
	}
	// Shared scales that are empty in both sketches carry no information.
	b.Values[1] = math.Float64bits(10.5)
	c := a.Clone()
	for i := 2 + 4; i < len(c.Values); i++ {
		c.Values[i] = E
	}
	d := b.Clone()
	for i := 2; i < 2+8; i++ {
		d.Values[i] = E
	}
	if e, _ = sketch.Jaccard(c, d); e.J != 0.5 || e.StdErr != 0.5 || e.Below {
		t.Fatalf("no information: %+v", e)
	}
}

// TestHMTBelowAlphaSurfaces: through sketch.Jaccard, "below α" is
// reported exactly when the total weights differ by more than 1/α, and
// then J is the weight ratio, an upper bound on the exact weighted Jaccard
// (Σmin ≤ min W, Σmax ≥ max W) that lies below α; otherwise J is an
// estimate with at least t − τ scales. Empty sets: both → 1, one → below
// with bound 0.
func TestHMTBelowAlphaSurfaces(t *testing.T) {
	h, _ := weighted.NewHMT(weighted.Options{K: 128, Seed: 3})
	st := rng.New(17)
	nb := 0
	for trial := range 200 {
		a := logUniform(&st, 40, 0.1, 10)
		b := perturbed(&st, a, 0.9, 0.2, 2, math.Exp2(-3*st.Float64()))
		sa, sb := sample.Make(h, a), sample.Make(h, b)
		e, err := sketch.Jaccard(sa, sb)
		if err != nil {
			t.Fatal(err)
		}
		ratio := min(sa.Size, sb.Size) / max(sa.Size, sb.Size)
		exact := weighted.Jaccard(a, b)
		switch {
		case ratio < 0.5-1e-9:
			if !e.Below || e.StdErr != 0 || e.Scales != 0 || math.Abs(e.J-ratio) > 1e-9 || e.J >= e.Alpha || exact > e.J {
				t.Fatalf("trial %d: ratio %v, exact %v: %+v", trial, ratio, exact, e)
			}
			nb++
		case ratio > 0.5+1e-9:
			if e.Below || e.Scales < 2 {
				t.Fatalf("trial %d: ratio %v: %+v", trial, ratio, e)
			}
		}
	}
	if nb < 40 {
		t.Fatalf("only %d below-α pairs", nb)
	}
	a := logUniform(&st, 5, 1, 2)
	empty := sample.Make(h, nil)
	full := sample.Make(h, a)
	if e, _ := sketch.Jaccard(empty, full); !e.Below || e.J != 0 {
		t.Errorf("empty vs non-empty: %+v", e)
	}
	if e, _ := sketch.Jaccard(empty, empty); e.Below || e.J != 1 {
		t.Errorf("empty vs empty: %+v", e)
	}
}

// TestCWSSlotsAreSamples: for CWS and ICWS the slot-wise comparison of
// sketch.Jaccard is the right one — slot j of two sketches agrees exactly
// when sample j, (x, y), agrees — and weighted.EstimateJaccard equals it.
func TestCWSSlotsAreSamples(t *testing.T) {
	type sampler interface {
		sample.Sampler
		Samples(dst []weighted.Sample, fs []feature.Feature) []weighted.Sample
	}
	st := rng.New(23)
	for _, mk := range []func(weighted.Options) (sampler, error){
		func(o weighted.Options) (sampler, error) { return weighted.NewCWS(o) },
		func(o weighted.Options) (sampler, error) { return weighted.NewICWS(o) },
	} {
		agree := 0
		for p := range 20 {
			s, _ := mk(weighted.Options{K: 128, Seed: uint64(p)})
			a := logUniform(&st, 30, 0.01, 100)
			b := perturbed(&st, a, 0.9, 1, 3, 1)
			sa, sb := sample.Make(s, a), sample.Make(s, b)
			xa, xb := s.Samples(nil, a), s.Samples(nil, b)
			eq := 0
			for j := range xa {
				same := xa[j].ID == xb[j].ID && xa[j].LogY == xb[j].LogY
				if same != (sa.Values[j] == sb.Values[j]) {
					t.Fatalf("%v slot %d: samples equal %v, values equal %v", s.Header().Algorithm, j, same, !same)
				}
				if same {
					eq++
				}
			}
			agree += eq
			e, err := sketch.Jaccard(sa, sb)
			if err != nil || e.J != float64(eq)/128 || e.Below || e.Scales != 0 {
				t.Fatalf("%+v, %v; want %d/128 equal", e, err, eq)
			}
			r, _ := weighted.EstimateJaccard(sa, sb)
			if r.J != e.J || r.StdErr != e.StdErr || r.Scales != 1 {
				t.Fatalf("EstimateJaccard %+v vs %+v", r, e)
			}
		}
		if agree == 0 || agree == 20*128 {
			t.Fatalf("degenerate agreement %d", agree)
		}
	}
}

// TestWeightedCardinality: HMT sketches report their total weight (plain
// and logarithmic weights, within float64 rounding of log₂ W); CWS and ICWS
// cannot; the empty sketch is 0; a total beyond float64 is an error.
func TestWeightedCardinality(t *testing.T) {
	st := rng.New(29)
	a := logUniform(&st, 50, 1e-3, 1e3)
	w := total(a)
	h, _ := weighted.NewHMT(weighted.Options{K: 64})
	s := sample.Make(h, a)
	s.Size = 0 // from the values alone
	if c, err := sketch.Cardinality(s); err != nil || math.Abs(c-w) > 1e-12*w {
		t.Fatalf("HMT cardinality %v, %v; want %v", c, err, w)
	}
	hl, _ := weighted.NewHMT(weighted.Options{K: 64, LogWeights: true})
	lw := make([]feature.Feature, len(a))
	for i, f := range a {
		lw[i] = feature.Feature{ID: f.ID, Weight: math.Log(f.Weight) - 600} // Σw ≈ e^−600·w
	}
	want := w * math.Exp(-600)
	if c, err := sketch.Cardinality(sample.Make(hl, lw)); err != nil || math.Abs(c-want) > 1e-9*want {
		t.Fatalf("HMT log-weight cardinality %v, %v; want %v", c, err, want)
	}
	for i := range lw {
		lw[i].Weight += 1400 // Σw ≈ e^800: beyond float64
	}
	if _, err := sketch.Cardinality(sample.Make(hl, lw)); !errors.Is(err, sketch.ErrUnsupported) {
		t.Fatalf("overflowing total weight: %v", err)
	}
	if c, err := sketch.Cardinality(sample.Make(h, nil)); err != nil || c != 0 {
		t.Fatalf("empty: %v, %v", c, err)
	}
	c, _ := weighted.NewCWS(weighted.Options{K: 16})
	ic, _ := weighted.NewICWS(weighted.Options{K: 16})
	for _, smp := range []sample.Sampler{c, ic} {
		if _, err := sketch.Cardinality(sample.Make(smp, a)); !errors.Is(err, sketch.ErrUnsupported) {
			t.Errorf("%v cardinality: %v", smp.Header().Algorithm, err)
		}
	}
}

// TestWeightedContainment: B holds A plus new features of half A's weight,
// so the weighted containment Σmin/|A|₁ is 1 and J = 2/3. With HMT (sizes
// from the sketches) and CWS (sizes from sample.Make) the estimate is
// within 4 SE of 1; CWS without sizes is unsupported; a below-α Jaccard
// makes a below containment bound.
func TestWeightedContainment(t *testing.T) {
	st := rng.New(31)
	a := logUniform(&st, 60, 0.1, 10)
	extra := logUniform(&st, 30, 0.1, 10)
	extra = scaled(extra, total(a)/2/total(extra))
	b := append(slices.Clone(a), extra...)
	h, _ := weighted.NewHMT(weighted.Options{K: 512, Seed: 1})
	c, _ := weighted.NewCWS(weighted.Options{K: 512, Seed: 1})
	for _, smp := range []sample.Sampler{h, c} {
		sa, sb := sample.Make(smp, a), sample.Make(smp, b)
		if smp == h {
			sa.Size, sb.Size = 0, 0 // HMT: from Cardinality
		}
		e, err := sketch.Containment(sa, sb)
		// HMT's rounding bias ≤ 1/511 in J becomes ≤ 0.9/511 here
		// (dC/dJ = r/(1+J)² = 0.9 at r = 2.5, J = 2/3).
		if err != nil || e.Below || math.Abs(e.J-1) > 4*e.StdErr+0.9/511 {
			t.Errorf("%v containment %+v, %v; want 1", smp.Header().Algorithm, e, err)
		}
	}
	sa, sb := sample.Make(c, a), sample.Make(c, b)
	sa.Size = 0
	if _, err := sketch.Containment(sa, sb); !errors.Is(err, sketch.ErrUnsupported) {
		t.Errorf("CWS without size: %v", err)
	}
	// A against 8·A: J = 1/8, below α; containment of A in 8·A is 1, and
	// the bound implied by J ≤ 1/8 is (1/8)(1+8)/(1+1/8) = 1.
	e, err := sketch.Containment(sample.Make(h, a), sample.Make(h, scaled(a, 8)))
	if err != nil || !e.Below || e.StdErr != 0 || math.Abs(e.J-1) > 1e-9 {
		t.Errorf("below containment %+v, %v", e, err)
	}
	// 8·A against A: the bound (1/8)(9/8)/(9/8) = 1/8 is exact here.
	e, _ = sketch.Containment(sample.Make(h, scaled(a, 8)), sample.Make(h, a))
	if !e.Below || math.Abs(e.J-1.0/8) > 1e-9 {
		t.Errorf("below containment %+v", e)
	}
}

// TestWeightedUnsupported: no operation of package sketch turns weighted
// sketches into a silent wrong number: union is unsupported for all of
// them (CWS/ICWS values are hashes, HMT scales depend on the total), b-bit
// compression and BBitUnclamped for HMT; b-bit CWS still estimates
// weighted Jaccard (within 4 SE over 2,048 slots).
func TestWeightedUnsupported(t *testing.T) {
	st := rng.New(37)
	a := logUniform(&st, 40, 0.1, 10)
	b := perturbed(&st, a, 0.9, 0.5, 4, 1)
	h, _ := weighted.NewHMT(weighted.Options{K: 64})
	hi, _ := weighted.NewHMT(weighted.Options{K: 64, Independent: true})
	c, _ := weighted.NewCWS(weighted.Options{K: 2048, Seed: 2})
	ic, _ := weighted.NewICWS(weighted.Options{K: 64})
	for _, smp := range []sample.Sampler{h, hi, c, ic} {
		sa, sb := sample.Make(smp, a), sample.Make(smp, b)
		if _, err := sketch.Union(sa, sb); !errors.Is(err, sketch.ErrUnsupported) {
			t.Errorf("%v union: %v", smp.Header().Algorithm, err)
		}
		if smp == h || smp == hi {
			if _, err := sketch.Compress(sa, 8); !errors.Is(err, sketch.ErrUnsupported) {
				t.Errorf("HMT compress: %v", err)
			}
			if _, err := sketch.CompressPairs(sa, 8); !errors.Is(err, sketch.ErrUnsupported) {
				t.Errorf("HMT compress pairs: %v", err)
			}
			if _, err := sketch.BBitUnclamped(sa, sb); !errors.Is(err, sketch.ErrUnsupported) {
				t.Errorf("HMT BBitUnclamped: %v", err)
			}
		}
	}
	exact := weighted.Jaccard(a, b)
	ca, _ := sketch.Compress(sample.Make(c, a), 4)
	cb, _ := sketch.Compress(sample.Make(c, b), 4)
	e, err := sketch.Jaccard(ca, cb)
	if err != nil || math.Abs(e.J-exact) > 4*e.StdErr {
		t.Errorf("4-bit CWS %+v, %v; exact %v", e, err, exact)
	}
}

// TestHMTEncoding: HMT sketches round-trip through the binary encoding
// (same estimate after decoding); decoding re-validates the HMT header, so
// a well-checksummed encoding with broken parameters is corrupt; headers
// and values that break the HMT layout are invalid.
func TestHMTEncoding(t *testing.T) {
	st := rng.New(41)
	a := logUniform(&st, 40, 0.1, 10)
	b := perturbed(&st, a, 0.9, 0.5, 4, 1.2)
	h, _ := weighted.NewHMT(weighted.Options{K: 128, Seed: 9, Alpha: 0.3, Scales: 4, Tau: 2, L: 4.5})
	sa, sb := sample.Make(h, a), sample.Make(h, b)
	enc, err := sa.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d sketch.Sketch
	if err := d.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	e1, _ := sketch.Jaccard(sa, sb)
	e2, err := sketch.Jaccard(&d, sb)
	if err != nil || e1 != e2 || d.Size != sa.Size {
		t.Fatalf("after decoding %+v, %v; want %+v", e2, err, e1)
	}
	p, bins, err := sa.Header.HMT()
	if err != nil || p != (sketch.HMTParams{Alpha: h.Alpha(), Tau: 2, Scales: 4, L: 4.5}) || bins != h.Bins() {
		t.Fatalf("params %+v, %d bins, %v", p, bins, err)
	}
	// Params sit after magic(4), versions/alg/bits(4), seed(8), features(8).
	const off = 24
	if q, n := binary.Uvarint(enc[off:]); q != sa.Header.Params || n <= 0 {
		t.Fatalf("params not at offset %d", off)
	}
	// α = 0: same uvarint length (L sits in the high bits), fresh checksum.
	_, n := binary.Uvarint(enc[off:])
	bad := append(slices.Clone(enc[:off]), binary.AppendUvarint(nil, sa.Header.Params&^(1<<24-1))...)
	bad = append(bad, enc[off+n:len(enc)-4]...)
	bad = binary.LittleEndian.AppendUint32(bad, crc32.Checksum(bad, crc32.MakeTable(crc32.Castagnoli)))
	if len(bad) != len(enc) {
		t.Fatalf("re-encoded params changed the length")
	}
	if err := d.UnmarshalBinary(bad); !errors.Is(err, sketch.ErrCorrupt) {
		t.Fatalf("broken params decoded: %v", err)
	}

	valid := sa.Header
	for name, mut := range map[string]func(*sketch.Header){
		"params zero": func(h *sketch.Header) { h.Params = 0 },
		"k not 2+t·B": func(h *sketch.Header) { h.K++ },
		"bits 3":      func(h *sketch.Header) { h.Bits = 3 },
		"xor at 64":   func(h *sketch.Header) { h.Params |= sketch.ParamXORPair },
		"high bits":   func(h *sketch.Header) { h.Params |= 1 << 60 },
		"tau ≥ t":     func(h *sketch.Header) { h.Params = sketch.HMTParams{Alpha: 0.5, Tau: 4, Scales: 4, L: 4}.Pack() },
		"alpha 0":     func(h *sketch.Header) { h.Params &^= 1<<24 - 1 },
		"scales 1":    func(h *sketch.Header) { h.Params = sketch.HMTParams{Alpha: 0.5, Tau: 1, Scales: 1, L: 4}.Pack() },
		"L below 1":   func(h *sketch.Header) { h.Params = sketch.HMTParams{Alpha: 0.5, Tau: 1, Scales: 3, L: 0.5}.Pack() },
		"no bins":     func(h *sketch.Header) { h.Algorithm = sketch.HMT; h.K = 2 },
	} {
		hh := valid
		mut(&hh)
		if err := hh.Validate(); !errors.Is(err, sketch.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, v := range map[string][2]uint64{
		"NaN log2 weight": {sa.Values[0], math.Float64bits(math.NaN())},
		"Inf log2 weight": {sa.Values[0], math.Float64bits(math.Inf(1))},
		"huge scale":      {1 << 62, sa.Values[1]},
	} {
		c := sa.Clone()
		c.Values[0], c.Values[1] = v[0], v[1]
		if err := c.Validate(); !errors.Is(err, sketch.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := sketch.Jaccard(c, sb); !errors.Is(err, sketch.ErrInvalid) {
			t.Errorf("%s: Jaccard gave %v", name, err)
		}
	}
	// Different HMT parameters or rounding variants never compare.
	h2, _ := weighted.NewHMT(weighted.Options{K: 128, Seed: 9, Alpha: 0.3, Scales: 4, Tau: 2, L: 5})
	if _, err := sketch.Jaccard(sa, sample.Make(h2, b)); !errors.Is(err, sketch.ErrMismatch) {
		t.Errorf("different L: %v", err)
	}
	h3, _ := weighted.NewHMT(weighted.Options{K: 128, Seed: 9, Alpha: 0.3, Scales: 4, Tau: 2, L: 4.5, Independent: true})
	if _, err := sketch.Jaccard(sa, sample.Make(h3, b)); !errors.Is(err, sketch.ErrMismatch) {
		t.Errorf("different rounding: %v", err)
	}
}

// TestHMTParamsPack: every valid parameter set round-trips through a
// header; off-grid or out-of-range ones fail Validate.
func TestHMTParamsPack(t *testing.T) {
	for _, p := range []sketch.HMTParams{
		{Alpha: 0.5, Tau: 1, Scales: 3, L: 4},
		{Alpha: 1 - 0x1p-24, Tau: 62, Scales: 63, L: 4095},
		{Alpha: 0x1p-24, Tau: 1, Scales: 2, L: 1},
		{Alpha: math.Round(0.37*(1<<24)) / (1 << 24), Tau: 3, Scales: 7, L: 4.0625},
	} {
		if err := p.Validate(); err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		h := sketch.Header{Algorithm: sketch.HMT, Version: 1, K: uint32(2 + p.Scales*5), Bits: 64, Params: p.Pack()}
		q, bins, err := h.HMT()
		if err != nil || q != p || bins != 5 {
			t.Fatalf("%+v → %+v, %d, %v", p, q, bins, err)
		}
	}
	for _, p := range []sketch.HMTParams{
		{Alpha: 0.3, Tau: 1, Scales: 3, L: 4}, // off the 2^−24 grid
		{Alpha: 1, Tau: 1, Scales: 3, L: 4},
		{Alpha: 0.5, Tau: 1, Scales: 64, L: 4},
		{Alpha: 0.5, Tau: 1, Scales: 3, L: 4.01},
		{Alpha: 0.5, Tau: 1, Scales: 3, L: 4096},
		{Alpha: 0.5, Tau: 0, Scales: 3, L: 4},
	} {
		if err := p.Validate(); !errors.Is(err, sketch.ErrInvalid) {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

// TestHMTJaccardAllocs: the HMT estimator allocates nothing (sketch.Jaccard
// and weighted's HMT.Estimate, which delegates to it).
func TestHMTJaccardAllocs(t *testing.T) {
	st := rng.New(43)
	a := logUniform(&st, 100, 0.1, 10)
	b := perturbed(&st, a, 0.9, 0.5, 4, 1.3)
	h, _ := weighted.NewHMT(weighted.Options{K: 256})
	sa, sb := sample.Make(h, a), sample.Make(h, b)
	if n := testing.AllocsPerRun(100, func() { sketch.Jaccard(sa, sb) }); n != 0 {
		t.Errorf("sketch.Jaccard: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { h.Estimate(sa.Values, sb.Values) }); n != 0 {
		t.Errorf("HMT.Estimate: %v allocations", n)
	}
}

// BenchmarkJaccardWeighted: estimator cost per pair of sketches at k = 256.
func BenchmarkJaccardWeighted(b *testing.B) {
	st := rng.New(47)
	x := logUniform(&st, 1000, 0.1, 10)
	y := perturbed(&st, x, 0.9, 0.5, 40, 1.3)
	h, _ := weighted.NewHMT(weighted.Options{K: 256})
	ic, _ := weighted.NewICWS(weighted.Options{K: 256})
	for _, smp := range []sample.Sampler{h, ic} {
		sa, sb := sample.Make(smp, x), sample.Make(smp, y)
		b.Run(smp.Header().Algorithm.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(8 * len(sa.Values)))
			for b.Loop() {
				if _, err := sketch.Jaccard(sa, sb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
