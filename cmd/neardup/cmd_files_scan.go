package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/filesim"
)

type filesScanOptions struct {
	Dirs      []string
	Chunk     chunkFlags
	Plot      string
	Sketch    string
	Threshold float64
	Bins      int
}

func newFilesScanCmd(env *Env) *cobra.Command {
	var opts filesScanOptions
	cmd := &cobra.Command{
		Use:   "scan DIR...",
		Short: "Report duplicate files, the chunk-level dedup ratio, chunk sizes and similar files",
		Example: `  neardup files scan ~/src
  neardup files scan --plot sizes.png --threshold 0.3 $(go env GOROOT)/src`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return runFilesScan(cmd.Context(), env, opts)
		},
	}
	opts.Chunk.bind(cmd)
	cmd.Flags().StringVar(&opts.Plot, "plot", "", "write the chunk-size histogram to this PNG file")
	cmd.Flags().StringVar(&opts.Sketch, "sketch", "rdc", "similarity sketch: rdc (12 x 6 bits) or large (128 x 8 bits)")
	cmd.Flags().Float64Var(&opts.Threshold, "threshold", 0.5, "report files whose exact chunk-Jaccard is at least this")
	cmd.Flags().IntVar(&opts.Bins, "bins", 16, "histogram bins")
	return cmd
}

func runFilesScan(ctx context.Context, env *Env, opts filesScanOptions) error {
	o, err := opts.Chunk.options()
	if err != nil {
		return err
	}
	params, err := sketchParams(opts.Sketch)
	if err != nil {
		return err
	}
	if opts.Threshold <= 0 || opts.Threshold > 1 {
		return usagef("--threshold %v not in (0, 1]", opts.Threshold)
	}
	if opts.Bins < 1 || opts.Bins > 1000 {
		return usagef("--bins %d not in [1, 1000]", opts.Bins)
	}
	files, walkProblems, err := walkFiles(ctx, env, opts.Dirs)
	if err != nil {
		return err
	}
	if opts.Plot != "" {
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = f.Path
		}
		if p, same := sameAsAny(opts.Plot, paths); same {
			return usagef("refusing to write --plot %s: it is the input %s", opts.Plot, p)
		}
	}
	// Chunk-level dedup: the first occurrence of each chunk hash counts.
	seen := make(map[chunk.Sum]struct{})
	var totalBytes, uniqueBytes, nChunks int64
	var sizes []float64
	signed, readProblems, err := signFiles(ctx, env, files, o, "scanning", func(_ int, r chunk.Ref) {
		nChunks++
		totalBytes += int64(r.Length)
		sizes = append(sizes, float64(r.Length))
		if _, ok := seen[r.Sum]; !ok {
			seen[r.Sum] = struct{}{}
			uniqueBytes += int64(r.Length)
		}
	})
	if err != nil {
		return err
	}
	w := env.Stdout
	fmt.Fprintf(w, "files: %d (%d bytes), skipped: %d\n", len(signed), totalBytes, walkProblems+readProblems)

	// Exact duplicates by signature root.
	byRoot := make(map[chunk.Sum][]int)
	for i, f := range signed {
		byRoot[f.Sig.Root] = append(byRoot[f.Sig.Root], i)
	}
	var dupGroups [][]int
	var dupFiles, dupBytes int64
	for _, root := range sortedSums(byRoot) {
		g := byRoot[root]
		if len(g) > 1 {
			dupGroups = append(dupGroups, g)
			dupFiles += int64(len(g) - 1)
			dupBytes += int64(len(g)-1) * signed[g[0]].Size
		}
	}
	sort.Slice(dupGroups, func(i, j int) bool { return signed[dupGroups[i][0]].Path < signed[dupGroups[j][0]].Path })
	fmt.Fprintf(w, "exact duplicates: %d groups, %d redundant files (%d bytes)\n", len(dupGroups), dupFiles, dupBytes)
	for _, g := range dupGroups {
		fmt.Fprintf(w, "  %d bytes, root %s:\n", signed[g[0]].Size, signed[g[0]].Sig.Root.String()[:16])
		for _, i := range g {
			fmt.Fprintf(w, "    %s\n", signed[i].Path)
		}
	}

	ratio := 1.0
	if totalBytes > 0 {
		ratio = float64(uniqueBytes) / float64(totalBytes)
	}
	fmt.Fprintf(w, "chunks: %d, unique: %d; dedup ratio (unique bytes / total bytes): %d / %d = %.4f\n",
		nChunks, len(seen), uniqueBytes, totalBytes, ratio)
	printHistogram(w, sizes, o, opts.Bins)
	if opts.Plot != "" {
		if err := plotHistogram(opts.Plot, sizes, o, opts.Bins); err != nil {
			return err
		}
		fmt.Fprintf(w, "histogram plotted to %s\n", opts.Plot)
	}
	return similarGroups(w, signed, byRoot, params, opts.Threshold)
}

