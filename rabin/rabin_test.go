package rabin

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

func randBytes(s *rng.Stream, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(s.Uint64())
	}
	return b
}

func TestHashEmptyIsPoly(t *testing.T) {
	tab := New(DefaultPoly)
	if tab.Hash(nil) != uint64(DefaultPoly) || tab.Poly() != DefaultPoly {
		t.Fatal("Hash of the empty string must be the polynomial's q (x^64 mod p)")
	}
}

// TestConcat checks Concat(h(a), h(b), |b|) == h(a‖b) on random strings,
// with lengths of b chosen to hit every branch of the power computation
// (zero, sub-word, a few words, many words).
func TestConcat(t *testing.T) {
	s := rng.New(21)
	for _, p := range []Poly{DefaultPoly, RandomPrimitive(3)} {
		tab := New(p)
		lens := []int{0, 1, 2, 7, 8, 9, 15, 16, 31, 32, 33, 39, 40, 41, 63, 64, 65, 127, 128, 129, 135, 136, 137, 255, 256, 1000, 4096, 65537}
		for i := 0; i < 200; i++ {
			lens = append(lens, int(s.Intn(3000)))
		}
		for _, lb := range lens {
			a := randBytes(&s, int(s.Intn(50)))
			b := randBytes(&s, lb)
			ab := append(slices.Clone(a), b...)
			if got, want := tab.Concat(tab.Hash(a), tab.Hash(b), len(b)), tab.Hash(ab); got != want {
				t.Fatalf("|a|=%d |b|=%d: Concat = %#x, Hash(a‖b) = %#x", len(a), len(b), got, want)
			}
		}
	}
}

// TestConcatHugeLength checks the power table at lengths too long to hash.
// The fingerprint of n zero bytes is x^(8n)·x^64 = p·x^(8n) (shiftBytes),
// checked against the reference's square-and-multiply; then a‖0^n1‖0^n2‖b
// is assembled two ways with Concat, which must agree.
func TestConcatHugeLength(t *testing.T) {
	tab := New(DefaultPoly)
	s := rng.New(22)
	for i := 0; i < 100; i++ {
		n1, n2 := int(s.Uint64()>>4), int(s.Uint64()>>4) // up to 2^60 each
		z1 := tab.shiftBytes(tab.q, uint64(n1))
		z2 := tab.shiftBytes(tab.q, uint64(n2))
		if want := bits.Reverse64(refPowX(8*uint64(n1)+64, conv(DefaultPoly)).lo); z1 != want {
			t.Fatalf("Hash(0^%d) = %#x, reference %#x", n1, z1, want)
		}
		if got, want := tab.Concat(z1, z2, n2), tab.shiftBytes(tab.q, uint64(n1+n2)); got != want {
			t.Fatalf("Concat(0^%d, 0^%d) = %#x, want %#x", n1, n2, got, want)
		}
		fa, fb := tab.Hash(randBytes(&s, 5)), tab.Hash(randBytes(&s, 3))
		one := tab.Concat(tab.Concat(tab.Concat(fa, z1, n1), z2, n2), fb, 3)
		two := tab.Concat(tab.Concat(fa, tab.Concat(z1, z2, n2), n1+n2), fb, 3)
		if one != two {
			t.Fatalf("n1=%d n2=%d: concatenation is not associative", n1, n2)
		}
	}
}

// TestLinearity checks book 3.3's statement for strings of equal length:
// hash(a^b) = hash(a) ^ hash(b) ^ hash(x^len(a)), where the last term is
// the leading 1 that xoring cancels: the fingerprint of len(a) zero bytes.
func TestLinearity(t *testing.T) {
	tab := New(DefaultPoly)
	s := rng.New(23)
	for i := 0; i < 500; i++ {
		n := int(s.Intn(100))
		a, b := randBytes(&s, n), randBytes(&s, n)
		x := make([]byte, n)
		for j := range x {
			x[j] = a[j] ^ b[j]
		}
		if tab.Hash(x) != tab.Hash(a)^tab.Hash(b)^tab.Hash(make([]byte, n)) {
			t.Fatalf("len %d: linearity fails", n)
		}
		// Book 2.2, warning 2: A + B = C + D implies f(A)+f(B) = f(C)+f(D).
		c := randBytes(&s, n)
		d := make([]byte, n)
		for j := range d {
			d[j] = a[j] ^ b[j] ^ c[j]
		}
		if tab.Hash(a)^tab.Hash(b) != tab.Hash(c)^tab.Hash(d) {
			t.Fatalf("len %d: f(A)+f(B) != f(C)+f(D)", n)
		}
	}
}

