package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/filesim"
	"github.com/neardup/neardup/report"
)

type filesScanOptions struct {
	Dirs      []string
	Chunk     chunkFlags
	Plot      string
	Sketch    string
	Threshold float64
	Bins      int
	JSON      bool
}

func newFilesScanCmd(env *Env) *cobra.Command {
	var opts filesScanOptions
	cmd := &cobra.Command{
		Use:   "scan DIR...",
		Short: "Report duplicate files, the chunk-level dedup ratio, chunk sizes and similar files",
		Long: `scan cuts every file under DIR into content-defined chunks and reports:
exact duplicate files (equal signature roots); the chunk-level dedup ratio
(bytes of distinct chunks over all bytes); the chunk lengths, with a text
histogram (and a plot with --plot); and groups of similar files: every file
is sketched from its chunk list (--sketch), candidates come from an
inverted index of the sketches, and a pair is reported when its exact
chunk-Jaccard is at least --threshold (groups are connected components of
such pairs).

Chunks are cut where a winnowed hash is smallest within a window of
[--min, --max] bytes after the previous cut; only the last chunk of a file
(and a whole file shorter than --min) is shorter than --min, which is why
the mean chunk length lies below --min when there are many small files.`,
		Example: `  neardup files scan ~/src
  neardup files scan --plot sizes.png --threshold 0.3 $(go env GOROOT)/src
  neardup files scan --json ~/src | jq .similar.groups`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return runFilesScan(cmd.Context(), env, opts)
		},
	}
	opts.Chunk.bind(cmd)
	cmd.Flags().StringVar(&opts.Plot, "plot", "", "write the chunk-size histogram to this file (.png, .svg, .pdf or .eps)")
	cmd.Flags().StringVar(&opts.Sketch, "sketch", "rdc", "similarity sketch: rdc (12 x 6 bits) or large (128 x 8 bits)")
	cmd.Flags().Float64Var(&opts.Threshold, "threshold", 0.5, "report files whose exact chunk-Jaccard is at least this, in (0, 1]")
	cmd.Flags().IntVar(&opts.Bins, "bins", 16, "histogram bins, 1 to 1000")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	return cmd
}

// filesScanResult is the result of files scan (its --json output).
type filesScanResult struct {
	Files   int   `json:"files"`
	Bytes   int64 `json:"bytes"`
	Skipped int   `json:"skipped"`
	// Duplicates are the groups of byte-identical files.
	Duplicates     []filesDupGroup `json:"exact_duplicates"`
	RedundantFiles int64           `json:"redundant_files"`
	RedundantBytes int64           `json:"redundant_bytes"`
	Chunks         int64           `json:"chunks"`
	UniqueChunks   int             `json:"unique_chunks"`
	UniqueBytes    int64           `json:"unique_bytes"`
	DedupRatio     float64         `json:"dedup_ratio"`
	ChunkSizes     filesChunkStats `json:"chunk_sizes"`
	Similar        filesSimilarity `json:"similar"`
	Plot           string          `json:"plot,omitempty"`
	// sum is what the figures above come from.
	sum filesim.Summary
}

type filesDupGroup struct {
	Bytes int64    `json:"bytes"`
	Root  string   `json:"root"`
	Files []string `json:"files"`
}

// filesChunkStats describes the chunk lengths: all chunks, and split into
// chunks ended by a cut point (always within the window) and the last chunk
// of each file (which may be shorter than the window's minimum).
type filesChunkStats struct {
	Mean   float64      `json:"mean"`
	SD     float64      `json:"sd"`
	Min    int          `json:"min"`
	Max    int          `json:"max"`
	Cut    filesLenStat `json:"cut"`
	Last   filesLenStat `json:"last"`
	Window [2]int       `json:"window"`
}

type filesLenStat struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Min   int     `json:"min"`
	Max   int     `json:"max"`
}

type filesSimilarity struct {
	Sketch    string       `json:"sketch"`
	Threshold float64      `json:"threshold"`
	Groups    []filesGroup `json:"groups"`
}

type filesGroup struct {
	Files []string    `json:"files"`
	Links []filesLink `json:"links"`
}

