package lsh

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

func mustTable(t testing.TB, p Params) *CollapseTable {
	t.Helper()
	ct, err := NewCollapseTable(p)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

// TestCollapseProb checks the table against the exact S-curve: a pair whose
// samples agree position-wise with probability J (the joint law of k
// independent min-hash samples of two sets of Jaccard J) collapses with
// probability Params.Prob(J), 16-bit accidental agreements included.
//
// Bound: over n independent pairs the number collapsed is Binomial(n, P),
// P = Prob(J), with standard deviation sqrt(n P (1−P)). By the normal
// approximation |rate − P| > 4 sqrt(P(1−P)/n) has probability 6.3e-5; the
// 1/n term covers P within 1/n of 0 or 1, where the normal approximation is
// poor but a Binomial with mean below 1 rarely exceeds 1 + 4·1 anyway (and
// the rate is then within 5/n). Over the 20 checks here the chance of a
// spurious failure is below 2e-3, and the seeds are fixed, so the test is
// deterministic.
func TestCollapseProb(t *testing.T) {
	const n = 4000
	chosen, err := ChooseCollapse(CollapseOptions{Threshold: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Params{Bing(), chosen.Params, {R: 4, B: 8, M: 5, KeyBits: 16}, {R: 3, B: 6, M: 3, KeyBits: 8}} {
		ct := mustTable(t, p)
		st := rng.New(rng.Key(3, uint64(p.R), uint64(p.B), uint64(p.M)))
		a, b := make([]uint64, p.K()), make([]uint64, p.K())
		var out []int
		for _, j := range []float64{0.5, 0.7, 0.8, 0.9, 0.95} {
			hits := 0
			for range n {
				pairSamples(&st, a, b, j)
				if err := ct.Put(1, a); err != nil {
					t.Fatal(err)
				}
				if err := ct.Put(2, b); err != nil {
					t.Fatal(err)
				}
				out = ct.Collapse(out[:0], []uint64{1, 2})
				if out[0] != 0 {
					t.Fatalf("best-ranked result not kept: %v", out)
				}
				if out[1] == 0 {
					hits++
				}
			}
			want := p.Prob(j)
			got := float64(hits) / n
			if bound := 4*math.Sqrt(want*(1-want)/n) + 1.0/n; math.Abs(got-want) > bound {
				t.Errorf("%v J=%v: collapse rate %.4f, Prob %.4f (bound %.4f)", p, j, got, want, bound)
			}
		}
	}
}

// TestCollapseAccidental checks that supershingles are really truncated to
// KeyBits and that Prob counts it: unrelated documents (J = 0) agree on one
// of b 16-bit values with probability 1 − (1 − 2^-16)^b ≈ b·2^-16.
// Bound as in TestCollapseProb: 4 standard deviations of Binomial(n, P)
// plus 1/n; n = 400,000 gives about 49 expected agreements at b = 8.
func TestCollapseAccidental(t *testing.T) {
	if testing.Short() {
		t.Skip("400k signatures")
	}
	const n = 400_000
	p := Params{R: 1, B: 8, M: 1, KeyBits: 16}
	ct := mustTable(t, p)
	st := rng.New(rng.Key(4))
	a, b := make([]uint64, p.K()), make([]uint64, p.K())
	var sa, sb []uint16
	hits := 0
	for range n {
		pairSamples(&st, a, b, 0)
		sa, _ = ct.Signature(sa[:0], a)
		sb, _ = ct.Signature(sb[:0], b)
		if ct.Match(sa, sb) {
			hits++
		}
	}
	want := p.Prob(0)
	if math.Abs(want-(1-math.Pow(1-math.Ldexp(1, -16), 8))) > 1e-12 {
		t.Fatalf("Prob(0) = %v", want)
	}
	got := float64(hits) / n
	if bound := 4*math.Sqrt(want*(1-want)/n) + 1.0/n; math.Abs(got-want) > bound {
		t.Errorf("J=0: agreement rate %.2e, Prob %.2e (bound %.2e)", got, want, bound)
	}
}

// collapseOracle is Collapse written the plainest way.
func collapseOracle(sigs map[uint64][]uint16, m int, ids []uint64, verify func(i, j int) bool) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		si, ok := sigs[id]
		if !ok {
			out[i] = Unknown
			continue
		}
		out[i] = i
		for j := 0; j < i; j++ {
			if out[j] != j {
				continue // unknown or dropped: represents nothing
			}
			agree := 0
			for x := range si {
				if si[x] == sigs[ids[j]][x] {
					agree++
				}
			}
			if ids[j] == id || agree >= m && (verify == nil || verify(i, j)) {
				out[i] = j
				break
			}
		}
	}
	return out
}

// TestCollapseOracle compares Collapse with collapseOracle on random lists
// over a tiny alphabet of signature values (so that matches are common),
// with repeated and unknown ids and lists longer than the stack buffers.
func TestCollapseOracle(t *testing.T) {
	st := rng.New(rng.Key(5))
	for _, p := range []Params{Bing(), {R: 1, B: 8, M: 5, KeyBits: 16}, {R: 1, B: 1, M: 1, KeyBits: 2}} {
		ct := mustTable(t, p)
		sigs := map[uint64][]uint16{}
		for id := range uint64(400) {
			sig := make([]uint16, p.B)
			for i := range sig {
				sig[i] = uint16(st.Intn(3))
			}
			ct.PutSignature(id*0x9e3779b97f4a7c15, sig)
			sigs[id*0x9e3779b97f4a7c15] = sig
		}
		for trial := range 300 {
			n := 1 + st.Intn(40)
			if trial%50 == 0 {
				n = 300 + st.Intn(100) // beyond the 256-entry stack buffers
			}
			ids := make([]uint64, n)
			for i := range ids {
				ids[i] = st.Intn(450) * 0x9e3779b97f4a7c15 // ids >= 400 are unknown
			}
			got := ct.Collapse([]int{-7}, ids)
			if got[0] != -7 {
				t.Fatal("Collapse overwrote dst")
			}
			want := collapseOracle(sigs, p.M, ids, nil)
			if !slices.Equal(got[1:], want) {
				t.Fatalf("%v ids %v:\n got %v\nwant %v", p, ids, got[1:], want)
			}
			// With a second opinion that rejects some pairs.
			verify := func(i, j int) bool { return (ids[i]^ids[j])%3 != 0 }
			got, err := ct.CollapseFunc(got[:0], ids, func(i, j int) (bool, error) { return verify(i, j), nil })
			if want := collapseOracle(sigs, p.M, ids, verify); err != nil || !slices.Equal(got, want) {
				t.Fatalf("%v ids %v with verify:\n got %v\nwant %v", p, ids, got, want)
			}
		}
	}
}

// verifyTable is the invariant walker: every bucket sorted, every id in its
// bucket, signatures sized B, the count right.
func verifyTable(t *testing.T, ct *CollapseTable) {
	t.Helper()
	ct.mu.RLock()
	defer ct.mu.RUnlock()
	if len(ct.buckets) != 1<<(32-ct.shift) {
		t.Fatalf("%d buckets with shift %d", len(ct.buckets), ct.shift)
	}
	n := 0
	for i, bk := range ct.buckets {
		if len(bk.sigs) != len(bk.tags)*ct.p.B {
			t.Fatalf("bucket %d: %d tags, %d signature values", i, len(bk.tags), len(bk.sigs))
		}
		for j, tg := range bk.tags {
			if tg>>ct.shift != uint32(i) || j > 0 && bk.tags[j-1] >= tg {
				t.Fatalf("bucket %d: tag %x at %d out of place", i, tg, j)
			}
		}
		n += len(bk.tags)
	}
	if n != ct.n {
		t.Fatalf("%d entries, count says %d", n, ct.n)
	}
}

// TestCollapseTableModel applies random puts, replacements and removals,
// through several bucket splits, and compares the table with a map after
// every round.
func TestCollapseTableModel(t *testing.T) {
	p := Bing()
	ct := mustTable(t, p)
	model := map[uint64][]uint16{}
	st := rng.New(rng.Key(6))
	samples := make([]uint64, p.K())
	var sig []uint16
	for round := range 30 {
		for range 1000 {
			id := st.Intn(20000) << 49 // few distinct top bits: buckets unequal
			if st.Intn(2) == 0 {
				id = st.Uint64()%20000 + uint64(round)<<59
			}
			switch st.Intn(4) {
			case 0:
				if got := ct.Remove(id); got != (model[id] != nil) {
					t.Fatalf("Remove(%x) = %v", id, got)
				}
				delete(model, id)
			default:
				for i := range samples {
					samples[i] = st.Uint64()
				}
				if err := ct.Put(id, samples); err != nil {
					t.Fatal(err)
				}
				sig, _ = ct.Signature(sig[:0], samples)
				model[id] = slices.Clone(sig)
			}
		}
		verifyTable(t, ct)
		if ct.Len() != len(model) {
			t.Fatalf("round %d: Len %d, want %d", round, ct.Len(), len(model))
		}
		for id, want := range model {
			if got, ok := ct.Get(nil, id); !ok || !slices.Equal(got, want) {
				t.Fatalf("Get(%x) = %v %v, want %v", id, got, ok, want)
			}
		}
	}
	ids := slices.Collect(maps.Keys(model))
	if miss := ct.Missing(nil, append(ids[:10:10], 1, 2, 1)); !slices.Equal(miss, []uint64{1, 2}) {
		t.Errorf("Missing = %v", miss)
	}
	if err := ct.Put(3, samples[:5]); err == nil || ct.Has(3) {
		t.Error("Put of a short sketch succeeded")
	}
}

// TestCollapseTableBytes pins the memory per document: a 4-byte tag and
// 2·B of signature, plus growth room and bucket headers, over a range of
// sizes: at most 16 bytes for B = 5 (the verified collapse's table).
func TestCollapseTableBytes(t *testing.T) {
	for _, p := range []Params{Bing(), {R: 4, B: 8, M: 5, KeyBits: 16}, {R: 5, B: 5, M: 2, KeyBits: 16}} {
		ct := mustTable(t, p)
		st := rng.New(rng.Key(7))
		sig := make([]uint16, p.B)
		worst := 0.0
		for i := range 300_000 {
			ct.PutSignature(st.Uint64(), sig)
			if n := i + 1; n%10_000 == 0 {
				worst = max(worst, float64(ct.Bytes())/float64(n))
			}
		}
		payload := float64(4 + 2*p.B)
		if worst > payload*1.1 {
			t.Errorf("%v: up to %.1f bytes per document, want <= %.1f", p, worst, payload*1.1)
		}
		if p.B <= 5 && worst > 16 {
			t.Errorf("%v: up to %.1f bytes per document, want <= 16", p, worst)
		}
		t.Logf("%v: %d bytes signature, up to %.1f bytes per document with the id", p, 2*p.B, worst)
	}
}

func TestCollapseFuncError(t *testing.T) {
	ct := mustTable(t, Params{R: 1, B: 1, M: 1, KeyBits: 16})
	ct.PutSignature(1, []uint16{7})
	ct.PutSignature(2, []uint16{7})
	boom := errors.New("store down")
	if _, err := ct.CollapseFunc(nil, []uint64{1, 2}, func(i, j int) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("CollapseFunc error: %v", err)
	}
	if got, _ := ct.CollapseFunc(nil, []uint64{1, 1, 2}, func(i, j int) (bool, error) { return false, nil }); !slices.Equal(got, []int{0, 0, 2}) {
		t.Errorf("CollapseFunc rejecting all: %v", got)
	}
}

func TestCollapseTableParams(t *testing.T) {
	for _, p := range []Params{{R: 1, B: 9, M: 1, KeyBits: 16}, {R: 1, B: 6, M: 4}, {R: 1, B: 6, M: 4, KeyBits: 17}, {}} {
		if _, err := NewCollapseTable(p); err == nil {
			t.Errorf("NewCollapseTable(%+v) succeeded", p)
		}
	}
	for _, o := range []CollapseOptions{{Threshold: 0.8, BudgetBytes: 18}, {Threshold: 0}, {Threshold: 0.8, BudgetBytes: 1}} {
		if _, err := ChooseCollapse(o); err == nil {
			t.Errorf("ChooseCollapse(%+v) succeeded", o)
		}
	}
	for _, th := range []float64{0.5, 0.8, 0.9, 0.95} {
		c, err := ChooseCollapse(CollapseOptions{Threshold: th, BudgetBytes: 16, MaxSamples: 128})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewCollapseTable(c.Params); err != nil || c.Params.K() > 128 || c.Params.Bytes() > 16 {
			t.Errorf("threshold %v: %v %v", th, c.Params, err)
		}
	}
}

func BenchmarkCollapse(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			ct := mustTable(b, Bing())
			st := rng.New(1)
			ids := make([]uint64, 1_000_000)
			sig := make([]uint16, 6)
			for i := range ids {
				ids[i] = st.Uint64()
				for j := range sig {
					sig[j] = uint16(st.Intn(4)) // frequent matches
				}
				ct.PutSignature(ids[i], sig)
			}
			list := ids[:size]
			out := make([]int, 0, size)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				out = ct.Collapse(out[:0], list)
			}
		})
	}
}

