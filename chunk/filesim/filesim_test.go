package filesim

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/internal/rng"
)

// refs returns n chunk refs with pseudo-random sums numbered from base.
func refs(base, n int) []chunk.Ref {
	out := make([]chunk.Ref, n)
	for i := range out {
		binary.LittleEndian.PutUint64(out[i].Sum[:], rng.Hash(99, uint64(base+i)))
	}
	return out
}

// pair returns two chunk lists of 100 chunks each sharing `shared` of them:
// Jaccard shared/(200-shared).
func pair(trial, shared int) ([]chunk.Ref, []chunk.Ref) {
	base := trial * 1000
	common := refs(base, shared)
	a := append(append([]chunk.Ref{}, common...), refs(base+300, 100-shared)...)
	b := append(append([]chunk.Ref{}, common...), refs(base+600, 100-shared)...)
	return a, b
}

// TestEstimateUnbiased: over 400 independent pairs (distinct chunk hashes
// per trial act as independent random functions) the mean estimate matches
// the exact Jaccard. One RDC estimate has standard error
// sqrt(Q(1-Q)/12)·64/63 ≤ 0.147 (Q = J + (1-J)/64); before clamping the
// estimator is unbiased, and clamping at 0 and 1 moves the mean by less than
// the standard error at the J used here, so the mean over 400 pairs lies
// within 4·0.147/sqrt(400) ≈ 0.03 of J, plus 0.02 for clamping bias at the
// extremes.
func TestEstimateUnbiased(t *testing.T) {
	for _, p := range []Params{RDC, Large} {
		sk, err := NewSketcher(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, shared := range []int{20, 67, 90} {
			exact := float64(shared) / float64(200-shared)
			var sum float64
			const trials = 400
			for tr := 0; tr < trials; tr++ {
				a, b := pair(tr, shared)
				if e := ExactJaccard(a, b); math.Abs(e-exact) > 1e-12 {
					t.Fatalf("exact %v, want %v", e, exact)
				}
				j, _, err := Estimate(sk.Sketch(a), sk.Sketch(b))
				if err != nil {
					t.Fatal(err)
				}
				sum += j
			}
			mean := sum / trials
			if math.Abs(mean-exact) > 0.05 {
				t.Errorf("%+v J=%.3f: mean estimate %.3f", p, exact, mean)
			}
		}
	}
}

// TestQueryMatchesScan: the inverted index returns exactly the files a
// linear scan finds with at least m matching positions, in rank order.
func TestQueryMatchesScan(t *testing.T) {
	sk, _ := NewSketcher(RDC)
	ix := NewIndex(RDC)
	var all []Sketch
	s := rng.New(5)
	for i := 0; i < 300; i++ {
		a, _ := pair(int(s.Intn(40)), int(s.Intn(100)))
		sketch := sk.Sketch(a)
		all = append(all, sketch)
		if id, err := ix.Add(sketch); err != nil || id != i {
			t.Fatal(id, err)
		}
	}
	q := all[17]
	got, err := ix.Query(q, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for m := RDC.K; m >= 3; m-- {
		for id, o := range all {
			if _, c, _ := Estimate(q, o); c == m {
				want = append(want, fmt.Sprint(id, ":", c))
			}
		}
	}
	var gs []string
	for _, g := range got {
		gs = append(gs, fmt.Sprint(g.ID, ":", g.Matches))
	}
	if fmt.Sprint(gs) != fmt.Sprint(want) {
		t.Fatalf("query %v\nscan  %v", gs, want)
	}
	if got[0].ID != 17 && got[0].Matches != RDC.K {
		t.Fatalf("self not first: %+v", got[0])
	}
}

func TestMismatch(t *testing.T) {
	a, _ := NewSketcher(RDC)
	b, _ := NewSketcher(Large)
	if _, _, err := Estimate(a.Sketch(refs(0, 5)), b.Sketch(refs(0, 5))); err != ErrMismatch {
		t.Fatal(err)
	}
	if _, err := NewSketcher(Params{Bits: 65}); err == nil {
		t.Fatal("bits 65 accepted")
	}
}

func ExampleIndex() {
	sk, _ := NewSketcher(RDC)
	ix := NewIndex(RDC)
	a, b := pair(1, 95) // 95 of 100 chunks shared
	c, _ := pair(2, 0)  // unrelated
	ix.Add(sk.Sketch(b))
	ix.Add(sk.Sketch(c))
	ms, _ := ix.Query(sk.Sketch(a), 5, 1)
	fmt.Println(ms[0].ID, ms[0].Matches >= 9)
	// Output: 0 true
}

func ExampleSketcher_Sketch() {
	sk, _ := NewSketcher(RDC)
	a, b := pair(3, 100) // identical chunk sets
	sa, sb := sk.Sketch(a), sk.Sketch(b)
	j, m, _ := Estimate(sa, sb)
	fmt.Println(len(sa.Values), j, m, ExactJaccard(a, b))
	// Output: 12 1 12 1
}