type filesLink struct {
	A        string  `json:"a"`
	B        string  `json:"b"`
	Estimate float64 `json:"estimate"`
	Exact    float64 `json:"exact"`
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
	if err := checkThreshold("--threshold", opts.Threshold); err != nil {
		return err
	}
	if opts.Bins < 1 || opts.Bins > 1000 {
		return usagef("--bins %d not in [1, 1000]", opts.Bins)
	}
	plotFormat := ""
	if opts.Plot != "" {
		if plotFormat, err = plotFormatOf("--plot", opts.Plot); err != nil {
			return err
		}
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
	signed, readProblems, err := signFiles(ctx, env, files, o, "scanning")
	if err != nil {
		return err
	}
	sigs := make([]*chunk.Signature, len(signed))
	for i, f := range signed {
		sigs[i] = f.Sig
	}
	sum := filesim.Summarize(sigs)
	res := scanResult(signed, sum, o)
	res.Skipped = walkProblems + readProblems

	// Similar files: one file per distinct content, in path order.
	reps := sum.Distinct
	sort.Slice(reps, func(i, j int) bool { return signed[reps[i]].Path < signed[reps[j]].Path })
	lists := make([][]chunk.Ref, len(reps))
	for i, r := range reps {
		lists[i] = signed[r].Sig.Chunks
	}
	groups, err := filesim.Groups(lists, params, opts.Threshold)
	if err != nil {
		return err
	}
	res.Similar = filesSimilarity{Sketch: fmt.Sprintf("%s %dx%d bits", params.Algorithm, params.K, params.Bits), Threshold: opts.Threshold, Groups: []filesGroup{}}
	for _, g := range groups {
		fg := filesGroup{}
		for _, m := range g.Members {
			fg.Files = append(fg.Files, signed[reps[m]].Path)
		}
		for _, l := range g.Links {
			fg.Links = append(fg.Links, filesLink{A: signed[reps[l.A]].Path, B: signed[reps[l.B]].Path, Estimate: round6(l.Estimate), Exact: round6(l.Exact)})
		}
		res.Similar.Groups = append(res.Similar.Groups, fg)
	}

	if opts.Plot != "" && res.Chunks > 0 {
		l := report.ChunkLengths{Cut: sum.Cut, Last: sum.Last, Min: o.Min, Max: o.Max}
		err := writeFileSafely(opts.Plot, nil, func(w io.Writer) error {
			return report.ChunkSizes(w, plotFormat, report.Chart{Title: "Chunk sizes (winnowing)"}, l, opts.Bins)
		})
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		res.Plot = opts.Plot
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(&res)
	}
	printFilesScan(env.Stdout, &res, opts)
	return nil
}

// scanResult is files scan's account of the signed files, from their
// summary: lengths to a tenth of a byte, the ratio to six places, the
// identical files by path.
func scanResult(signed []signedFile, sum filesim.Summary, o chunk.Options) filesScanResult {
	res := filesScanResult{Files: sum.Files, Duplicates: []filesDupGroup{},
		Chunks: sum.Chunks, Bytes: sum.Bytes, UniqueChunks: sum.UniqueChunks, UniqueBytes: sum.UniqueBytes,
		DedupRatio: round6(sum.DedupRatio()), sum: sum}
	round1 := func(x float64) float64 { return math.Round(x*10) / 10 }
	lenStat := func(st filesim.LengthStats) filesLenStat {
		return filesLenStat{Count: st.Count, Mean: round1(st.Mean), Min: st.Min, Max: st.Max}
	}
	all := filesim.Lengths(sum.Cut, sum.Last)
	res.ChunkSizes = filesChunkStats{Mean: round1(all.Mean), SD: round1(all.SD), Min: all.Min, Max: all.Max,
		Cut: lenStat(filesim.Lengths(sum.Cut)), Last: lenStat(filesim.Lengths(sum.Last)), Window: [2]int{o.Min, o.Max}}
	for _, g := range sum.Identical {
		d := filesDupGroup{Bytes: signed[g[0]].Size, Root: signed[g[0]].Sig.Root.String()[:16]}
		for _, i := range g {
			d.Files = append(d.Files, signed[i].Path)
		}
		res.Duplicates = append(res.Duplicates, d)
		res.RedundantFiles += int64(len(g) - 1)
		res.RedundantBytes += int64(len(g)-1) * signed[g[0]].Size
	}
	sort.Slice(res.Duplicates, func(i, j int) bool { return res.Duplicates[i].Files[0] < res.Duplicates[j].Files[0] })
	return res
}

func printFilesScan(w io.Writer, res *filesScanResult, opts filesScanOptions) {
	fmt.Fprintf(w, "files: %d (%d bytes), skipped: %d\n", res.Files, res.Bytes, res.Skipped)
	fmt.Fprintf(w, "exact duplicates: %d groups, %d redundant files (%d bytes)\n", len(res.Duplicates), res.RedundantFiles, res.RedundantBytes)
	for _, g := range res.Duplicates {
		fmt.Fprintf(w, "  %d bytes, root %s:\n", g.Bytes, g.Root)
		for _, f := range g.Files {
			fmt.Fprintf(w, "    %s\n", f)
		}
	}
	fmt.Fprintf(w, "chunks: %d, unique: %d; dedup ratio (unique bytes / total bytes): %d / %d = %.4f\n",
		res.Chunks, res.UniqueChunks, res.UniqueBytes, res.Bytes, res.DedupRatio)
	printHistogram(w, res, opts.Bins)
	if res.Plot != "" {
		fmt.Fprintf(w, "histogram plotted to %s\n", res.Plot)
	} else if opts.Plot != "" {
		fmt.Fprintf(w, "histogram not plotted: no chunks\n")
	}
	s := res.Similar
	fmt.Fprintf(w, "similar files (%s sketch, exact chunk-Jaccard >= %.2f): %d groups\n", s.Sketch, s.Threshold, len(s.Groups))
	for gi, g := range s.Groups {
		fmt.Fprintf(w, "  group %d:\n", gi+1)
		for _, l := range g.Links {
			fmt.Fprintf(w, "    %s ~ %s  estimated %.2f  exact %.2f\n", l.A, l.B, l.Estimate, l.Exact)
		}
	}
}

// printHistogram prints the chunk-length figures and a text histogram over
// [1, max].
func printHistogram(w io.Writer, res *filesScanResult, bins int) {
	cs := res.ChunkSizes
	if res.Chunks == 0 {
		fmt.Fprintln(w, "chunk sizes: none")
		return
	}
	fmt.Fprintf(w, "chunk sizes: mean %.0f, sd %.0f bytes; shortest %d, longest %d\n", cs.Mean, cs.SD, cs.Min, cs.Max)
	fmt.Fprintf(w, "  %d chunks ended at a cut point (window [%d, %d] bytes): mean %.0f\n", cs.Cut.Count, cs.Window[0], cs.Window[1], cs.Cut.Mean)
	fmt.Fprintf(w, "  %d last chunks of files (may be shorter than %d): mean %.0f\n", cs.Last.Count, cs.Window[0], cs.Last.Mean)
	hi := max(cs.Window[1], cs.Max)
	width := float64(hi) / float64(bins)
	counts := make([]int, bins)
	peak := 0
	for _, xs := range [][]int{res.sum.Cut, res.sum.Last} {
		for _, s := range xs {
			b := min(int(float64(s-1)/width), bins-1)
			counts[b]++
			peak = max(peak, counts[b])
		}
	}
	for i, c := range counts {
		bar := strings.Repeat("#", int(math.Round(40*float64(c)/float64(peak))))
		fmt.Fprintf(w, "  %6.0f-%-6.0f %8d %s\n", float64(i)*width+1, float64(i+1)*width, c, bar)
	}
}

// plotFormatOf returns the plot format of a file name's extension.
func plotFormatOf(flag, path string) (string, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case report.PNG, report.SVG, report.PDF, report.EPS:
		return format, nil
	}
	return "", usagef("%s %s: want a .png, .svg, .pdf or .eps file", flag, path)
}
