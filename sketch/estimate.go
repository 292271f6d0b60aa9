package sketch

import (
	"fmt"
	"math"
)

// Estimate is an estimated similarity with its standard error: the true value
// lies within J ± 2·StdErr about 95% of the time (normal approximation).
//
// HMT and HMTDep sketches may instead answer "similarity below α" (HMT
// Algorithm 3.4): then Below is true, J is not an estimate but an upper
// bound on the similarity that is itself below Alpha (the ratio of the
// smaller to the larger total weight; 0 when one set is empty), and StdErr
// is 0. Callers that threshold J at θ ≥ Alpha therefore reject such pairs
// without looking at Below; to print the answer, test Below first.
//
// The zero value is the estimate 0 ± 0. Estimate is a small value; copy it
// freely.
type Estimate struct {
	J, StdErr float64
	// Below reports HMT's "similarity below Alpha" (see above); always false
	// for other algorithms.
	Below bool
	// Alpha is the HMT sketch's interestingness threshold α, set on every
	// HMT estimate; 0 for other algorithms.
	Alpha float64
	// Scales is the number of HMT scales averaged into J (0 when Below);
	// 0 for other algorithms.
	Scales int
}

// Jaccard estimates the Jaccard similarity |A∩B|/|A∪B| of the sets sketched
// by a and b. It returns an error wrapping ErrMismatch when the headers
// differ, and ErrInvalid for malformed sketches.
//
//   - Slot-wise sketches: Q = fraction of equal slots; J = Q for full values,
//     J = (2^b Q − 1)/(2^b − 1) for b-bit values (book 2.4), clamped to [0, 1];
//     StdErr = sqrt(Q(1−Q)/k)·2^b/(2^b−1). For XOR-pair sketches the
//     corrected Q estimates J², and J is its square root (delta-method
//     error). Two empty sketches have J = 1, one empty one J = 0.
//   - BottomK: restrict both sets to the k' = min(k, |union|) smallest hashes
//     of their union and count those in both: J = c/k', unbiased, with
//     StdErr = sqrt(J(1−J)/k') (conservative: the exact hypergeometric
//     variance carries the factor (N−k')/(N−1) for a union of size N). If
//     both sketches hold all of their sets (fewer than k values), J is exact
//     and StdErr is 0.
//   - Proportional: J = |kept(A) ∩ kept(B)| / |kept(A) ∪ kept(B)| with
//     StdErr = sqrt(J(1−J)/u), u the size of the kept union. When neither
//     sketch kept anything there is no information: J = 0.5, StdErr = 0.5.
//   - CWS, ICWS (weighted): slot-wise as above — value i hashes sample i's
//     (x, y), so slots agree exactly when the samples do, with probability
//     the weighted Jaccard Σmin/Σmax; b-bit compression is corrected alike.
//   - HMT, HMTDep (weighted): Algorithm 3.4 of Haeupler–Manasse–Talwar.
//     Values[0] is the first scale s and Values[1] log₂ of the total weight,
//     then t blocks of B one-permutation bins for scales s … s+t−1. When the
//     total weights differ by more than a factor 1/α the answer is Below
//     (see Estimate). Otherwise the blocks of every scale number both
//     sketches hold are compared — by scale, not by position, since the
//     first scales may differ — each giving q = matches/(B − bins empty in
//     both), and J is the mean of q over those scales with
//     StdErr = sqrt(Σ q(1−q)/m)/n; Scales is their number n (at least t − τ
//     when not Below). If no shared scale holds any element there is no
//     information: J = 0.5, StdErr = 0.5. Two empty sketches have J = 1;
//     one empty one is Below with J = 0. b-bit and ½-bit HMT sketches
//     (CompressHMT, CompressHMTPairs) are corrected per scale as slot-wise
//     ones are; JaccardHMT has Algorithm 3.4 to the letter and the
//     variance-weighted combination.
//
// Cost: O(len(Values)), no allocation.
func Jaccard(a, b *Sketch) (Estimate, error) {
	if err := a.Header.Check(b.Header); err != nil {
		return Estimate{}, err
	}
	if err := a.Validate(); err != nil {
		return Estimate{}, err
	}
	if err := b.Validate(); err != nil {
		return Estimate{}, err
	}
	switch a.Header.Algorithm {
	case BottomK:
		return bottomK(a.Values, b.Values, int(a.Header.K)), nil
	case Proportional:
		return proportional(a.Values, b.Values), nil
	case HMT, HMTDep:
		p, bins, _ := a.Header.HMT() // valid: checked by Validate
		return hmtJaccard(a, b, p, bins, HMTOptions{}), nil
	}
	na, nb := len(a.Values), len(b.Values)
	if na == 0 || nb == 0 {
		if na == nb {
			return Estimate{J: 1}, nil
		}
		return Estimate{}, nil
	}
	eq := 0
	for i, v := range a.Values {
		if v == b.Values[i] {
			eq++
		}
	}
	e := fromMatches(eq, na, a.Header.Bits)
	if a.Header.Params&ParamXORPair != 0 {
		j := math.Sqrt(e.J)
		se := e.StdErr
		if j > 0 {
			se = e.StdErr / (2 * j)
		} else {
			se = math.Sqrt(e.StdErr)
		}
		e = Estimate{J: j, StdErr: math.Min(se, 1)}
	}
	return e, nil
}

