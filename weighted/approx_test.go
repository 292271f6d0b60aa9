package weighted

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

var approxSchemes = []struct {
	name string
	beta Beta
}{{"oblivious", BetaOblivious}, {"unary", BetaUnary}}

// TestApproxBetaIdentical: MMT section 3.5's approximate β only rules
// pairs out early; the reference (ApproxBeta disabled, every β drawn in
// full) makes the same samples, (x, y) and value, for the same seed,
// including at extreme weights and as logarithms.
func TestApproxBetaIdentical(t *testing.T) {
	s := rng.New(5)
	wide := logUniform(&s, 300, 1e-150, 1e150)
	sets := [][]feature.Feature{wide, scaleWeights(wide, 1e-150), scaleWeights(wide, 1e150), logUniform(&s, 500, 0.5, 2), logUniform(&s, 3, 1, 1), equalWeights(2000)}
	for _, sch := range approxSchemes {
		for lg := range 2 {
			fast, _ := NewCWS(Options{K: 128, Seed: 1, Beta: sch.beta, LogWeights: lg == 1})
			ref, _ := NewCWS(Options{K: 128, Seed: 1, Beta: sch.beta, LogWeights: lg == 1, Disable: ApproxBeta})
			for si, fs := range sets {
				if lg == 1 {
					fs = logWeights(fs, 0)
				}
				a, b := fast.Samples(nil, fs), ref.Samples(nil, fs)
				if len(a) != len(b) || len(a) != 128 {
					t.Fatalf("%s set %d: %d and %d samples", sch.name, si, len(a), len(b))
				}
				for j := range a {
					if a[j].ID != b[j].ID || a[j].LogY != b[j].LogY {
						t.Fatalf("%s log=%d set %d sample %d: %+v, reference %+v", sch.name, lg, si, j, a[j], b[j])
					}
				}
				if m := matches(fast.Sketch(nil, fs), ref.Sketch(nil, fs)); m != 128 {
					t.Errorf("%s set %d: %d of 128 values agree", sch.name, si, m)
				}
				cf, cr := fast.Count(fs), ref.Count(fs)
				if cf.BetaFull >= cr.BetaFull && len(fs) > 100 {
					t.Errorf("%s set %d: approximate β drew %d full β, the reference %d", sch.name, si, cf.BetaFull, cr.BetaFull)
				}
			}
		}
	}
}

func equalWeights(n int) []feature.Feature {
	fs := make([]feature.Feature, n)
	for i := range fs {
		fs[i] = feature.Feature{ID: uint64(i)*0x9e3779b97f4a7c15 + 1, Weight: 1}
	}
	return fs
}

// TestApproxBetaCollisionProbability: the section-3.5 samplers are
// consistent weighted samplers, P(sample(S) = sample(T)) = Σmin/Σmax. As in
// TestCollisionProbability, K = 10,000 independent sample functions give a
// Binomial(K, J) match count, so |Q − J| ≤ 4·sqrt(J(1−J)/K) fails with
// probability 6e−5 per check (16 checks here).
func TestApproxBetaCollisionProbability(t *testing.T) {
	const k = 10000
	for _, sch := range approxSchemes {
		c, _ := NewCWS(Options{K: k, Seed: 11, Beta: sch.beta})
		cl, _ := NewCWS(Options{K: k, Seed: 11, Beta: sch.beta, LogWeights: true})
		for ti, target := range []float64{0.2, 0.5, 0.8, 0.95} {
			a, b := pairAt(uint64(100+ti), 40, 1e-3, 1e3, target)
			j := Jaccard(a, b)
			bound := 4 * math.Sqrt(j*(1-j)/k)
			for _, v := range []struct {
				name string
				s    *CWS
				a, b []feature.Feature
			}{{"plain", c, a, b}, {"log+5000", cl, logWeights(a, 5000), logWeights(b, 5000)}} {
				q := float64(matches(v.s.Sketch(nil, v.a), v.s.Sketch(nil, v.b))) / k
				if math.Abs(q-j) > bound {
					t.Errorf("%s %s J=%.4f: collision rate %.4f, |diff| > 4 SE = %.4f", sch.name, v.name, j, q, bound)
				}
			}
		}
	}
}

