package identity

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"
)

// Golden vectors: input i%251 of the given length, under the public key
// and under "whats the Elvish word for friend" (BLAKE3's test key). Stored
// indexes depend on these outputs staying the same.
func TestKnownAnswers(t *testing.T) {
	var elvish Key
	copy(elvish[:], "whats the Elvish word for friend")
	for _, c := range []struct {
		n      int
		key    Key
		prefix string
	}{
		{0, Key{}, "5071e10d52cd243cffe0e255d3ac8517"},
		{0, elvish, "fb02b4f27bb7ca31c9d7f3f47cedeec6"},
		{1, elvish, "3bb52efdea0e0c16bed06956ed70fa6f"},
		{1023, elvish, "80719e0083d1df5e0c57dbf0dd607764"},
		{70001, elvish, "f9c1fc8c3a711d9e0e1b73cfd6406f91"}, // rabin.Hash2's AVX-512 route, then its 64-byte one, then the tail
	} {
		in := make([]byte, c.n)
		for i := range in {
			in[i] = byte(i % 251)
		}
		f := New(c.key).Sum(in)
		if f.String() != c.prefix || f.Len != uint64(c.n) || string(f.AppendHex([]byte("x"))) != "x"+c.prefix {
			t.Errorf("len %d key %v: %s (len %d), want %s", c.n, !c.key.IsZero(), f, f.Len, c.prefix)
		}
	}
}

func TestKey(t *testing.T) {
	a, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewKey()
	if a == b || a.IsZero() {
		t.Fatal("two drawn keys are equal, or zero")
	}
	if p, err := ParseKey(a.String() + "\n"); err != nil || p != a {
		t.Fatalf("round trip: %v %v", p, err)
	}
	for _, s := range []string{"", "zz", a.String()[:62]} {
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted", s)
		}
	}
	// The key decides the fingerprint.
	if New(a).Sum([]byte("x")) == New(b).Sum([]byte("x")) || New(a).Sum([]byte("x")) != New(a).Sum([]byte("x")) {
		t.Fatal("keys do not decide the fingerprint")
	}
}

func TestSumAllocs(t *testing.T) {
	h := New(Key{7})
	body := make([]byte, 3000)
	if n := testing.AllocsPerRun(100, func() { h.Sum(body) }); n != 0 {
		t.Fatalf("Sum allocates %v times", n)
	}
}

// TestCollisionRate checks that truncated fingerprints collide as often
// as a random function's would, under many keys, and that the length is
// part of the identity.
//
// Bound: for a random function onto w bits, each of the M = n(n-1)/2
// pairs of n distinct bodies collides with probability p = 2^-w; the
// pair indicators are pairwise independent (two pairs sharing a body
// collide together with probability p², the same as two disjoint pairs),
// so the number of colliding pairs C over R keys has mean μ = R·M·p and
// variance R·M·p(1-p) < μ exactly. With n = 2048, w = 16 and R = 32 keys,
// μ = 32·2096128/65536 = 1023.5 and σ < 32.0; the test accepts |C - μ| <
// 6σ = 192, which by Chebyshev a correct hash fails with probability under
// 1/36, and under a Poisson or normal approximation (C is a sum of many
// rare, nearly independent events) under 10^-8. A linear or biased
// fingerprint — a Rabin fingerprint truncated to the same width over
// bodies that differ in a few bits, say — misses by far more. Fixed keys
// make the test deterministic.
func TestCollisionRate(t *testing.T) {
	const n, w, keys = 2048, 16, 32
	mu := float64(keys) * float64(n*(n-1)/2) / math.Exp2(w)
	sigma := math.Sqrt(mu)
	var total int
	body := make([]byte, 24) // bodies that differ in a few bits only
	for r := range keys {
		var k Key
		k[0], k[31] = byte(r), 0xa5
		h := New(k)
		counts := make(map[uint64]int, n)
		for i := range n {
			binary.LittleEndian.PutUint32(body[8:], uint32(i))
			counts[h.Sum(body).Hi>>(64-w)]++
		}
		for _, c := range counts {
			total += c * (c - 1) / 2
		}
	}
	if d := math.Abs(float64(total) - mu); d > 6*sigma {
		t.Fatalf("%d colliding pairs of %d-bit fingerprints, want %.1f ± %.0f", total, w, mu, 6*sigma)
	}
	t.Logf("%d colliding pairs, expected %.1f (σ %.1f)", total, mu, sigma)

	// Bodies of different lengths never share a fingerprint, even where
	// the 128 bits would (here: forced equal).
	a, b := New(Key{1}).Sum([]byte("ab")), New(Key{1}).Sum([]byte("abc"))
	b.Hi, b.Lo = a.Hi, a.Lo
	if a == b || Compare(a, b) == 0 {
		t.Fatal("the length is not part of the identity")
	}
}

func ExampleHasher_Sum() {
	// The public form (zero key): what `neardup fingerprint` prints by
	// default.
	fmt.Println(New(Key{}).Sum([]byte("The quick brown fox jumps over the lazy dog")))
	// A keyed form: an index's key is drawn with NewKey and kept secret.
	var k Key
	copy(k[:], "an example key, never use it ...")
	a := New(k).Sum([]byte("same body"))
	b := New(k).Sum([]byte("same body"))
	fmt.Println(a == b, a.Len)
	// Output:
	// ae06d1b61882d3ee2b500ac3975747da
	// true 9
}

// TestNewSharesTables: Hashers of one key share the read-only Rabin tables
// (drawn once), and give the same fingerprints from goroutines at once;
// other keys get their own.
func TestNewSharesTables(t *testing.T) {
	a, b, c := New(Key{7}), New(Key{7}), New(Key{8})
	if a.r1 != b.r1 || a.r2 != b.r2 || a.r1 == c.r1 || a.fin == b.fin {
		t.Fatal("tables not shared by one key's Hashers, or shared across keys, or BLAKE3 state shared")
	}
	body := []byte("the same body from every goroutine, long enough for the carry-less route of rabin.Hash2 ........................................................................................................................................................................")
	want := a.Sum(body)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := New(Key{7})
			for range 1000 {
				if h.Sum(body) != want {
					errs <- "a Hasher in another goroutine disagrees"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for i := range maxTables + 1 { // past the cache's size it starts again
		New(Key{9, byte(i)})
	}
	if d := New(Key{7}); d.Sum(body) != want {
		t.Fatal("a key's fingerprints changed after the cache was emptied")
	}
}
