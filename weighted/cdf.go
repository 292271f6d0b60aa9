package weighted

import (
	"math"
	"math/bits"
)

// The hash of MMT section 2.1.2 is h = cdf_z^(−1)(β) with
// cdf_z(a) = a^z (1 − ln a^z) (eqs. 1 and 8). Writing s = −ln a^z = −z ln h,
// cdf_z(h) = e^(−s)(1+s), so with u = 1 − β (also uniform) the hash solves
// C(s) = u for C(s) = 1 − (1+s)e^(−s), the Gamma(2, 1) distribution
// function, and −ln h = s/z. Samples compare by the key
// ln(−ln h) = ln s − ln z (eq. 9): the least key is the greatest hash, and
// the key never overflows, whatever z.

// cdfC returns C(t) = 1 − (1+t)e^(−t), accurately also for small t.
func cdfC(t float64) float64 {
	if t < 0.1 {
		// C(t) = Σ_{n≥2} (−1)^n (n−1) t^n / n!, alternating; 9 terms leave
		// a relative error below 1e−17 at t = 0.1.
		t2 := t * t
		return t2 * (1.0/2 + t*(-1.0/3+t*(1.0/8+t*(-1.0/30+t*(1.0/144+t*(-1.0/840+t*(1.0/5760+t*(-1.0/45360+t*(1.0/403200)))))))))
	}
	return 1 - (1+t)*math.Exp(-t)
}

// mayWin reports whether a feature whose hash is drawn with u = 1 − β and
// whose z satisfies z·E* ≤ t could beat the best hash h* = e^(−E*) so far
// (eq. 7: cdf_z^(−1)(β) > h* iff β > cdf_z(h*) iff u < C(z·E*)). It errs
// towards true by a relative 1e−9 in t, so rounding never hides a winner;
// the exact key comparison decides afterwards.
func mayWin(u, t float64) bool {
	t *= 1 + 1e-9
	if t >= 40 {
		return true
	}
	if u >= 0.5*t*t { // C(t) ≤ t²/2
		return false
	}
	return u < cdfC(t)
}

// invertC returns s > 0 with C(s) = u for u ∈ (0, 1): the numerical
// inversion of cdf_z that section 3.2 avoids whenever it can. Newton's
// method on φ(s) = ln(1+s) − s − ln(1−u), started from a series (small u)
// or asymptotic (large u) approximation, converges in a few steps.
func invertC(u float64) float64 { return invertCTol(u, 1e-15) }

// invertCTol is invertC stopping once a Newton step is below tol·s. For
// 0.01 < s < 0.1, ln(1+s) − s is computed with a relative error near
// 1e−14, so the steps never fall below 1e−15·s and invertC runs all 40
// iterations; the section-3.5 samplers use tol = 1e−13, above that noise
// (invertC keeps 1e−15: sketch.CWS's values are frozen).
func invertCTol(u, tol float64) float64 {
	lt := math.Log1p(-u) // ln(1−u) < 0
	var s float64
	if u < 0.3 {
		w := math.Sqrt(2 * u)
		s = w * (1 + w*(1.0/3+w*(11.0/72)))
	} else {
		a := -lt
		s = a + math.Log1p(a+math.Log1p(a))
	}
	for range 40 {
		var phi float64
		if s < 0.01 {
			// log1p(s) − s = Σ_{n≥2} (−1)^(n+1) s^n / n
			phi = -s * s * (1.0/2 - s*(1.0/3-s*(1.0/4-s*(1.0/5-s*(1.0/6-s*(1.0/7-s/8))))))
		} else {
			phi = math.Log1p(s) - s
		}
		phi -= lt
		step := phi * (1 + s) / s // φ' = −s/(1+s)
		ns := s + step
		if ns <= 0 {
			ns = s / 2
		}
		if math.Abs(ns-s) <= tol*s {
			return ns
		}
		s = ns
	}
	return s
}

// invertCTolN sets s[l] = invertCTol(u[l], tol) for up to 4 values, the
// same operations in the same order for each, so the same results; the
// values' steps are interleaved, so that the processor overlaps their
// chains of dependent operations (a division and a log1p each).
func invertCTolN(u, s []float64, tol float64) {
	var lt, cur [4]float64
	n := min(len(u), len(s), 4)
	for l := range n {
		ul := u[l]
		lt[l] = math.Log1p(-ul) // ln(1−u) < 0
		if ul < 0.3 {
			w := math.Sqrt(2 * ul)
			cur[l] = w * (1 + w*(1.0/3+w*(11.0/72)))
		} else {
			a := -lt[l]
			cur[l] = a + math.Log1p(a+math.Log1p(a))
		}
	}
	live := uint(1)<<n - 1
	for range 40 {
		for m := live; m != 0; m &= m - 1 {
			l := bits.TrailingZeros(m)
			sl := cur[l]
			var phi float64
			if sl < 0.01 {
				phi = -sl * sl * (1.0/2 - sl*(1.0/3-sl*(1.0/4-sl*(1.0/5-sl*(1.0/6-sl*(1.0/7-sl/8))))))
			} else {
				phi = math.Log1p(sl) - sl
			}
			phi -= lt[l]
			step := phi * (1 + sl) / sl
			ns := sl + step
			if ns <= 0 {
				ns = sl / 2
			}
			if math.Abs(ns-sl) <= tol*sl {
				s[l] = ns
				live &^= 1 << uint(l)
				continue
			}
			cur[l] = ns
		}
		if live == 0 {
			return
		}
	}
	for m := live; m != 0; m &= m - 1 {
		l := bits.TrailingZeros(m)
		s[l] = cur[l]
	}
}

// frexpE splits e^q as f·2^x with f ∈ [1/2, 1), for q of any size, so the
// products z·E* of mayWin are formed without overflow.
func frexpE(q float64) (f float64, x int) {
	if math.IsInf(q, 1) {
		return 1, 1 << 30
	}
	l2 := q * (1 / math.Ln2)
	c := math.Floor(l2) + 1
	if c > 1<<30 {
		c = 1 << 30
	} else if c < -(1 << 30) {
		c = -(1 << 30)
	}
	return math.Exp2(l2 - c), int(c)
}

// scaleT returns f·m·2^e saturated: the t = z·E* of mayWin.
func scaleT(f, m float64, e int) float64 {
	if e > 1100 {
		return math.Inf(1)
	}
	if e < -1200 {
		return 0
	}
	if e < -1022 {
		return f * m * pow2(e+200) * 0x1p-200
	}
	return f * m * pow2(e)
}