// TestApproxBetaBits checks the random bits section 3.5 hands out. The
// oblivious scheme gives each pair exactly 8 bits of prefix; the unary
// prefix is a run of ones and its zero, Geometric(1/2) bits with mean 2 and
// variance 2, independent across the N pairs, so the mean lies within
// 4·sqrt(2/N) of 2. A full β costs 53 more bits. Figure 2's shape: the
// oblivious scheme can never rule out a prefix 11111111, so it draws at
// least ≈ N/256 full β (a Binomial(N, 1/256) count, 4 SE below); at
// n = 10,000 equal weights the unary scheme draws fewer than that, and at
// n = 10 more than the oblivious one.
func TestApproxBetaBits(t *testing.T) {
	const k = 256
	counts := map[string]map[int]Counts{}
	for _, sch := range approxSchemes {
		c, _ := NewCWS(Options{K: k, Seed: 3, Beta: sch.beta})
		counts[sch.name] = map[int]Counts{}
		for _, n := range []int{10, 10000} {
			cnt := c.Count(equalWeights(n))
			counts[sch.name][n] = cnt
			N := float64(cnt.Pairs)
			prefix := float64(cnt.BetaBits-53*cnt.BetaFull) / N
			switch sch.beta {
			case BetaOblivious:
				if prefix != 8 {
					t.Errorf("oblivious n=%d: %.3f prefix bits per pair, want 8", n, prefix)
				}
				if floor := N/256 - 4*math.Sqrt(N/256); float64(cnt.BetaFull) < floor {
					t.Errorf("oblivious n=%d: %d full β, below the 1/256 floor %.0f", n, cnt.BetaFull, floor)
				}
			case BetaUnary:
				if math.Abs(prefix-2) > 4*math.Sqrt(2/N) {
					t.Errorf("unary n=%d: %.4f prefix bits per pair, want 2 ± %.4f", n, prefix, 4*math.Sqrt(2/N))
				}
			}
			if cnt.ZExact > cnt.BetaFull || cnt.BestChanges > cnt.ZExact {
				t.Errorf("%s n=%d: counts out of order %+v", sch.name, n, cnt)
			}
			t.Logf("%s n=%5d: %+v (%.2f bits/pair)", sch.name, n, cnt, float64(cnt.BetaBits)/N)
		}
	}
	ob, un := counts["oblivious"], counts["unary"]
	if !(un[10000].BetaFull < ob[10000].BetaFull) {
		t.Errorf("n=10000: unary drew %d full β, oblivious %d; want unary fewer", un[10000].BetaFull, ob[10000].BetaFull)
	}
	if !(ob[10].BetaFull < un[10].BetaFull) {
		t.Errorf("n=10: oblivious drew %d full β, unary %d; want oblivious fewer", ob[10].BetaFull, un[10].BetaFull)
	}
}

func ExampleBeta() {
	exact, _ := NewCWS(Options{K: 1024, Seed: 1})
	fast, _ := NewCWS(Options{K: 1024, Seed: 1, Beta: BetaUnary})
	a := []feature.Feature{{ID: 1, Weight: 3}, {ID: 2, Weight: 1}, {ID: 3, Weight: 0.5}}
	b := []feature.Feature{{ID: 1, Weight: 2}, {ID: 2, Weight: 1}, {ID: 4, Weight: 0.5}}
	fmt.Printf("J = %.3f\n", Jaccard(a, b))
	for _, c := range []*CWS{exact, fast} {
		n := c.Count(a)
		est := float64(matches(c.Sketch(nil, a), c.Sketch(nil, b))) / 1024
		fmt.Printf("%-9s estimate %.2f, %.1f bits of β per (feature, sample)\n", c.Header().Algorithm, est, float64(n.BetaBits)/float64(n.Pairs))
	}
	// Output:
	// J = 0.600
	// cws       estimate 0.59, 64.0 bits of β per (feature, sample)
	// cws-unary estimate 0.58, 30.3 bits of β per (feature, sample)
}

// TestInvertCTol: the looser stop of the section-3.5 samplers still solves
// C(s) = u to 1e−13 relative (cdfC's own error is near 1e−16 there), and
// ends within 1e−12 of invertC.
func TestInvertCTol(t *testing.T) {
	for _, u := range []float64{1e-12, 1e-6, 1e-5, 1e-4, 1e-3, 4e-3, 0.01, 0.2, 0.5, 0.9, 1 - 1e-9} {
		s := invertCTol(u, 1e-13)
		if u < 0.5 {
			if got := cdfC(s); math.Abs(got-u) > 1e-13*u {
				t.Errorf("C(invertCTol(%g)) = %g", u, got)
			}
		}
		if r := invertC(u); math.Abs(s-r) > 1e-12*r {
			t.Errorf("invertCTol(%g) = %v, invertC %v", u, s, r)
		}
	}
}

// TestGoldenBeta pins the section-3.5 samplers' output (sketch.CWSOblivious
// and CWSUnary) in testdata/golden_beta.txt, apart from golden.txt so the
// older samplers' file stays byte for byte. Regenerate with -update only
// with a Version bump.
func TestGoldenBeta(t *testing.T) {
	var buf bytes.Buffer
	in := goldenInputs()
	for _, name := range []string{"small", "extreme"} {
		for _, sch := range approxSchemes {
			c, _ := NewCWS(Options{K: 8, Seed: 42, Beta: sch.beta})
			cl, _ := NewCWS(Options{K: 8, Seed: 42, Beta: sch.beta, LogWeights: true})
			fmt.Fprintf(&buf, "%s %s %x\n", c.Header().Algorithm, name, c.Sketch(nil, in[name]))
			fmt.Fprintf(&buf, "%s-log %s %x\n", c.Header().Algorithm, name, cl.Sketch(nil, logWeights(in[name], 0)))
		}
	}
	checkGolden(t, "golden_beta.txt", buf.Bytes(), "section-3.5 sampler output changed")
}

