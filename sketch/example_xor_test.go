package sketch_test

import (
	"fmt"

	"github.com/neardup/neardup/sketch"
)

// HMT section 3.3's XOR of 10 one-bit values: 2,000 independent samples of
// two sets, 2% of them different (J = 0.98), stored in 200 bits each.
func ExampleBinsJaccardXOR() {
	a, b := make([]uint64, 2000), make([]uint64, 2000)
	for i := range a {
		a[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
		b[i] = a[i]
		if i%50 == 7 {
			b[i]++
		}
	}
	xa, _ := sketch.CompressBinsXOR(nil, a, 1, 0, 1, 10)
	xb, _ := sketch.CompressBinsXOR(nil, b, 1, 0, 1, 10)
	e, _ := sketch.BinsJaccardXOR(xa, xb, 1, 10)
	fmt.Printf("%d values, J ≈ %.2f\n", len(xa), e.J)
	// Output: 200 values, J ≈ 0.98
}
