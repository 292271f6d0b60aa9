package rabin

import (
	"bytes"
	"testing"
)

// FuzzConcat checks, for arbitrary a and b: Concat(h(a), h(b), |b|) ==
// h(a‖b); Extend agrees with Hash; a ByteWindow rolled over a‖b agrees with
// rehashing its last span bytes; and everything is deterministic across two
// independently built tables. Run: go test ./rabin -fuzz FuzzConcat.
func FuzzConcat(f *testing.F) {
	f.Add([]byte(""), []byte(""), uint8(1))
	f.Add([]byte("A"), []byte("B"), uint8(2))
	f.Add([]byte("The quick brown "), []byte("fox jumps over the lazy dog"), uint8(48))
	f.Add(bytes.Repeat([]byte{0}, 17), bytes.Repeat([]byte{0xff}, 300), uint8(7))
	t1, t2 := New(DefaultPoly), New(DefaultPoly)
	f.Fuzz(func(t *testing.T, a, b []byte, span uint8) {
		ab := append(append([]byte(nil), a...), b...)
		want := t1.Hash(ab)
		if got := t2.Hash(ab); got != want {
			t.Fatal("Hash not deterministic across tables")
		}
		if got := t1.Concat(t1.Hash(a), t1.Hash(b), len(b)); got != want {
			t.Fatalf("Concat = %#x, Hash(a‖b) = %#x", got, want)
		}
		if got := t1.Extend(t1.Hash(a), b); got != want {
			t.Fatalf("Extend = %#x, Hash(a‖b) = %#x", got, want)
		}
		n := int(span)%64 + 1
		w := NewByteWindow(t1, n)
		var fp uint64
		for _, c := range ab {
			fp = w.Roll(c)
		}
		if len(ab) > 0 {
			if want := t1.Hash(ab[max(0, len(ab)-n):]); fp != want {
				t.Fatalf("span %d: window %#x, rehash %#x", n, fp, want)
			}
		}
	})
}
