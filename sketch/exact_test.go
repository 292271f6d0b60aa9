package sketch_test

import (
	"fmt"
	"testing"

	"github.com/neardup/neardup/sketch"
)

func TestExactJaccard(t *testing.T) {
	cases := []struct {
		a, b []uint64
		want float64
	}{
		{nil, nil, 1},
		{[]uint64{1}, nil, 0},
		{[]uint64{1, 2, 3}, []uint64{2, 3, 4}, 0.5},
		{[]uint64{1, 1, 2}, []uint64{1, 2, 2}, 1},
	}
	for _, c := range cases {
		if got := sketch.ExactJaccard(c.a, c.b); got != c.want {
			t.Errorf("ExactJaccard(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func ExampleExactJaccard() {
	a := []uint64{1, 2, 3, 4}
	b := []uint64{3, 4, 5}
	fmt.Println(sketch.ExactJaccard(a, b))
	// Output: 0.4
}
