package chunk_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/chunk"
)

func ExampleCuts() {
	data := bytes.Repeat([]byte{0}, 30000) // all boundary hashes tie: cuts at Max
	cuts, err := chunk.Cuts(nil, data, chunk.Options{Avg: 4096})
	fmt.Println(cuts, err)
	// Output: [5120 10240 15360 20480 25600 30000] <nil>
}

func ExampleCutter_Cuts() {
	c, _ := chunk.NewCutter(chunk.Options{}) // 8 KiB average, 4-12 KiB chunks
	data := bytes.Repeat([]byte("a line of text that repeats, more or less\n"), 1000)
	var cuts []int
	cuts = c.Cuts(cuts[:0], data) // reuse cuts across calls: no allocation
	fmt.Println(len(data), cuts[len(cuts)-1], c.Options().Min, c.Options().Max)
	// Output: 42000 42000 6144 10240
}

func ExampleChunker() {
	data := make([]byte, 100000)
	k, _ := chunk.NewChunker(bytes.NewReader(data), chunk.Options{})
	buf := make([]byte, 0, 10240) // room for Max bytes: no allocation
	for {
		c, err := k.Next(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		buf = c.Data
		fmt.Println(c.Offset, len(c.Data))
	}
	// Output:
	// 0 10240
	// 10240 10240
	// 20480 10240
	// 30720 10240
	// 40960 10240
	// 51200 10240
	// 61440 10240
	// 71680 10240
	// 81920 10240
	// 92160 7840
}

func ExampleSign() {
	a := bytes.Repeat([]byte("winnowing "), 10000)
	b := append([]byte{}, a...)
	sa, sb := chunk.Sign(a), chunk.Sign(b)
	fmt.Println(sa.Root == sb.Root, len(sa.Chunks), len(sa.Levels))
	b[5000] = 'W'
	fmt.Println(chunk.Sign(b).Root == sa.Root)
	// Output:
	// true 10 1
	// false
}

func ExampleSigner_Sign() {
	s, _ := chunk.NewSigner(chunk.Options{Avg: 1024})
	sig, _ := s.Sign(bytes.NewReader(make([]byte, 5000)), func(r chunk.Ref, data []byte) {
		fmt.Println(r.Offset, r.Length, r.Sum.String()[:8])
	})
	fmt.Println(sig.Size, len(sig.Chunks))
	// Output:
	// 0 1280 1ab289db
	// 1280 1280 1ab289db
	// 2560 1280 1ab289db
	// 3840 1160 eef26e2b
	// 5000 4
}

func ExampleNewCutter() {
	// Set Avg alone and Min and Max are derived; a bad combination is
	// reported whole.
	c, err := chunk.NewCutter(chunk.Options{Avg: 4096})
	o := c.Options()
	fmt.Println(err, o.Min, o.Avg, o.Max)
	_, err = chunk.NewCutter(chunk.Options{Min: 32, Max: 16})
	fmt.Println(err != nil)
	// Output:
	// <nil> 3072 4096 5120
	// true
}

func ExampleOptions_EnsureDefaults() {
	fmt.Printf("%+v\n", chunk.Options{}.EnsureDefaults())
	fmt.Printf("%+v\n", chunk.Options{Min: 2048, Max: 6144}.EnsureDefaults())
	// Output:
	// {Min:6144 Avg:8192 Max:10240 Mode:fast}
	// {Min:2048 Avg:4096 Max:6144 Mode:fast}
}

func ExampleOptions_Validate() {
	fmt.Println(chunk.Options{}.Validate())
	fmt.Println(chunk.Options{Min: 10, Avg: 100, Max: 50}.Validate())
	// Output:
	// <nil>
	// chunk: invalid options: Min 10 must exceed 64
	// chunk: invalid options: Avg 100 must be (Min+Max)/2 = 30
}

// A stream's chunks are the cuts of the whole stream, read in constant
// memory; Reset reuses the Chunker's buffers for the next stream.
func ExampleNewChunker() {
	data := bytes.Repeat([]byte("some text "), 3000)
	k, err := chunk.NewChunker(bytes.NewReader(data), chunk.Options{Avg: 8192})
	if err != nil {
		panic(err)
	}
	var ends []int64
	for {
		c, err := k.Next(nil)
		if err != nil { // io.EOF at the end
			break
		}
		ends = append(ends, c.Offset+int64(len(c.Data)))
	}
	cuts, _ := chunk.Cuts(nil, data, chunk.Options{Avg: 8192})
	fmt.Println(ends, cuts)

	k.Reset(bytes.NewReader([]byte("short")))
	c, _ := k.Next(nil)
	_, err = k.Next(nil)
	fmt.Printf("%q %v\n", c.Data, err == io.EOF)
	// Output:
	// [10238 20478 30000] [10238 20478 30000]
	// "short" true
}

// Files that share content share chunks, wherever the shared content is:
// an insertion shifts the cut points only around itself.
func ExampleSumChunk() {
	a := make([]byte, 50000)
	for i := range a {
		a[i] = byte(i * i >> 7)
	}
	b := append([]byte("inserted at the front "), a...)
	set := map[chunk.Sum]bool{}
	for _, r := range chunk.Sign(a).Chunks {
		set[r.Sum] = true
	}
	shared := 0
	sb := chunk.Sign(b)
	for _, r := range sb.Chunks {
		if set[r.Sum] {
			shared++
		}
	}
	// 5 of b's 6 chunks are chunks of a; the first is its own strong hash.
	fmt.Println(len(sb.Chunks), shared, sb.Chunks[0].Sum == chunk.SumChunk(b[:sb.Chunks[0].Length]))
	// Output: 6 5 true
}

func ExampleSum_Short() {
	s := chunk.SumChunk([]byte("hello"))
	fmt.Println(s.String()[:16])
	fmt.Printf("%016x\n", s.Short()) // the first 8 bytes, little-endian
	// Output:
	// ea8f163db3868292
	// 928286b33d168fea
}

func ExampleNewSigner() {
	s, err := chunk.NewSigner(chunk.Options{Avg: 1024})
	if err != nil {
		panic(err)
	}
	data := make([]byte, 100000)
	for i := range data {
		data[i] = byte(i * 7919 >> 5)
	}
	sig := s.SignBytes(data) // reuses the Signer's buffers
	// Roots compare only under the same Options: Sign uses the defaults.
	fmt.Println(sig.Size, len(sig.Chunks) > 50, len(sig.Levels) > 0, sig.Root == chunk.Sign(data).Root)
	// Output: 100000 true true false
}
