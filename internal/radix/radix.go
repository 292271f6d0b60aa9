// Package radix sorts integers by least significant digit radix sorts:
// the sorts of the batch path, where a million documents' keys are sorted
// several times per run and a comparison sort's O(n log n) branches cost
// more than the few linear passes of a radix sort.
//
// SortHigh32 is the sort of the sort-join (AltaVista's sort and merge of
// (key, document) pairs, "On the Efficient Determination of Most Near
// Neighbors", section 3.1): entries pack a 32-bit key above a 32-bit
// document number, and a stable sort by the key keeps each run of equal
// keys in document order. Order builds on it to order positions by a
// 64-bit key: by the key's high half first, then by the whole key inside
// the rare runs whose high halves are equal.
package radix

import (
	"cmp"
	"slices"
)

// SortHigh32 sorts a stably by the high 32 bits of its entries (three
// passes of 11 bits, each a count and a scatter into b) and returns the
// sorted slice and the other one, for reuse. b must be as long as a.
func SortHigh32(a, b []uint64) (sorted, other []uint64) {
	const bits = 11
	var count [1 << bits]int
	b = b[:len(a)]
	for shift := 32; shift < 64; shift += bits {
		clear(count[:])
		for _, v := range a {
			count[(v>>shift)&(1<<bits-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, v := range a {
			d := (v >> shift) & (1<<bits - 1)
			b[count[d]] = v
			count[d]++
		}
		a, b = b, a
	}
	return a, b
}

// Order returns the numbers 0..n-1 ordered by (key(i), i). n must be
// below 2^32. It costs 16 bytes per number besides the result, and a
// comparison sort only of the numbers whose keys share their high 32
// bits, a few at random keys.
func Order(n int, key func(i int) uint64) []uint32 {
	a := make([]uint64, n)
	for i := range a {
		a[i] = key(i)>>32<<32 | uint64(i)
	}
	a, _ = SortHigh32(a, make([]uint64, n))
	out := make([]uint32, n)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && a[hi]>>32 == a[lo]>>32 {
			hi++
		}
		for k := lo; k < hi; k++ {
			out[k] = uint32(a[k])
		}
		if hi-lo > 1 { // the same high half: by the whole key, then the number
			slices.SortFunc(out[lo:hi], func(x, y uint32) int {
				if c := cmp.Compare(key(int(x)), key(int(y))); c != 0 {
					return c
				}
				return cmp.Compare(x, y)
			})
		}
		lo = hi
	}
	return out
}