func TestUint64Forms(t *testing.T) {
	tab := New(RandomPrimitive(5))
	s := rng.New(24)
	var buf []byte
	fp := tab.Hash(nil)
	for i := 0; i < 200; i++ {
		x := s.Uint64()
		le := binary.LittleEndian.AppendUint64(nil, x)
		if tab.HashUint64(x) != tab.Hash(le) {
			t.Fatalf("HashUint64(%#x) != Hash(le)", x)
		}
		buf = append(buf, le...)
		fp = tab.ExtendUint64(fp, x)
		if fp != tab.Hash(buf) {
			t.Fatalf("ExtendUint64 chain != Hash after %d words", i+1)
		}
	}
}

// TestShortStringsInjective: strings of at most 7 bytes are polynomials of
// degree < 64 once the leading 1 is prepended, so they never collide (a
// theorem, not a probability); check it exhaustively for all 65,793
// strings of at most 2 bytes and for 3-byte strings, and then on 3 million
// distinct strings of 8–24 bytes. For a random primitive polynomial a pair
// of distinct strings of at most 192 bits collides with probability at most
// 192/2^63 (Rabin's bound, see the package comment), so a collision among
// these ~4.1 million fingerprints (~8.4e12 pairs) has probability at most
// about 1.7e-4; with the fixed DefaultPoly the test is deterministic, and a
// bug that drops or aliases input bits fails it at once.
func TestShortStringsInjective(t *testing.T) {
	tab := New(DefaultPoly)
	fps := make([]uint64, 0, 1<<22)
	fps = append(fps, tab.Hash(nil))
	var b [3]byte
	for i := 0; i < 256; i++ {
		b[0] = byte(i)
		fps = append(fps, tab.Hash(b[:1]))
		for j := 0; j < 256; j++ {
			b[1] = byte(j)
			fps = append(fps, tab.Hash(b[:2]))
		}
	}
	nLong := 3_000_000
	n3 := 1 << 20 // a 1/16 slice of the 3-byte strings
	if testing.Short() {
		nLong, n3 = 300_000, 1<<16
	}
	for i := 0; i < n3; i++ {
		b[0], b[1], b[2] = byte(i), byte(i>>8), byte(i>>16)
		fps = append(fps, tab.Hash(b[:]))
	}
	// Distinct long strings: the 8-byte little-endian encoding of a
	// bijective mix of i, followed by a length-dependent tail; distinct i
	// give distinct first words, so the strings are distinct.
	var long [24]byte
	for i := 0; i < nLong; i++ {
		binary.LittleEndian.PutUint64(long[:], rng.Mix64(uint64(i)))
		binary.LittleEndian.PutUint64(long[8:], uint64(i))
		n := 8 + i%17
		fps = append(fps, tab.Hash(long[:n]))
	}
	slices.Sort(fps)
	for i := 1; i < len(fps); i++ {
		if fps[i] == fps[i-1] {
			t.Fatalf("collision among %d distinct strings: %#x", len(fps), fps[i])
		}
	}
}

func TestConcatNegativePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Concat with negative length did not panic")
		}
	}()
	New(DefaultPoly).Concat(0, 0, -1)
}

func TestZeroAllocs(t *testing.T) {
	tab := New(DefaultPoly)
	data := make([]byte, 1000)
	ww := NewWordWindow(tab, 5)
	bw := NewByteWindow(tab, 48)
	var sink uint64
	allocs := testing.AllocsPerRun(100, func() {
		sink ^= tab.Hash(data)
		sink ^= tab.Extend(sink, data[:13])
		sink ^= tab.HashUint64(sink)
		sink ^= tab.ExtendUint64(sink, 7)
		sink ^= tab.Concat(sink, sink, 12345)
		sink ^= ww.Roll(sink)
		sink ^= bw.Roll(byte(sink))
		sink ^= ww.Slide(sink, 1, 2)
		sink ^= bw.Slide(sink, 1, 2)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run, want 0", allocs)
	}
	_ = sink
}

// TestConcurrentUse shares one Table between goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	tab := New(DefaultPoly)
	data := randBytes(new(rng.Stream), 4096)
	want := tab.Hash(data)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := NewByteWindow(tab, 48)
			for i := 0; i < 50; i++ {
				if tab.Hash(data) != want {
					t.Error("concurrent Hash differs")
					return
				}
				w.Roll(byte(i))
			}
		}()
	}
	wg.Wait()
}
