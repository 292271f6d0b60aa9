package report

import (
	"fmt"
	"io"
)

// ChunkLengths are the chunk lengths of a file scan (package chunk), split
// by how each chunk ended.
type ChunkLengths struct {
	// Cut are the lengths of chunks ended by a cut point: they lie in the
	// cut window [Min, Max].
	Cut []int
	// Last are the lengths of the last chunk of each file, ended by the
	// end of the file: they may be shorter than Min (a file smaller than
	// Min is one such chunk).
	Last []int
	// Min and Max are the cut window, chunk.Options' Min and Max.
	Min, Max int
}

// ChunkSizes writes the histogram of a file scan's chunk lengths: bins
// equal bins over [0, Max], the chunks ended by a cut point and the last
// chunks of files stacked in two colours, with the cut window's minimum
// marked by a dashed line. The default labels are "chunk length (bytes)"
// and "chunks". No chunks at all, or Max < 1, is ErrInput. Cost:
// O(chunks + bins).
func ChunkSizes(w io.Writer, format string, c Chart, l ChunkLengths, bins int) error {
	if l.Max < 1 {
		return fmt.Errorf("%w: chunk window max %d", ErrInput, l.Max)
	}
	if c.XLabel == "" {
		c.XLabel = "chunk length (bytes)"
	}
	if c.YLabel == "" {
		c.YLabel = "chunks"
	}
	c.Marks = append(c.Marks, Mark{X: float64(l.Min), Label: fmt.Sprintf("minimum cut length %d", l.Min)})
	return StackedHistogram(w, format, c, 0, float64(l.Max), bins,
		Series{Name: "cut chunks", Values: floats(l.Cut)},
		Series{Name: "last chunk of a file", Values: floats(l.Last)})
}

func floats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
