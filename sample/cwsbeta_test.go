package sample

import (
	"math"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
)

// TestCWSBetaThroughNew: sample.New reaches MMT section 3.5's samplers by
// their algorithm names, their headers name them, and sketch.Jaccard
// estimates J slot by slot. With K = 4,096 independent slots the match
// count is Binomial(K, J): |estimate − J| ≤ 4·sqrt(J(1−J)/K) fails with
// probability 6e−5 per check.
func TestCWSBetaThroughNew(t *testing.T) {
	a := make([]feature.Feature, 100)
	b := make([]feature.Feature, 100)
	for i := range a {
		a[i] = feature.Feature{ID: uint64(i + 1), Weight: float64(i%7 + 1)}
		b[i] = feature.Feature{ID: uint64(i + 21), Weight: float64(i%5 + 1)}
	}
	j := weighted.Jaccard(a, b)
	for _, name := range []string{"cws-oblivious", "cws-unary"} {
		alg, err := sketch.ParseAlgorithm(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Algorithm: alg, K: 4096, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		sa, sb := Make(s, a), Make(s, b)
		if sa.Header.Algorithm != alg || !alg.IsWeighted() || !alg.SlotWise() {
			t.Errorf("%s: header %v, weighted %v, slot-wise %v", name, sa.Header.Algorithm, alg.IsWeighted(), alg.SlotWise())
		}
		e, err := sketch.Jaccard(sa, sb)
		if err != nil {
			t.Fatal(err)
		}
		if bound := 4 * math.Sqrt(j*(1-j)/4096); math.Abs(e.J-j) > bound {
			t.Errorf("%s: estimate %.4f, J %.4f, bound %.4f", name, e.J, j, bound)
		}
	}
}
