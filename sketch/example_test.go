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
