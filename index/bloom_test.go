package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

// A blocked filter loaded to its capacity answers wrongly about as often as
// blockFP says (its multiply-shift probes behave as independent ones), and
// that is within the rate it was made for; it never misses a key it holds.
func TestBlockBloomRate(t *testing.T) {
	for _, c := range []struct {
		n uint
		p float64
	}{{20000, 1e-2}, {20000, 1e-3}, {50000, 1e-4}} {
		t.Run(fmt.Sprint(c.p), func(t *testing.T) {
			b := newBlockBloom(c.n, c.p)
			if b == nil {
				t.Fatal("no blocked filter")
			}
			blocks := len(b.words) / blockWords
			want := blockFP(float64(c.n)/float64(blocks), int(b.k))
			if want > c.p {
				t.Fatalf("made for %g, rate %g", c.p, want)
			}
			s := rng.New(uint64(c.n))
			keys := make([]uint64, c.n)
			for i := range keys {
				keys[i] = s.Uint64()
				b.add(keys[i])
			}
			for _, k := range keys {
				if !b.test(k) {
					t.Fatalf("key %x added, not found", k)
				}
			}
			const tests = 2_000_000
			wrong := 0
			for range tests {
				if b.test(s.Uint64()) {
					wrong++
				}
			}
			exp := want * tests
			if d := math.Abs(float64(wrong) - exp); d > 5*math.Sqrt(exp)+2 {
				t.Fatalf("%d false positives in %d, expected %.0f (k %d, %d bits a key)", wrong, tests, exp, b.k, b.bits()/c.n)
			}
			t.Logf("k %d, %.1f bits a key: %d false positives in %d, expected %.0f", b.k, float64(b.bits())/float64(c.n), wrong, tests, exp)
		})
	}
}

// blockFP agrees with a direct sum of the Poisson terms, and a blocked
// filter costs at most half as many bits again as a classic one, else
// newFPFilter makes a classic one.
func TestBlockFP(t *testing.T) {
	direct := func(lambda float64, k int) float64 {
		sum, p := 0.0, math.Exp(-lambda)
		for j := 0; j < 2000; j++ {
			sum += p * math.Pow(1-math.Pow(1-1.0/blockBits, float64(k*j)), float64(k))
			p *= lambda / float64(j+1)
		}
		return sum
	}
	for _, lambda := range []float64{0.5, 13, 18.5, 100, 400} {
		for _, k := range []int{1, 7, 16, 32} {
			got, want := blockFP(lambda, k), direct(lambda, k)
			if math.Abs(got-want) > 1e-9*want+1e-300 {
				t.Errorf("blockFP(%g, %d) = %g, want %g", lambda, k, got, want)
			}
		}
	}
	for _, p := range []float64{0.5, 1e-2, 1e-6, 1e-7} {
		b := newBlockBloom(1<<20, p)
		if b == nil {
			t.Fatalf("%g: no blocked filter", p)
		}
		classic := -float64(1<<20) * math.Log(p) / (math.Ln2 * math.Ln2)
		if float64(b.bits()) > 1.5*classic+blockBits {
			t.Errorf("%g: %d bits, classic %.0f", p, b.bits(), classic)
		}
	}
	if f, ok := newFPFilter(1<<20, 1e-12).(classicBloom); !ok || f.version() != filterClassic {
		t.Errorf("1e-12: %T", f)
	}
	if f := newFPFilter(1<<20, 1e-6); f.version() != filterBlocked {
		t.Errorf("1e-6: version %d", f.version())
	}
}

// The blocked filter's format is pinned: a recorded filter must answer the
// same after an upgrade.
func TestBlockBloomGolden(t *testing.T) {
	b := newBlockBloom(1000, 1e-3)
	for i := range uint64(100) {
		b.add(rng.Mix64(i))
	}
	data, _ := b.appendData(nil)
	sum := sha256.Sum256(data)
	const want = "732f57ede8e243de"
	if got := hex.EncodeToString(sum[:8]); got != want {
		t.Errorf("encoding of the golden filter: %s, want %s", got, want)
	}
	c, err := decodeFilter(filterBlocked, data)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.appendData(nil); string(again) != string(data) {
		t.Error("decoded filter encodes differently")
	}
	for n := range len(data) {
		if _, err := decodeFilter(filterBlocked, data[:n]); err == nil {
			t.Fatalf("a filter cut to %d of %d bytes decodes", n, len(data))
		}
	}
}

// A store whose filter an earlier release recorded (version 1, classic)
// opens and answers from it, and keeps that filter until it outgrows it.
func TestFilterVersion1(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, Config{})
	_, sets := corpus(20, nil, 5)
	var docs []*Doc
	for i, s := range sets {
		docs = append(docs, mkDoc(t, x, fmt.Sprintf("d%d", i), s, false))
	}
	mustAdd(t, x, docs[:10]...)
	if err := x.Flush(bg); err != nil {
		t.Fatal(err)
	}
	// The filter as version 1 recorded it.
	bf := bloom.NewWithEstimates(minFilter, x.cfg.BloomFP)
	old := classicBloom{bf}
	for _, d := range docs[:10] {
		old.add(idKey(d.Fingerprint))
	}
	f := filter{bf: old, capacity: minFilter, n: 10}
	raw, err := f.encode()
	if err != nil || raw[0] != 1 {
		t.Fatal(raw[0], err)
	}
	b := st.NewBatch()
	b.PutMeta(filterMeta, raw)
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	y := mustOpen(t, st, Config{})
	if got := identical(t, y, docs[4].Fingerprint, nil); got != "d4" {
		t.Fatalf("from a version 1 filter: %q", got)
	}
	y.fps.mu.Lock()
	kind := fmt.Sprintf("%T", y.fps.bf)
	y.fps.mu.Unlock()
	if kind != "index.classicBloom" {
		t.Fatalf("loaded %s", kind)
	}
	mustAdd(t, y, docs[10:]...)
	if err := y.Flush(bg); err != nil {
		t.Fatal(err)
	}
	raw, _ = recordedFilter(t, st)
	if raw[0] != filterClassic {
		t.Fatalf("rewritten as version %d", raw[0])
	}
	z := mustOpen(t, st, Config{})
	for _, d := range docs {
		if got := identical(t, z, d.Fingerprint, nil); got != d.Name {
			t.Fatalf("%s: %q", d.Name, got)
		}
	}
	checkClean(t, z)
}

// BenchmarkFilterMake is Flush's work for a build of a million documents:
// a filter for four times as many made and filled.
func BenchmarkFilterMake(b *testing.B) {
	const n = 1 << 20
	fps := make([]uint64, n)
	s := rng.New(1)
	for i := range fps {
		fps[i] = s.Uint64()
	}
	for _, kind := range []string{"classic", "blocked"} {
		b.Run(kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var f fpFilter = newBlockBloom(4*n, 1e-6)
				if kind == "classic" {
					f = classicBloom{bloom.NewWithEstimates(4*n, 1e-6)}
				}
				f.add(fps...)
			}
		})
	}
}
