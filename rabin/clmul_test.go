package rabin

import (
	"testing"
	"unsafe"

	"github.com/neardup/neardup/internal/rng"
)

func TestCLFoldLayout(t *testing.T) {
	var c clFold
	if unsafe.Offsetof(c.k512) != 0 || unsafe.Offsetof(c.k128) != 16 || unsafe.Offsetof(c.z) != 32 ||
		unsafe.Offsetof(c.m) != 40 || unsafe.Offsetof(c.qc) != 48 || unsafe.Offsetof(c.k2k) != 56 {
		t.Fatal("clFold's layout differs from the offsets clmul_amd64.s reads")
	}
}

// tablesRoute returns the table route's twin of t (no carry-less route).
func tablesRoute(t *Table) *Table {
	u := *t
	u.cl = nil
	return &u
}

// TestExtendCLModel checks the pure-Go model of the carry-less route
// against the table route (on any CPU).
func TestExtendCLModel(t *testing.T) {
	st := rng.New(6)
	for _, p := range []Poly{DefaultPoly, RandomPrimitive(3)} {
		tab := tablesRoute(New(p))
		c := newCLFold(tab)
		data := make([]byte, 320)
		for i := range data {
			data[i] = byte(st.Uint64())
		}
		for n := 64; n <= len(data); n += 64 {
			f := st.Uint64()
			if got, want := extendCLGo(f, data[:n], c), tab.Extend(f, data[:n]); got != want {
				t.Fatalf("%#x: model of %d bytes = %#x, table route %#x", p, n, got, want)
			}
		}
	}
}

// TestExtendCL checks Extend's carry-less route against the table route
// for every length up to 700 bytes, random states and several polynomials.
func TestExtendCL(t *testing.T) {
	if !hasCLMUL {
		t.Skip("no carry-less multiplication on this CPU")
	}
	st := rng.New(5)
	for _, p := range []Poly{DefaultPoly, RandomPrimitive(1), RandomPrimitive(2)} {
		fast := New(p)
		if fast.cl == nil {
			t.Fatalf("%#x: no carry-less route", p)
		}
		slow := tablesRoute(fast)
		data := make([]byte, 700)
		for i := range data {
			data[i] = byte(st.Uint64())
		}
		for n := 0; n <= len(data); n++ {
			f := st.Uint64()
			if got, want := fast.Extend(f, data[:n]), slow.Extend(f, data[:n]); got != want {
				t.Fatalf("%#x: Extend of %d bytes = %#x, table route %#x", p, n, got, want)
			}
		}
	}
}

// FuzzExtendCL checks Extend's two routes against each other on arbitrary
// bytes. Run: go test ./rabin -fuzz FuzzExtendCL.
func FuzzExtendCL(f *testing.F) {
	f.Add(uint64(0), make([]byte, 128))
	f.Add(uint64(DefaultPoly), []byte("The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog."))
	fast := New(DefaultPoly)
	slow := tablesRoute(fast)
	f.Fuzz(func(t *testing.T, fp uint64, data []byte) {
		if got, want := fast.Extend(fp, data), slow.Extend(fp, data); got != want {
			t.Fatalf("Extend(%#x, %q) = %#x, table route %#x", fp, data, got, want)
		}
	})
}

// TestHash2 checks Hash2, one pass under two polynomials, against Hash
// under each, at every length to 700 bytes (both sides of clMin, every
// tail length) and for polynomials that do and do not take the
// carry-less route.
func TestHash2(t *testing.T) {
	st := rng.New(7)
	data := make([]byte, 700)
	for i := range data {
		data[i] = byte(st.Uint64())
	}
	pairs := [][2]*Table{
		{New(DefaultPoly), New(RandomPrimitive(4))},
		{New(RandomPrimitive(5)), New(RandomPrimitive(6))},
		{New(RandomPrimitive(7)), tablesRoute(New(RandomPrimitive(8)))},
	}
	// Both carry-less routes where the CPU has the AVX-512 one: it, and
	// the AVX one alone (the route of CPUs without AVX-512, and of
	// valgrind).
	defer func(x bool) { hasCL2x = x }(hasCL2x)
	for _, x := range []bool{hasCL2x, false} {
		hasCL2x = x
		for _, tt := range pairs {
			for n := 0; n <= len(data); n++ {
				g1, g2 := Hash2(tt[0], tt[1], data[:n])
				if w1, w2 := tt[0].Hash(data[:n]), tt[1].Hash(data[:n]); g1 != w1 || g2 != w2 {
					t.Fatalf("AVX-512 %v, %#x, %#x: Hash2 of %d bytes = %#x, %#x; Hash %#x, %#x", x, tt[0].Poly(), tt[1].Poly(), n, g1, g2, w1, w2)
				}
			}
		}
	}
}

// FuzzHash2 checks Hash2 against two calls of Hash on arbitrary bytes.
// Run: go test ./rabin -fuzz FuzzHash2.
func FuzzHash2(f *testing.F) {
	f.Add(make([]byte, 128))
	f.Add([]byte("The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog."))
	t1, t2 := New(DefaultPoly), New(RandomPrimitive(9))
	f.Fuzz(func(t *testing.T, data []byte) {
		g1, g2 := Hash2(t1, t2, data)
		if w1, w2 := t1.Hash(data), t2.Hash(data); g1 != w1 || g2 != w2 {
			t.Fatalf("Hash2 of %d bytes = %#x, %#x; Hash %#x, %#x", len(data), g1, g2, w1, w2)
		}
	})
}