// fromMatches turns eq matches out of k slots of b-bit values into an
// estimate of the match probability of full samples.
func fromMatches(eq, k int, bits uint8) Estimate {
	q := float64(eq) / float64(k)
	se := math.Sqrt(q * (1 - q) / float64(k))
	if bits >= 64 {
		return Estimate{J: q, StdErr: se}
	}
	p := math.Ldexp(1, -int(bits)) // chance agreement
	j := (q - p) / (1 - p)
	return Estimate{J: math.Max(0, math.Min(1, j)), StdErr: se / (1 - p)}
}

// BBitUnclamped returns the raw, unclamped b-bit corrected estimate
// (2^b Q − 1)/(2^b − 1) of two slot-wise sketches; it can be negative, and is
// the unbiased form to average over many pairs. Set sketches and HMT
// sketches (not slot-wise) give ErrUnsupported.
func BBitUnclamped(a, b *Sketch) (float64, error) {
	if err := a.Header.Check(b.Header); err != nil {
		return 0, err
	}
	if !a.Header.Algorithm.SlotWise() || len(a.Values) != len(b.Values) || len(a.Values) == 0 {
		return 0, fmt.Errorf("%w: b-bit estimate needs two non-empty slot-wise sketches", ErrUnsupported)
	}
	eq := 0
	for i, v := range a.Values {
		if v == b.Values[i] {
			eq++
		}
	}
	q := float64(eq) / float64(len(a.Values))
	if a.Header.Bits >= 64 {
		return q, nil
	}
	p := math.Ldexp(1, -int(a.Header.Bits))
	return (q - p) / (1 - p), nil
}

func bottomK(a, b []uint64, k int) Estimate {
	i, j, n, c := 0, 0, 0, 0
	for n < k && (i < len(a) || j < len(b)) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			i++
		case i == len(a) || b[j] < a[i]:
			j++
		default:
			c++
			i++
			j++
		}
		n++
	}
	if n == 0 {
		return Estimate{J: 1}
	}
	jj := float64(c) / float64(n)
	if len(a) < k && len(b) < k {
		return Estimate{J: jj} // both sets complete: exact
	}
	return Estimate{J: jj, StdErr: math.Sqrt(jj * (1 - jj) / float64(n))}
}

func proportional(a, b []uint64) Estimate {
	i, j, u, c := 0, 0, 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			i++
		case i == len(a) || b[j] < a[i]:
			j++
		default:
			c++
			i++
			j++
		}
		u++
	}
	if u == 0 {
		return Estimate{J: 0.5, StdErr: 0.5} // nothing kept: no information
	}
	jj := float64(c) / float64(u)
	return Estimate{J: jj, StdErr: math.Sqrt(jj * (1 - jj) / float64(u))}
}

// Containment estimates |A∩B|/|A| from the Jaccard estimate and the set
// sizes: |A∩B| = J(|A|+|B|)/(1+J). Sizes come from the Size fields, or from
// Cardinality when a Size is 0. StdErr propagates only the error of J (sizes
// taken as exact). The result is clamped to [0, 1].
//
// For weighted sketches it is the weighted containment Σmin/|A|₁ (the same
// identity holds with Σmin + Σmax = |A|₁ + |B|₁), with sizes the total
// weights: CWS and ICWS sketches need their Size set (see sample.Make),
// HMT sketches carry their total weight. When the Jaccard estimate is
// Below, so is the result, and its J is the containment implied by the
// Jaccard bound — again an upper bound — with StdErr 0.
func Containment(a, b *Sketch) (Estimate, error) {
	e, err := Jaccard(a, b)
	if err != nil {
		return Estimate{}, err
	}
	sa, sb := a.Size, b.Size
	if sa == 0 {
		if sa, err = Cardinality(a); err != nil {
			return Estimate{}, err
		}
	}
	if sb == 0 {
		if sb, err = Cardinality(b); err != nil {
			return Estimate{}, err
		}
	}
	if sa == 0 { // the empty set is contained in anything
		e.J, e.StdErr, e.Below = 1, 0, false
		return e, nil
	}
	r := (sa + sb) / sa
	c := e.J * r / (1 + e.J)
	// d/dJ [J r/(1+J)] = r/(1+J)^2
	se := e.StdErr * r / ((1 + e.J) * (1 + e.J))
	e.J, e.StdErr = math.Min(1, c), se
	return e, nil
}
