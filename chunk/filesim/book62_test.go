package filesim

import (
	"math"
	"testing"
)

// TestMatchProbBook pins the file-similarity arithmetic of the book's
// section 6.2 (Remote Differential Compression): with 12 samples of 6 bits
// (the RDC preset), "one time in 64, a match would occur purely by chance",
// so a position agrees with probability p + (1−p)/64 = (63p+1)/64 when the
// chunk streams have Jaccard similarity p. The book then uses five or more
// of the twelve lists to find "most files with more than one-third common
// chunks", and expects four chance collisions in some unrelated files but
// not more. From the package's parameters (CandidateProb, the binomial tail
// of MatchProb): at exactly p = 1/3 a pair reaches five matches with
// probability 0.398, more than half from p = 0.37 on and 0.82 at p = 1/2,
// so the book's "most files" holds for similarities spread above a third,
// not at the third itself; an unrelated pair reaches four with probability
// 2.7e-5 and five with 6.7e-7 (a million files: about 27 with four, most
// likely none with five).
func TestMatchProbBook(t *testing.T) {
	if RDC.K != 12 || RDC.Bits != 6 {
		t.Fatalf("RDC preset %+v, book: 12 samples of 6 bits", RDC)
	}
	for _, p := range []float64{0, 0.1, 1.0 / 3, 0.5, 0.9, 1} {
		if got, book := MatchProb(RDC, p), (63*p+1)/64; math.Abs(got-book) > 1e-15 {
			t.Errorf("MatchProb(RDC, %v) = %v, book (63p+1)/64 = %v", p, got, book)
		}
	}
	for _, c := range []struct {
		j    float64
		m    int
		want float64
		tol  float64
	}{
		{1.0 / 3, 5, 0.398491, 5e-7},
		{0.5, 5, 0.820903, 5e-7},
		{0, 4, 2.66848e-5, 5e-11},
		{0, 5, 6.73018e-7, 5e-12},
		{1, 12, 1, 1e-15},
		{0, 0, 1, 1e-15},
	} {
		if got := CandidateProb(RDC, c.j, c.m); math.Abs(got-c.want) > c.tol {
			t.Errorf("CandidateProb(RDC, %.3f, %d) = %.7g, want %.7g", c.j, c.m, got, c.want)
		}
	}
	if CandidateProb(RDC, 0.36, 5) >= 0.5 || CandidateProb(RDC, 0.37, 5) <= 0.5 {
		t.Errorf("five of twelve: crosses 1/2 between J = 0.36 and 0.37, got %.3f and %.3f",
			CandidateProb(RDC, 0.36, 5), CandidateProb(RDC, 0.37, 5))
	}
}

// TestMatchProbSampled checks MatchProb and CandidateProb on sketches. Each
// trial is a pair of 100-chunk files with fresh pseudo-random chunk hashes
// (distinct hashes per trial act as independent random functions) sharing
// 50 chunks (J = 1/3 exactly) or none (J = 0). Over T = 4000 pairs:
//   - the fraction of the 12T positions that agree is a mean of Bernoulli
//     (MatchProb) variables, independent across the min-hash positions, with
//     standard error sqrt(q(1−q)/12T) (0.0022 at J = 1/3, 0.0006 at J = 0);
//   - at J = 1/3 the fraction of pairs with at least 5 matches is a mean of
//     T Bernoulli(CandidateProb) variables, standard error
//     sqrt(P(1−P)/T) = 0.0077.
//
// Each must lie within 5 standard errors (normal tail 6e-7); the seed is
// fixed.
func TestMatchProbSampled(t *testing.T) {
	sk, err := NewSketcher(RDC)
	if err != nil {
		t.Fatal(err)
	}
	const T = 4000
	for _, c := range []struct {
		shared int
		j      float64
	}{{50, 1.0 / 3}, {0, 0}} {
		agree, five := 0, 0
		for tr := range T {
			a, b := pair(tr, c.shared)
			_, m, err := Estimate(sk.Sketch(a), sk.Sketch(b))
			if err != nil {
				t.Fatal(err)
			}
			agree += m
			if m >= 5 {
				five++
			}
		}
		q := MatchProb(RDC, c.j)
		got := float64(agree) / (12 * T)
		se := math.Sqrt(q * (1 - q) / (12 * T))
		t.Logf("J = %.3f: %.4f of positions agree, MatchProb %.4f ± %.4f", c.j, got, q, se)
		if math.Abs(got-q) > 5*se {
			t.Errorf("J = %.3f: %.4f of positions agree, want %.4f ± 5·%.4f", c.j, got, q, se)
		}
		if c.j == 0 {
			continue
		}
		p := CandidateProb(RDC, c.j, 5)
		f := float64(five) / T
		se5 := math.Sqrt(p * (1 - p) / T)
		t.Logf("J = %.3f: %.4f of pairs reach 5 of 12, CandidateProb %.4f ± %.4f", c.j, f, p, se5)
		if math.Abs(f-p) > 5*se5 {
			t.Errorf("J = %.3f: %.4f of pairs reach 5 of 12, want %.4f ± 5·%.4f", c.j, f, p, se5)
		}
	}
}
