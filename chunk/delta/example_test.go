package delta_test

import (
	"bytes"
	"fmt"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/delta"
)

// Write encodes a plan: copies from the old file, literals from the new.
func ExampleWrite() {
	old := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	nw := append(append([]byte{}, old[:80000]...), []byte("a new paragraph\n")...)
	nw = append(nw, old[80000:]...)
	p := delta.NewPlan([]delta.Source{{Name: "v1.txt", Sig: chunk.Sign(old)}}, chunk.Sign(nw))
	var d bytes.Buffer
	if err := delta.Write(&d, p, bytes.NewReader(nw)); err != nil {
		panic(err)
	}
	fmt.Println(len(nw), d.Len() < len(nw)/5)
	// Output: 160016 true
}

// ReadHeader reads what a delta claims to build, so that a caller can
// check it (size cap, free space, which old files it needs) before Apply.
func ExampleReadHeader() {
	old := bytes.Repeat([]byte("all work and no play\n"), 5000)
	nw := append([]byte("title\n"), old...)
	sig := chunk.Sign(nw)
	p := delta.NewPlan([]delta.Source{{Name: "old.txt", Sig: chunk.Sign(old)}}, sig)
	var d bytes.Buffer
	delta.Write(&d, p, bytes.NewReader(nw))
	h, err := delta.ReadHeader(&d)
	fmt.Println(err, h.NewSize, h.NewRoot == sig.Root, h.Names, h.SourceSizes)
	// Output: <nil> 105006 true [old.txt] [105000]
}
