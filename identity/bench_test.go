package identity

import (
	"testing"

	"github.com/neardup/neardup/rabin"
)

// BenchmarkSum: the identity fingerprint of a body, against the 64-bit
// Rabin fingerprint it replaces (rabin.Table.Hash with CLMUL).
//
//	go test ./identity -run '^$' -bench . -cpu 1
func BenchmarkSum(b *testing.B) {
	for _, n := range []int{256, 2048, 7168, 65536} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte('a' + i%26)
		}
		b.Run("blake3-keyed-128/"+itoa(n), func(b *testing.B) {
			h := New(Key{1})
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				h.Sum(body)
			}
		})
		b.Run("rabin-64/"+itoa(n), func(b *testing.B) {
			t := rabin.New(rabin.DefaultPoly)
			b.SetBytes(int64(n))
			for b.Loop() {
				t.Hash(body)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