func BenchmarkCollapsePut(b *testing.B) {
	ct := mustTable(b, Bing())
	st := rng.New(1)
	samples := make([]uint64, 30)
	for i := range samples {
		samples[i] = st.Uint64()
	}
	b.ReportAllocs()
	for range b.N {
		ct.Put(st.Uint64(), samples)
	}
	b.ReportMetric(float64(ct.Bytes())/float64(ct.Len()), "bytes/doc")
}

// TestMatchingPairs: the packed comparison proposes exactly the pairs that
// agree on at least M of B values, for every B and M, with unknown ids left out, beyond the
// 256-entry buffers too.
func TestMatchingPairs(t *testing.T) {
	st := rng.New(rng.Key(8))
	for _, p := range []Params{Bing(), {R: 1, B: 8, M: 5, KeyBits: 16}, {R: 1, B: 1, M: 1, KeyBits: 2}, {R: 2, B: 5, M: 1, KeyBits: 16}, {R: 1, B: 3, M: 3, KeyBits: 3}} {
		ct := mustTable(t, p)
		for trial := range 40 {
			n := 1 + int(st.Intn(60))
			if trial == 0 {
				n = 300
			}
			sigs := make([]uint16, n*p.B)
			has := make([]bool, n)
			for i := range sigs {
				sigs[i] = uint16(st.Intn(1 << min(p.KeyBits, 2)))
				if st.Intn(2) == 0 {
					sigs[i] = 0xffff >> (16 - p.KeyBits) // the top value: lanes full
				}
			}
			for i := range has {
				has[i] = st.Intn(8) > 0
			}
			var want, got [][2]int
			for i := range n {
				for j := range i {
					agree := 0
					for k := range p.B {
						if sigs[i*p.B+k] == sigs[j*p.B+k] {
							agree++
						}
					}
					if has[i] && has[j] && agree >= p.M {
						want = append(want, [2]int{i, j})
					}
				}
			}
			ct.MatchingPairs(sigs, has, func(i, j int) { got = append(got, [2]int{i, j}) })
			if !slices.Equal(got, want) {
				t.Fatalf("%v: %d pairs, want %d", p, len(got), len(want))
			}
		}
	}
}
