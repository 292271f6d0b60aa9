package lsh_test

import (
	"fmt"

	"github.com/neardup/neardup/lsh"
)

func ExampleScheme_Keys() {
	s, err := lsh.New(lsh.AltaVista()) // 84 samples, 6 × 14, at least 2 of 6
	if err != nil {
		panic(err)
	}
	a := make([]uint64, 84)
	b := make([]uint64, 84)
	for i := range a {
		a[i], b[i] = uint64(i), uint64(i)
	}
	// b differs from a in bands 2, 4 and 5: bands 0, 1 and 3 agree, so the
	// pairs (0,1), (0,3), (1,3) share a key.
	b[2*14], b[4*14], b[5*14] = 1000, 1001, 1002
	ka, _ := s.Keys(nil, a)
	kb, _ := s.Keys(nil, b)
	for c := range ka {
		if ka[c] == kb[c] {
			fmt.Println("shared key for bands", s.Combination(c))
		}
	}
	fmt.Println(s.NumKeys(), "keys per document")
	// Output:
	// shared key for bands [0 1]
	// shared key for bands [0 3]
	// shared key for bands [1 3]
	// 15 keys per document
}

func ExampleParams_Prob() {
	for _, p := range []lsh.Params{lsh.AltaVista(), lsh.Bing(), lsh.Banding(5, 20)} {
		fmt.Printf("%-30v %3d bytes  P(0.7)=%.4f P(0.9)=%.4f P(0.95)=%.4f\n",
			p, p.Bytes(), p.Prob(0.7), p.Prob(0.9), p.Prob(0.95))
	}
	// Output:
	// k=84 r=14 b=6 m=2 keybits=64    48 bytes  P(0.7)=0.0007 P(0.9)=0.4151 P(0.95)=0.8786
	// k=30 r=5 b=6 m=4 keybits=16     12 bytes  P(0.7)=0.0090 P(0.9)=0.5246 P(0.95)=0.8663
	// k=100 r=5 b=20 m=1 keybits=64  160 bytes  P(0.7)=0.9748 P(0.9)=1.0000 P(0.95)=1.0000
}

func ExampleChoose() {
	c, err := lsh.Choose(lsh.ChooseOptions{Threshold: 0.8, MaxSamples: 128})
	if err != nil {
		panic(err)
	}
	p := c.Params
	fmt.Println(p)
	fmt.Printf("P(0.7)=%.3f P(0.8)=%.3f P(0.9)=%.3f\n", p.Prob(0.7), p.Prob(0.8), p.Prob(0.9))
	// Output:
	// k=99 r=9 b=11 m=2 keybits=64
	// P(0.7)=0.070 P(0.8)=0.446 P(0.9)=0.964
}

func ExampleBanding() {
	p := lsh.Banding(4, 16) // 64 samples, any one of 16 bands
	fmt.Println(p, p.NumKeys(), "keys")
	// Output: k=64 r=4 b=16 m=1 keybits=64 16 keys
}

func ExampleHammingIndex() {
	x, err := lsh.NewHammingIndex(64, 3, 1) // 64-bit SimHash, up to 3 bits apart
	if err != nil {
		panic(err)
	}
	x.Add(1, []uint64{0xF0F0_F0F0_F0F0_F0F0})
	x.Add(2, []uint64{0xF0F0_F0F0_F0F0_F0F7}) // 3 bits from 1
	x.Add(3, []uint64{0x0F0F_0F0F_0F0F_0F0F}) // 64 bits from 1
	m, _ := x.Query(nil, []uint64{0xF0F0_F0F0_F0F0_F0F1}, 3)
	fmt.Println(m)
	// Output: [{1 1} {2 2}]
}

func ExampleSegments_Keys() {
	seg, _ := lsh.NewSegments(128, 3, 1) // 4 segments of 32 bits
	keys, _ := seg.Keys(nil, []uint64{1, 2})
	fmt.Println(len(keys), "keys: post the sketch under each; look up each")
	// Output: 4 keys: post the sketch under each; look up each
}

func ExampleScheme_Explain() {
	s := lsh.MustNew(lsh.AltaVista())
	a := make([]uint64, 84)
	for i := range a {
		a[i] = uint64(i)
	}
	b := append([]uint64(nil), a...)
	b[2*14], b[4*14+3], b[5*14] = 1000, 1001, 1002 // one sample off in bands 2, 4 and 5
	e, _ := s.Explain(a, b)
	for _, bd := range e.Bands {
		fmt.Printf("band %d: samples %d-%d, %d/14 agree, match %v\n", bd.Band, bd.Lo, bd.Hi-1, bd.Agreeing, bd.Match)
	}
	for _, k := range e.Keys {
		fmt.Println("shared key", k.Index, "bands", k.Bands)
	}
	fmt.Println(e.Agreements, "of 6 agree; candidate:", e.Candidate())
	// Output:
	// band 0: samples 0-13, 14/14 agree, match true
	// band 1: samples 14-27, 14/14 agree, match true
	// band 2: samples 28-41, 13/14 agree, match false
	// band 3: samples 42-55, 14/14 agree, match true
	// band 4: samples 56-69, 13/14 agree, match false
	// band 5: samples 70-83, 13/14 agree, match false
	// shared key 0 bands [0 1]
	// shared key 2 bands [0 3]
	// shared key 6 bands [1 3]
	// 3 of 6 agree; candidate: true
}

// seq returns the samples lo, lo+1, …, lo+n-1.
func seq(lo uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = lo + uint64(i)
	}
	return s
}

