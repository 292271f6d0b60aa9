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
