package sketch_test

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/sketch"
)

func mh(vals ...uint64) *sketch.Sketch {
	return &sketch.Sketch{Header: sketch.Header{Algorithm: sketch.MinHash, Version: 1, Seed: 1, K: uint32(len(vals)), Bits: 64}, Values: vals}
}

func ExampleJaccard() {
	a, b := mh(1, 2, 3, 4), mh(1, 2, 3, 9)
	e, _ := sketch.Jaccard(a, b)
	fmt.Printf("%.2f ± %.2f\n", e.J, e.StdErr)
	// Output: 0.75 ± 0.22
}

func ExampleHeader_Check() {
	a, b := mh(1, 2), mh(1, 2)
	b.Header.Seed = 2
	_, err := sketch.Jaccard(a, b)
	fmt.Println(errors.Is(err, sketch.ErrMismatch), a.Header.Check(b.Header))
	// Output: true sketch: headers differ: seed 0x1 vs 0x2
}

func ExampleSketch_AppendBinary() {
	enc, _ := mh(10, 20, 30).AppendBinary(nil)
	var s sketch.Sketch
	err := s.UnmarshalBinary(enc)
	fmt.Println(len(enc), err, s.Values)
	enc[len(enc)-5] ^= 1
	fmt.Println(s.UnmarshalBinary(enc))
	// Output:
	// 63 <nil> [10 20 30]
	// sketch: corrupt encoding: checksum mismatch
}

func ExampleCompress() {
	c, _ := sketch.Compress(mh(1, 2, 3, 4, 5, 6, 7, 8), 1)
	fmt.Println(c.Header.Bits, len(c.Values))
	// Output: 1 8
}

func ExampleCompressPairs() {
	p, _ := sketch.CompressPairs(mh(1, 2, 3, 4), 8)
	e, _ := sketch.JaccardSquared(p, p)
	fmt.Println(len(p.Values), e.J)
	// Output: 2 1
}

func ExampleUnion() {
	u, _ := sketch.Union(mh(5, 1, 7), mh(2, 3, 9))
	fmt.Println(u.Values)
	// Output: [2 1 7]
}

func ExampleCardinality() {
	h := sketch.Header{Algorithm: sketch.Proportional, Version: 1, Bits: 64, Params: 100}
	n, _ := sketch.Cardinality(&sketch.Sketch{Header: h, Values: []uint64{3, 8, 11}})
	fmt.Println(n)
	// Output: 300
}

func ExampleContainment() {
	a, b := mh(1, 2, 3, 4), mh(1, 2, 3, 4)
	a.Size, b.Size = 10, 10
	e, _ := sketch.Containment(a, b)
	fmt.Println(e.J)
	// Output: 1
}

func ExampleParseAlgorithm() {
	a, _ := sketch.ParseAlgorithm("oph")
	fmt.Println(uint8(a), a, a.IsSet(), sketch.BottomK.IsSet())
	// Output: 7 oph false true
}

func ExampleDensify() {
	v := []uint64{sketch.OPHEmpty, sketch.OPHEmpty, 0x9000000000000000, sketch.OPHEmpty} // 0x9…·4>>64 = bin 2
	sketch.Densify(1, v)
	fmt.Printf("%x\n", v)
	// Output: [9000000000000000 9000000000000000 9000000000000000 9000000000000000]
}

func ExampleBBitUnclamped() {
	a, _ := sketch.Compress(mh(1, 2, 3, 4), 2)
	j, _ := sketch.BBitUnclamped(a, a)
	fmt.Println(j)
	// Output: 1
}

func ExampleUniform() {
	fmt.Println(sketch.Uniform(sketch.Header{Algorithm: sketch.MinHash}, 1<<63))
	// Output: 0.5
}

func ExampleBatchedLuck() {
	fmt.Printf("%.5f\n", sketch.BatchedLuck(128))
	// Output: 0.00778
}

func ExampleJaccardSquared() {
	// XOR-pair sketches of sketches that agree in 3 of 4 slots: one of the
	// two pairs agrees, so J² ≈ 0.5 (up to the 2^-b correction; J = 0.75
	// gives J² = 0.5625).
	a, _ := sketch.CompressPairs(mh(1, 2, 3, 4), 8)
	b, _ := sketch.CompressPairs(mh(1, 2, 3, 9), 8)
	e, _ := sketch.JaccardSquared(a, b)
	fmt.Printf("%.3f\n", e.J)
	// Output: 0.498
}

func ExampleNewDistinctCounter() {
	h := sketch.Header{Algorithm: sketch.MinHash, Version: 1, K: 4, Bits: 64}
	c, err := sketch.NewDistinctCounter(h)
	fmt.Println(err, c.Header() == h)
	_, err = sketch.NewDistinctCounter(sketch.Header{})
	fmt.Println(err != nil)
	// Output:
	// <nil> true
	// true
}