func ExampleNew() {
	s, err := lsh.New(lsh.Params{R: 4, B: 8, M: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Params().K(), "samples,", s.NumKeys(), "keys per document")
	_, err = lsh.New(lsh.Params{R: 4, B: 8, M: 9})
	fmt.Println(err)
	// Output:
	// 32 samples, 28 keys per document
	// lsh: invalid parameters: m = 9, want 1..b (b = 8)
}

func ExampleMustNew() {
	// Presets are valid: MustNew does not panic on them.
	s := lsh.MustNew(lsh.Bing())
	fmt.Println(s.Params(), s.NumKeys())
	// Output: k=30 r=5 b=6 m=4 keybits=16 15
}

func ExampleAltaVista() {
	p := lsh.AltaVista()
	fmt.Println(p, p.K(), p.NumKeys(), p.Bytes())
	// Output: k=84 r=14 b=6 m=2 keybits=64 84 15 48
}

func ExampleBing() {
	p := lsh.Bing()
	fmt.Println(p, p.K(), p.NumKeys(), p.Bytes())
	// Output: k=30 r=5 b=6 m=4 keybits=16 30 15 12
}

func ExampleParams_Validate() {
	fmt.Println(lsh.Banding(4, 16).Validate())
	fmt.Println(lsh.Params{R: 0, B: 3, M: 4}.Validate()) // every problem at once
	// Output:
	// <nil>
	// lsh: invalid parameters: r = 0, want >= 1
	// m = 4, want 1..b (b = 3)
}

func ExampleParams_BandProb() {
	// One band of 5 full samples agrees with probability J^5; with 16-bit
	// keys, also by accident with probability 2^-16.
	p := lsh.Banding(5, 1)
	fmt.Printf("%.5f\n", p.BandProb(0.8))
	p.KeyBits = 16
	fmt.Printf("%.5f %.7f\n", p.BandProb(0.8), p.BandProb(0))
	// Output:
	// 0.32768
	// 0.32769 0.0000153
}

func ExampleParams_Areas() {
	// The false-positive and false-negative areas around a threshold are
	// what Choose minimizes.
	for _, p := range []lsh.Params{lsh.Banding(5, 20), lsh.AltaVista()} {
		fp, fn := p.Areas(0.8)
		fmt.Printf("%v FP=%.4f FN=%.4f\n", p, fp, fn)
	}
	// Output:
	// k=100 r=5 b=20 m=1 keybits=64 FP=0.2987 FN=0.0000
	// k=84 r=14 b=6 m=2 keybits=64 FP=0.0007 FN=0.1035
}

func ExampleScheme_Supershingles() {
	// Supershingles can be stored and turned into keys later by Combine:
	// the keys equal those Keys makes from the samples.
	s := lsh.MustNew(lsh.Banding(2, 3))
	samples := seq(0, 6)
	ss, _ := s.Supershingles(nil, samples)
	keys := s.Combine(nil, ss)
	direct, _ := s.Keys(nil, samples)
	fmt.Println(len(ss), len(keys), keys[0] == direct[0] && keys[2] == direct[2])
	// Output: 3 3 true
}

func ExampleScheme_Key() {
	// Key computes one key alone: batch deduplication sorts a corpus one
	// key at a time.
	s := lsh.MustNew(lsh.AltaVista())
	samples := seq(0, 84)
	keys, _ := s.Keys(nil, samples)
	fmt.Println(s.Key(2, samples) == keys[2], s.Combination(2))
	// Output: true [0 3]
}

func ExampleScheme_Agreements() {
	s := lsh.MustNew(lsh.Bing()) // 6 bands of 5, at least 4 must agree
	a, b := seq(0, 30), seq(0, 30)
	b[0], b[12] = 100, 101 // bands 0 and 2 differ
	sa, _ := s.Supershingles(nil, a)
	sb, _ := s.Supershingles(nil, b)
	fmt.Println(s.Agreements(sa, sb), "of 6 agree")
	fmt.Printf("P(candidate | J=0.9) = %.3f\n", s.Prob(0.9))
	// Output:
	// 4 of 6 agree
	// P(candidate | J=0.9) = 0.525
}

func ExampleHamming() {
	fmt.Println(lsh.Hamming([]uint64{0b1011, 1}, []uint64{0b0001, 0}))
	// Output: 3
}

func ExampleNewHammingIndex() {
	// 128-bit sketches (two words), complete for distances up to 7.
	x, err := lsh.NewHammingIndex(128, 7, 1)
	if err != nil {
		panic(err)
	}
	seg := x.Segments()
	fmt.Println(seg.Bits(), seg.Words(), seg.MaxDist(), seg.NumKeys())
	_, err = lsh.NewHammingIndex(8, 8, 1) // 9 segments of 8 bits: impossible
	fmt.Println(err != nil)
	// Output:
	// 128 2 7 8
	// true
}

func ExampleHammingIndex_Remove() {
	x, _ := lsh.NewHammingIndex(64, 2, 1)
	x.Add(1, []uint64{0xFF})
	x.Add(1, []uint64{0xFE}) // a second entry under the same id
	x.Add(2, []uint64{0xFC})
	fmt.Println(x.Remove(1), x.Len())
	m, _ := x.Query(nil, []uint64{0xFF}, 2)
	fmt.Println(m)
	// Output:
	// 2 1
	// [{2 2}]
}

func ExampleNewSegments() {
	// A 64-bit SimHash within distance 3 of another shares one of 4
	// 16-bit segments with it, hence one key.
	seg, err := lsh.NewSegments(64, 3, 1)
	if err != nil {
		panic(err)
	}
	a, _ := seg.Keys(nil, []uint64{0xFFFF_0000_FFFF_0000})
	b, _ := seg.Keys(nil, []uint64{0xFFFF_0000_FFFF_0007}) // 3 bits differ, all in segment 0
	for j := range a {
		fmt.Print(a[j] == b[j], " ")
	}
	fmt.Println()
	// Output: false true true true
}
