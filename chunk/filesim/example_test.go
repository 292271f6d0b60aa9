package filesim_test

import (
	"fmt"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/filesim"
	"github.com/neardup/neardup/internal/rng"
)

// file returns n pseudo-random bytes of stream seed.
func file(seed uint64, n int) []byte {
	s := rng.New(rng.Key(seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(s.Uint64())
	}
	return b
}

// chunks returns the chunk list of data with 1 KiB chunks.
func chunks(data []byte) []chunk.Ref {
	s, _ := chunk.NewSigner(chunk.Options{Avg: 1024})
	return s.SignBytes(data).Chunks
}

func ExampleNewSketcher() {
	sk, err := filesim.NewSketcher(filesim.Params{}) // zero fields: RDC's defaults
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", sk.Params())
	_, err = filesim.NewSketcher(filesim.Params{Bits: 65})
	fmt.Println(err != nil)
	// Output:
	// {Algorithm:minhash K:12 Bits:6 Seed:0}
	// true
}

// Estimate compares two files' sketches: a file and an edited copy that
// keeps most of its chunks.
func ExampleEstimate() {
	a := file(1, 200_000)
	b := append(append([]byte{}, a[:100_000]...), file(2, 20_000)...) // half kept, some new
	b = append(b, a[150_000:]...)
	ca, cb := chunks(a), chunks(b)
	sk, _ := filesim.NewSketcher(filesim.Large)
	j, m, err := filesim.Estimate(sk.Sketch(ca), sk.Sketch(cb))
	exact := filesim.ExactJaccard(ca, cb)
	fmt.Printf("estimate %.2f (%d of 128 match), exact %.2f, %v\n", j, m, exact, err)
	// Output: estimate 0.66 (85 of 128 match), exact 0.67, <nil>
}

func ExampleExactJaccard() {
	a := chunks(file(1, 50_000))
	fmt.Println(filesim.ExactJaccard(a, a), filesim.ExactJaccard(a, chunks(file(2, 50_000))), filesim.ExactJaccard(nil, nil))
	// Output: 1 0 1
}

func ExampleMinMatches() {
	for _, t := range []float64{0.5, 0.8} {
		fmt.Println(filesim.MinMatches(filesim.RDC, t), filesim.MinMatches(filesim.Large, t))
	}
	// Output:
	// 3 32
	// 4 51
}

// The Index proposes candidates by the number of matching sample
// positions; ExactJaccard on the chunk lists confirms them.
func ExampleIndex_Query() {
	base := file(1, 100_000)
	files := [][]chunk.Ref{
		chunks(file(2, 100_000)),                                     // unrelated
		chunks(append(append([]byte{}, base...), file(3, 5_000)...)), // base plus a tail
		chunks(file(4, 100_000)),                                     // unrelated
	}
	sk, _ := filesim.NewSketcher(filesim.Large)
	ix := filesim.NewIndex(filesim.Large)
	for _, f := range files {
		if _, err := ix.Add(sk.Sketch(f)); err != nil {
			panic(err)
		}
	}
	q := chunks(base)
	ms, _ := ix.Query(sk.Sketch(q), filesim.MinMatches(filesim.Large, 0.5), 10)
	for _, m := range ms {
		fmt.Printf("file %d: %d matches, exact J %.2f\n", m.ID, m.Matches, filesim.ExactJaccard(q, files[m.ID]))
	}
	fmt.Println(ix.Len(), "files indexed")
	// Output:
	// file 1: 119 matches, exact J 0.93
	// 3 files indexed
}

// Summarize accounts for a tree's chunks: two copies of one file and an
// edited third share most chunks, so a chunk store keeps about a third of
// the bytes, and the copies are reported as identical.
func ExampleSummarize() {
	s, _ := chunk.NewSigner(chunk.Options{Avg: 1024})
	a := file(1, 64<<10)
	edited := append(append([]byte{}, a[:32<<10]...), file(2, 4<<10)...)
	edited = append(edited, a[32<<10:]...)
	sum := filesim.Summarize([]*chunk.Signature{s.SignBytes(a), s.SignBytes(edited), s.SignBytes(a)})
	fmt.Println(sum.Files, "files,", sum.Bytes, "bytes,", sum.UniqueBytes < sum.Bytes/2)
	fmt.Printf("kept %.2f of the bytes\n", sum.DedupRatio())
	fmt.Println("identical:", sum.Identical, "distinct:", len(sum.Distinct))
	all := filesim.Lengths(sum.Cut, sum.Last)
	fmt.Println(all.Count == int(sum.Chunks), all.Min <= all.Max)
	// Output:
	// 3 files, 200704 bytes, true
	// kept 0.36 of the bytes
	// identical: [[0 2]] distinct: 2
	// true true
}

func ExampleLengths() {
	st := filesim.Lengths([]int{2, 4}, []int{6})
	fmt.Printf("%+v\n", st)
	fmt.Printf("%+v\n", filesim.Lengths())
	// Output:
	// {Count:3 Mean:4 SD:1.6329931618554525 Min:2 Max:6}
	// {Count:0 Mean:0 SD:0 Min:0 Max:0}
}

// MatchProb is the chance that one sample position of two files agrees: for
// the RDC preset's 6 bits, the book's (63p+1)/64.
func ExampleMatchProb() {
	fmt.Printf("%.4f %.4f %.4f\n", filesim.MatchProb(filesim.RDC, 0), filesim.MatchProb(filesim.RDC, 1.0/3), filesim.MatchProb(filesim.RDC, 1))
	// Output: 0.0156 0.3438 1.0000
}

// CandidateProb is the chance that a pair reaches a number of matching
// positions: five of twelve, the book's lists, for a third and a half of
// chunks in common, and four or five by chance for unrelated files.
func ExampleCandidateProb() {
	for _, j := range []float64{1.0 / 3, 0.5} {
		fmt.Printf("J=%.2f: %.3f\n", j, filesim.CandidateProb(filesim.RDC, j, 5))
	}
	fmt.Printf("unrelated: %.1e %.1e\n", filesim.CandidateProb(filesim.RDC, 0, 4), filesim.CandidateProb(filesim.RDC, 0, 5))
	// Output:
	// J=0.33: 0.398
	// J=0.50: 0.821
	// unrelated: 2.7e-05 6.7e-07
}
