package rabin

import (
	"fmt"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

var sink uint64

// Target (issue): Hash >= 1.5 GB/s over 64 KiB.
func BenchmarkHash(b *testing.B) {
	tab := New(DefaultPoly)
	s := rng.New(41)
	for _, n := range []int{5, 13, 8, 64, 1 << 10, 64 << 10} {
		data := randBytes(&s, n)
		b.Run(fmt.Sprintf("%dB", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sink ^= tab.Hash(data)
			}
		})
	}
}

// BenchmarkHash2 fingerprints one body under two polynomials, as
// identity does for every document: one pass on the carry-less route and,
// since the table route's hash2Tables, on the table route (-tags purego)
// too.
func BenchmarkHash2(b *testing.B) {
	t1, t2 := New(DefaultPoly), New(RandomPrimitive(3))
	s := rng.New(43)
	for _, n := range []int{100, 6 << 10} {
		data := randBytes(&s, n)
		b.Run(fmt.Sprintf("%dB", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				f1, f2 := Hash2(t1, t2, data)
				sink ^= f1 ^ f2
			}
		})
	}
}

func BenchmarkHashUint64(b *testing.B) {
	tab := New(DefaultPoly)
	b.ReportAllocs()
	x := uint64(1)
	for b.Loop() {
		x = tab.HashUint64(x)
	}
	sink ^= x
}

func BenchmarkConcat(b *testing.B) {
	tab := New(DefaultPoly)
	for _, n := range []int{5, 40, 1000, 1 << 20} {
		b.Run(fmt.Sprintf("lenB=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			f := uint64(12345)
			for b.Loop() {
				f = tab.Concat(f, 0x9e3779b97f4a7c15, n)
			}
			sink ^= f
		})
	}
}

// ns per Slide step over uint64 units (k-word shingles). Target: a few ns.
func BenchmarkWordWindowRoll(b *testing.B) {
	tab := New(DefaultPoly)
	w := NewWordWindow(tab, 5)
	s := rng.New(42)
	in := make([]uint64, 4096)
	for i := range in {
		in[i] = s.Uint64()
	}
	b.ReportAllocs()
	i := 0
	var f uint64
	for b.Loop() {
		f ^= w.Roll(in[i&4095])
		i++
	}
	sink ^= f
}

// ns per Slide step over bytes (content-defined chunking, span 48).
// Target: 1-2 ns. SetBytes makes the MB/s column the scan rate.
func BenchmarkByteWindowRoll(b *testing.B) {
	tab := New(DefaultPoly)
	w := NewByteWindow(tab, 48)
	s := rng.New(43)
	in := randBytes(&s, 4096)
	b.SetBytes(1)
	b.ReportAllocs()
	i := 0
	var f uint64
	for b.Loop() {
		f ^= w.Roll(in[i&4095])
		i++
	}
	sink ^= f
}

// The stateless form over a caller's buffer, as a chunker scans it.
func BenchmarkByteWindowSlide(b *testing.B) {
	tab := New(DefaultPoly)
	w := NewByteWindow(tab, 48)
	s := rng.New(44)
	data := randBytes(&s, 64<<10)
	b.SetBytes(int64(len(data) - 48))
	b.ReportAllocs()
	for b.Loop() {
		fp := tab.Hash(data[:48])
		for i := 48; i < len(data); i++ {
			fp = w.Slide(fp, data[i-48], data[i])
		}
		sink ^= fp
	}
}

// The bulk scan: every position's fingerprint of a 64 KiB buffer.
func BenchmarkByteWindowAppendRoll(b *testing.B) {
	tab := New(DefaultPoly)
	w := NewByteWindow(tab, 48)
	s := rng.New(45)
	data := randBytes(&s, 64<<10)
	dst := make([]uint64, 0, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		dst = w.AppendRoll(dst[:0], data)
	}
	sink ^= dst[len(dst)-1]
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink ^= New(DefaultPoly).q
	}
}

func BenchmarkIsPrimitive(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if !IsPrimitive(DefaultPoly) {
			b.Fatal("not primitive")
		}
	}
}

func BenchmarkRandomPrimitive(b *testing.B) {
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		sink ^= uint64(RandomPrimitive(seed))
		seed++
	}
}
