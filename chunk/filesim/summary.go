package filesim

import (
	"bytes"
	"math"
	"slices"

	"github.com/neardup/neardup/chunk"
)

// Summary is the chunk-level account of a set of signed files: what a
// store that keeps every distinct chunk once would hold (the book's 6.2
// remote differential compression, applied to a whole tree), the lengths
// of the chunks cut, and which files are byte-identical.
type Summary struct {
	// Files is the number of files summarized.
	Files int
	// Chunks and Bytes count every chunk of every file.
	Chunks int64
	Bytes  int64
	// UniqueChunks and UniqueBytes count each distinct chunk once.
	UniqueChunks int
	UniqueBytes  int64
	// Cut holds the lengths of the chunks ended by a cut point (always
	// within the chunker's window), Last those of each file's last chunk
	// (which may be shorter than the window's minimum), in file order.
	Cut, Last []int
	// Identical lists the groups of two or more byte-identical files (one
	// signature root), each as indexes into the summarized files in
	// increasing order, the groups in increasing order of root.
	Identical [][]int
	// Distinct holds one file per distinct content, the first of its root,
	// in increasing order of root.
	Distinct []int
}

// Summarize accounts for the chunks of sigs, the signatures of files in
// the caller's order.
func Summarize(sigs []*chunk.Signature) Summary {
	s := Summary{Files: len(sigs)}
	seen := make(map[chunk.Sum]struct{})
	byRoot := make(map[chunk.Sum][]int)
	for f, sig := range sigs {
		byRoot[sig.Root] = append(byRoot[sig.Root], f)
		for i, r := range sig.Chunks {
			s.Chunks++
			s.Bytes += int64(r.Length)
			if _, ok := seen[r.Sum]; !ok {
				seen[r.Sum] = struct{}{}
				s.UniqueBytes += int64(r.Length)
			}
			if i == len(sig.Chunks)-1 {
				s.Last = append(s.Last, r.Length)
			} else {
				s.Cut = append(s.Cut, r.Length)
			}
		}
	}
	s.UniqueChunks = len(seen)
	roots := make([]chunk.Sum, 0, len(byRoot))
	for root := range byRoot {
		roots = append(roots, root)
	}
	slices.SortFunc(roots, func(a, b chunk.Sum) int { return bytes.Compare(a[:], b[:]) })
	for _, root := range roots {
		g := byRoot[root]
		s.Distinct = append(s.Distinct, g[0])
		if len(g) > 1 {
			s.Identical = append(s.Identical, g)
		}
	}
	return s
}

// DedupRatio is UniqueBytes/Bytes: the fraction of the bytes a chunk
// store would keep; 1 when there are no bytes.
func (s Summary) DedupRatio() float64 {
	if s.Bytes == 0 {
		return 1
	}
	return float64(s.UniqueBytes) / float64(s.Bytes)
}

// LengthStats describes a list of lengths; all zero when it is empty. SD
// is the population standard deviation.
type LengthStats struct {
	Count    int
	Mean, SD float64
	Min, Max int
}

// Lengths describes the lengths of all the lists together (Summary's Cut
// and Last, say).
func Lengths(lists ...[]int) LengthStats {
	var st LengthStats
	var sum, sum2 float64
	for _, xs := range lists {
		for _, x := range xs {
			if st.Count == 0 {
				st.Min, st.Max = x, x
			}
			st.Count++
			st.Min, st.Max = min(st.Min, x), max(st.Max, x)
			sum += float64(x)
			sum2 += float64(x) * float64(x)
		}
	}
	if st.Count > 0 {
		n := float64(st.Count)
		st.Mean = sum / n
		st.SD = math.Sqrt(math.Max(0, sum2/n-st.Mean*st.Mean))
	}
	return st
}
