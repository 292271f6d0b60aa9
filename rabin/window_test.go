package rabin

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// hashWords is the definition a WordWindow must meet: Hash of the units'
// little-endian encodings.
func hashWords(tab *Table, ws []uint64) uint64 {
	var buf []byte
	for _, w := range ws {
		buf = binary.LittleEndian.AppendUint64(buf, w)
	}
	return tab.Hash(buf)
}

func TestWordWindowEqualsRehash(t *testing.T) {
	s := rng.New(31)
	for _, p := range []Poly{DefaultPoly, RandomPrimitive(9)} {
		tab := New(p)
		for _, n := range []int{1, 2, 3, 5, 8, 13, 64} {
			w := NewWordWindow(tab, n)
			if w.Span() != n {
				t.Fatalf("Span() = %d, want %d", w.Span(), n)
			}
			for round := 0; round < 2; round++ { // second round after Reset
				var seq []uint64
				if w.Sum64() != tab.Hash(nil) {
					t.Fatal("empty window is not Hash(nil)")
				}
				for i := 0; i < 3*n+20; i++ {
					x := s.Uint64()
					if i%7 == 3 {
						x = 0 // zero units must count too
					}
					seq = append(seq, x)
					lo := max(0, len(seq)-n)
					want := hashWords(tab, seq[lo:])
					prev := w.Sum64()
					if got := w.Roll(x); got != want {
						t.Fatalf("n=%d step %d: Roll = %#x, rehash = %#x", n, i, got, want)
					}
					if len(seq) > n {
						if got := w.Slide(prev, seq[len(seq)-n-1], x); got != want {
							t.Fatalf("n=%d step %d: Slide = %#x, rehash = %#x", n, i, got, want)
						}
					}
					if w.Sum64() != want {
						t.Fatal("Sum64 differs from Roll's result")
					}
				}
				w.Reset()
			}
		}
	}
}

func TestByteWindowEqualsRehash(t *testing.T) {
	s := rng.New(32)
	for _, p := range []Poly{DefaultPoly, RandomPrimitive(10)} {
		tab := New(p)
		for _, n := range []int{1, 2, 3, 7, 8, 9, 16, 31, 48, 64, 100} {
			w := NewByteWindow(tab, n)
			if w.Span() != n {
				t.Fatalf("Span() = %d, want %d", w.Span(), n)
			}
			for round := 0; round < 2; round++ {
				data := randBytes(&s, 3*n+40)
				for i := range data {
					if i%5 == 0 {
						data[i] = 0
					}
				}
				if w.Sum64() != tab.Hash(nil) {
					t.Fatal("empty window is not Hash(nil)")
				}
				for i, c := range data {
					lo := max(0, i+1-n)
					want := tab.Hash(data[lo : i+1])
					prev := w.Sum64()
					if got := w.Roll(c); got != want {
						t.Fatalf("n=%d step %d: Roll = %#x, rehash = %#x", n, i, got, want)
					}
					if i >= n {
						if got := w.Slide(prev, data[i-n], c); got != want {
							t.Fatalf("n=%d step %d: Slide = %#x, rehash = %#x", n, i, got, want)
						}
					}
				}
				w.Reset()
			}
		}
	}
}

func TestWindowSpanPanics(t *testing.T) {
	tab := New(DefaultPoly)
	for name, f := range map[string]func(){
		"word": func() { NewWordWindow(tab, 0) },
		"byte": func() { NewByteWindow(tab, -3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s window with span < 1 did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestByteWindowAppendRoll checks that AppendRoll equals a loop of Roll,
// in values and in the state it leaves, over random piece sizes.
func TestByteWindowAppendRoll(t *testing.T) {
	s := rng.New(33)
	tab := New(DefaultPoly)
	for _, n := range []int{1, 2, 3, 8, 48, 100} {
		a, b := NewByteWindow(tab, n), NewByteWindow(tab, n)
		data := randBytes(&s, 5000)
		var got, want []uint64
		for off := 0; off < len(data); {
			m := int(s.Intn(uint64(3 * n)))
			if s.Intn(4) == 0 {
				m = int(s.Intn(400))
			}
			m = min(m, len(data)-off)
			got = a.AppendRoll(got, data[off:off+m])
			for _, c := range data[off : off+m] {
				want = append(want, b.Roll(c))
			}
			off += m
			if a.Sum64() != b.Sum64() || a.pos != b.pos || !slices.Equal(a.ring, b.ring) {
				t.Fatalf("n=%d off=%d: state differs after AppendRoll", n, off)
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d position %d: AppendRoll %#x, Roll %#x", n, i, got[i], want[i])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("n=%d: %d values, want %d", n, len(got), len(want))
		}
	}
}