// groupObliviousRef is the group test of scanOblivious one pair at a time,
// as runApprox had it before it tested the eight pairs of a group at once.
func groupObliviousRef(zw, zn, pw, mask uint64, hi []int, base int) (surv uint) {
	for jj, hj := range hi {
		c := int(obliviousC[uint8(pw)])
		tz := bits.TrailingZeros64(zw&mask | zn&0xff<<8 | 1<<60)
		if 2*tz+c > min(hj-base, 119) {
			surv |= 1 << uint(jj&7)
		}
		zw >>= 8
		zn >>= 8
		pw >>= 8
	}
	return surv
}

// TestScanOblivious: the byte-parallel group test rules out exactly the
// pairs the pair-by-pair one does, for random keys (every mask, so bytes of
// zw&mask are often empty; zn's bytes are empty and prefixes 255 one time
// in 256), thresholds on both sides of the bounds and K not a multiple of
// 8; obliviousC is the leading ones of the prefix below 255.
func TestScanOblivious(t *testing.T) {
	for p := range 255 {
		if int(obliviousC[p]) != bits.LeadingZeros8(^uint8(p)) {
			t.Fatalf("obliviousC[%d] = %d", p, obliviousC[p])
		}
	}
	s := rng.New(9)
	seen := [3]int{} // survivors for p = 255, both bytes empty, others
	for range 20000 {
		k := 1 + int(s.Uint64()%40)
		c, _ := NewCWS(Options{K: k, Beta: BetaOblivious})
		sc := c.pool.Get().(*cwsScratch)
		hb, hb1, hu := s.Uint64(), s.Uint64(), s.Uint64()
		mask := uint64(0xff << (s.Uint64() % 8) & 0xff)
		blk := int(int64(s.Uint64()%64)) - 32
		hi := make([]int, k)
		for j := range hi {
			hi[j] = blk<<4 + int(int64(s.Uint64()%60)) - 20
			if s.Uint64()%16 == 0 {
				hi[j] = -(1 << 31)
			} else if s.Uint64()%16 == 0 {
				hi[j] = blk<<4 + 200
			}
		}
		rw := sc.rw[0]
		for g := range rw {
			rw[g] = obliviousR(hi[g<<3:min(g<<3+8, k)], blk)
		}
		scanOblivious(sc.gw, hb, hb1, hu, mask*0x0101010101010101, rw)
		for g := range rw {
			gi := uint64(g+1) * golden
			zw, zn, pw := rng.Mix64(hb+gi), rng.Mix64(hb1+gi), rng.Mix64(hu+gi)
			w := sc.gw[4*g : 4*g+4]
			if w[0] != zw || w[1] != zn || w[2] != pw {
				t.Fatalf("group %d: words %x %x %x, want %x %x %x", g, w[0], w[1], w[2], zw, zn, pw)
			}
			want := groupObliviousRef(zw, zn, pw, mask, hi[g<<3:min(g<<3+8, k)], blk<<4)
			if got := uint(w[3]) & (1<<min(8, k-g<<3) - 1); got != want || w[3] > 0xff {
				t.Fatalf("k %d group %d zw %x zn %x pw %x mask %x hi %v blk %d: %08b, pair by pair %08b",
					k, g, zw, zn, pw, mask, hi[g<<3:min(g<<3+8, k)], blk, w[3], want)
			}
			for jj := range min(8, k-g<<3) {
				if want>>jj&1 == 0 {
					continue
				}
				switch {
				case pw>>(8*jj)&0xff == 0xff:
					seen[0]++
				case zw>>(8*jj)&mask == 0 && zn>>(8*jj)&0xff == 0:
					seen[1]++
				default:
					seen[2]++
				}
			}
		}
		c.pool.Put(sc)
	}
	if seen[0] == 0 || seen[1] == 0 || seen[2] == 0 {
		t.Errorf("survivors by prefix 255, empty bytes, threshold: %v; every case should occur", seen)
	}
}

// TestInvertCTolN: the interleaved inversions give invertCTol's values bit
// for bit, for u across (0, 1) (log-uniform down to 1e−300, and around the
// branches at u = 0.3 and s = 0.01), in batches of 1 to 4.
func TestInvertCTolN(t *testing.T) {
	s := rng.New(11)
	us := []float64{0.3, math.Nextafter(0.3, 0), math.Nextafter(0.3, 1), 5e-5, 1 - 1e-16, 1e-300, 0.5}
	for range 20000 {
		switch s.Uint64() % 3 {
		case 0:
			us = append(us, s.Open01())
		case 1:
			us = append(us, math.Pow(10, -300*s.Float64()))
		default:
			us = append(us, math.Pow(10, -6*s.Float64()))
		}
	}
	var out [4]float64
	for i := 0; i < len(us); {
		b := us[i:min(i+1+int(s.Uint64()%4), len(us))]
		i += len(b)
		invertCTolN(b, out[:len(b)], 1e-13)
		for l, u := range b {
			if want := invertCTol(u, 1e-13); math.Float64bits(out[l]) != math.Float64bits(want) {
				t.Fatalf("invertCTolN(%v) = %v, invertCTol %v", u, out[l], want)
			}
		}
	}
}