func printHistogram(w io.Writer, sizes []float64, o chunk.Options, bins int) {
	if len(sizes) == 0 {
		fmt.Fprintln(w, "chunk sizes: none")
		return
	}
	var sum, sum2 float64
	for _, s := range sizes {
		sum += s
		sum2 += s * s
	}
	n := float64(len(sizes))
	mean := sum / n
	sd := math.Sqrt(math.Max(0, sum2/n-mean*mean))
	fmt.Fprintf(w, "chunk sizes: mean %.0f, sd %.0f bytes (min %d, max %d)\n", mean, sd, o.Min, o.Max)
	width := float64(o.Max) / float64(bins)
	counts := make([]int, bins)
	peak := 0
	for _, s := range sizes {
		b := min(int((s-1)/width), bins-1)
		counts[b]++
		peak = max(peak, counts[b])
	}
	for i, c := range counts {
		bar := strings.Repeat("#", int(math.Round(40*float64(c)/float64(peak))))
		fmt.Fprintf(w, "  %6.0f-%-6.0f %8d %s\n", float64(i)*width+1, float64(i+1)*width, c, bar)
	}
}

func plotHistogram(path string, sizes []float64, o chunk.Options, bins int) error {
	p := plot.New()
	p.Title.Text = "Chunk sizes (winnowing)"
	p.X.Label.Text = "bytes"
	p.Y.Label.Text = "chunks"
	if len(sizes) > 0 {
		h, err := plotter.NewHist(plotter.Values(sizes), bins)
		if err != nil {
			return err
		}
		p.Add(h)
	}
	p.X.Min, p.X.Max = 0, float64(o.Max)
	return writeFileSafely(path, nil, func(w io.Writer) error {
		wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
		if err != nil {
			return err
		}
		_, err = wt.WriteTo(w)
		return err
	})
}

// similarGroups sketches one file per distinct root, finds candidates in the
// inverted index, confirms them with the exact chunk-Jaccard, and prints the
// connected groups with both figures for each linked pair.
func similarGroups(w io.Writer, signed []signedFile, byRoot map[chunk.Sum][]int, params filesim.Params, threshold float64) error {
	sk, err := filesim.NewSketcher(params)
	if err != nil {
		return err
	}
	ix := filesim.NewIndex(params)
	var reps []int // one file per distinct root, in path order
	for _, root := range sortedSums(byRoot) {
		reps = append(reps, byRoot[root][0])
	}
	sort.Slice(reps, func(i, j int) bool { return signed[reps[i]].Path < signed[reps[j]].Path })
	sketches := make([]filesim.Sketch, len(reps))
	for i, r := range reps {
		sketches[i] = sk.Sketch(signed[r].Sig.Chunks)
		if _, err := ix.Add(sketches[i]); err != nil {
			return err
		}
	}
	// Candidates need at least one matching position beyond what chance
	// gives (1 in 2^b per position), and at least 1.
	minMatches := max(1, int(math.Floor(float64(params.K)*threshold/2)))
	parent := make([]int, len(reps))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	type edge struct {
		a, b       int
		est, exact float64
	}
	var edges []edge
	for i := range reps {
		if len(sketches[i].Values) == 0 {
			continue
		}
		ms, err := ix.Query(sketches[i], minMatches, 0)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.ID <= i {
				continue
			}
			exact := filesim.ExactJaccard(signed[reps[i]].Sig.Chunks, signed[reps[m.ID]].Sig.Chunks)
			if exact >= threshold {
				edges = append(edges, edge{i, m.ID, m.J, exact})
				parent[find(m.ID)] = find(i)
			}
		}
	}
	groups := make(map[int][]edge)
	var order []int
	for _, e := range edges {
		r := find(e.a)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], e)
	}
	sort.Ints(order)
	fmt.Fprintf(w, "similar files (%s sketch %dx%d bits, exact chunk-Jaccard >= %.2f): %d groups\n",
		params.Algorithm, params.K, params.Bits, threshold, len(order))
	for gi, r := range order {
		fmt.Fprintf(w, "  group %d:\n", gi+1)
		for _, e := range groups[r] {
			fmt.Fprintf(w, "    %s ~ %s  estimated %.2f  exact %.2f\n", signed[reps[e.a]].Path, signed[reps[e.b]].Path, e.est, e.exact)
		}
	}
	return nil
}
