package chunk

import (
	"math"
	"testing"
)

// noLead is the probability that a window of w boundaries holds no position
// whose lead (lb bits, uniform on random data) is zero: (1 − 2^−lb)^w.
func noLead(w int, lb uint) float64 {
	return math.Pow(1-math.Ldexp(1, -int(lb)), float64(w))
}

// TestLeadByteOddsBook pins the arithmetic of the book's section 6.2
// (accelerated winnowing): a lead byte is non-zero with probability 255/256,
// (255/256)^256 = 0.36716, and a 1 KiB outer window (1024 boundaries) holds
// no zero lead byte "approximately 1 time in 55" ((255/256)^1024 = 1/55.0),
// at 10 KiB "approximately 4 windows out of 10 to the 18th", at 100 KiB "a
// few times in 10 raised to the 175th". The lead width is the package's own
// (leadBits): 8 bits, the book's byte, for a window of 1024 boundaries. The
// book's larger windows assume a byte; the package widens the lead there.
func TestLeadByteOddsBook(t *testing.T) {
	lb := leadBits(1024)
	if lb != 8 {
		t.Fatalf("lead of a 1024-boundary window is %d bits, want the book's byte", lb)
	}
	if got := noLead(256, lb); math.Abs(got-0.36716) > 5e-6 {
		t.Errorf("(255/256)^256 = %.6f, book 0.36716", got)
	}
	if odds := 1 / noLead(1024, lb); math.Round(odds) != 55 {
		t.Errorf("1 KiB window without a zero lead byte: 1 in %.2f, book 1 in 55", odds)
	}
	if got := noLead(10240, 8) * 1e18; math.Round(got) != 4 {
		t.Errorf("10 KiB: %.2f in 1e18, book about 4", got)
	}
	if e := math.Log10(noLead(102400, 8)); e < -175 || e > -174 {
		t.Errorf("100 KiB: 10^%.2f, book a few times 10^-175", e)
	}
	// At a 1 KiB average chunk with the default sizes (Min 768, Max 1280)
	// the window is 513 boundaries, still with a lead byte: about 1 window
	// in 7.45 has no zero lead and takes the fallback.
	o := Options{Avg: 1024}.EnsureDefaults()
	if w := o.Max - o.Min + 1; w != 513 || leadBits(w) != 8 || math.Abs(1/noLead(w, 8)-7.45) > 0.005 {
		t.Errorf("Avg 1 KiB: window %d, lead %d bits, 1 in %.2f without a zero lead; want 513, 8, 1 in 7.45", w, leadBits(w), 1/noLead(w, leadBits(w)))
	}
	// The package's claim (leadBits): from 2048 boundaries on, the lead is
	// widened so that a window lacks a candidate with probability below
	// e^-8; below that the lead stays a byte and the book's odds apply.
	for w := 2048; w <= 1<<20; w += w/7 + 1 {
		if p := noLead(w, leadBits(w)); p >= math.Exp(-8) {
			t.Errorf("window %d, lead %d bits: no candidate with probability %.3g ≥ e^-8", w, leadBits(w), p)
		}
	}
}

// TestLeadByteOddsSampled measures how often the fast mode finds no
// zero-lead position in a 1 KiB outer window (Min 1024, Max 2047: 1024
// boundaries) of random data and has to fall back (book 6.2: about 1 time
// in 55). Each trial is a fresh random buffer, so trials are independent;
// within a window the leads are the top bits of gear hashes of different
// 64-byte spans, which on random data behave as independent uniforms (the
// book's model, which this test checks). With N = 40000 windows the number
// of empty ones is Binomial(N, p), p = (255/256)^1024 = 0.018174, mean 727
// and SD sqrt(Np(1−p)) = 26.7; it must lie within 5 SD of the mean (normal
// tail 6e-7). The fixed seed makes the run repeatable.
func TestLeadByteOddsSampled(t *testing.T) {
	o := Options{Min: 1024, Max: 2047}.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	n := 40000
	if testing.Short() {
		n = 10000
	}
	w := newWinnower(o)
	lb := 64 - w.shift
	p := noLead(o.Max-o.Min+1, lb)
	empty := 0
	for i := range n {
		d := randBytes(uint64(i)+1<<40, o.Max+1)
		w.reset()
		w.warm(d, o.Min)
		w.scanFast(d, o.Max)
		if w.r.n == 0 {
			empty++
		}
	}
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	t.Logf("lead %d bits: %d of %d windows without a zero lead (1 in %.1f), expected %.0f ± %.1f (1 in %.1f)",
		lb, empty, n, float64(n)/float64(empty), mean, sd, 1/p)
	if math.Abs(float64(empty)-mean) > 5*sd {
		t.Errorf("%d of %d windows without a zero lead, expected %.0f ± %.1f", empty, n, mean, sd)
	}
}
