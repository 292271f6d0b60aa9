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