// Each goroutine counts its part of a stream; Merge adds the parts up.
func ExampleDistinctCounter_Merge() {
	h := sketch.Header{Algorithm: sketch.BottomK, Version: 1, K: 4, Bits: 64}
	a, _ := sketch.NewDistinctCounter(h)
	b, _ := sketch.NewDistinctCounter(h)
	a.Add([]uint64{1 << 58, 3 << 58})
	a.Add([]uint64{2 << 58, 3 << 58}) // 3<<58 seen twice
	b.Add([]uint64{1 << 58, 5 << 58})
	if err := a.Merge(b); err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", a.Union().Values) // the 4 smallest hashes
	// Output: [400000000000000 800000000000000 c00000000000000 1400000000000000]
}

func ExampleDistinctCounter_Cardinality() {
	h := sketch.Header{Algorithm: sketch.Proportional, Version: 1, Bits: 64, Params: 100}
	c, _ := sketch.NewDistinctCounter(h)
	c.Add([]uint64{3, 8, 11})
	c.Add([]uint64{8, 11, 20})
	n, _ := c.Cardinality() // 4 kept hashes, 1 in 100 kept
	fmt.Println(n)
	// Output: 400
}

func ExampleAlgorithm_IsWeighted() {
	for _, a := range []sketch.Algorithm{sketch.OPH, sketch.BottomK, sketch.CWS, sketch.Algorithm(200)} {
		fmt.Println(a, a.Valid(), a.IsSet(), a.IsWeighted())
	}
	// Output:
	// oph true false false
	// bottomk true true false
	// cws true false true
	// algorithm(200) false false false
}

func ExampleHeader_Validate() {
	fmt.Println(mh(1).Header.Validate())
	fmt.Println(sketch.Header{Algorithm: sketch.MinHash, Bits: 3}.Validate())
	// Output:
	// <nil>
	// sketch: invalid sketch: bits 3 not in {1,2,4,8,16,32,64}
}

func ExampleHMTParams_Validate() {
	fmt.Println(sketch.HMTParams{Alpha: 0.5, Tau: 1, Scales: 3, L: 4}.Validate())
	fmt.Println(sketch.HMTParams{Alpha: 0.5, Tau: 3, Scales: 3, L: 4}.Validate())
	// Output:
	// <nil>
	// sketch: invalid sketch: HMT tau 3 not in [1, 3)
}

func ExampleOPHBin() {
	// Bins are contiguous ranges of hash values.
	for _, x := range []uint64{0, 1 << 62, 1 << 63, 1<<64 - 1} {
		fmt.Print(sketch.OPHBin(x, 4), " ")
	}
	fmt.Println()
	// Output: 0 1 2 3
}

func ExampleSketch_Validate() {
	s := mh(1, 2, 3)
	fmt.Println(s.Validate())
	s.Values = s.Values[:2] // K says 3
	fmt.Println(s.Validate())
	// Output:
	// <nil>
	// sketch: invalid sketch: 2 values, want 3
}

func ExampleSketch_MarshalBinary() {
	enc, _ := mh(10, 20, 30).MarshalBinary()
	var s sketch.Sketch
	fmt.Println(s.UnmarshalBinary(enc), s.Header.Algorithm, s.Values)
	err := s.UnmarshalBinary(enc[:10]) // s is unchanged on error
	fmt.Println(errors.Is(err, sketch.ErrTruncated), s.Values)
	// Output:
	// <nil> minhash [10 20 30]
	// true [10 20 30]
}

// Decode reads concatenated encodings one after another.
func ExampleSketch_Decode() {
	buf, _ := mh(1, 2).AppendBinary(nil)
	buf, _ = mh(3, 4).AppendBinary(buf)
	var s sketch.Sketch
	for len(buf) > 0 {
		var err error
		if buf, err = s.Decode(buf); err != nil {
			panic(err)
		}
		fmt.Println(s.Values)
	}
	// Output:
	// [1 2]
	// [3 4]
}

func ExampleSketch_Clone() {
	a := mh(1, 2, 3)
	b := a.Clone()
	b.Values[0] = 99 // a is unchanged
	fmt.Println(a.Values, b.Values)
	// Output: [1 2 3] [99 2 3]
}

// Overlap counts what ExactJaccard divides: {1,2,3} and {2,3,4} share 2 of
// 4 ids.
func ExampleOverlap() {
	inter, union := sketch.Overlap([]uint64{1, 2, 3}, []uint64{2, 3, 3, 4})
	fmt.Println(inter, union, sketch.ExactJaccard([]uint64{1, 2, 3}, []uint64{2, 3, 4}))
	// Output: 2 4 0.5
}
