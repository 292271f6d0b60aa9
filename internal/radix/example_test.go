package radix_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/radix"
)

func ExampleSortHigh32() {
	// (key, document) entries: documents 0..3 with keys 7, 3, 7, 1.
	a := []uint64{7<<32 | 0, 3<<32 | 1, 7<<32 | 2, 1<<32 | 3}
	sorted, _ := radix.SortHigh32(a, make([]uint64, len(a)))
	for _, e := range sorted {
		fmt.Print(e>>32, ":", uint32(e), " ")
	}
	fmt.Println()
	// Output: 1:3 3:1 7:0 7:2
}

func ExampleOrder() {
	keys := []uint64{1 << 40, 5, 1<<40 + 1, 5}
	fmt.Println(radix.Order(len(keys), func(i int) uint64 { return keys[i] }))
	// Output: [1 3 0 2]
}
