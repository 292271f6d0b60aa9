package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/delta"
	"github.com/neardup/neardup/chunk/filesim"
)

type filesSimilarOptions struct {
	File   string
	In     []string
	Top    int
	Sketch string
	Chunk  chunkFlags
	JSON   bool
}

func newFilesSimilarCmd(env *Env) *cobra.Command {
	var opts filesSimilarOptions
	cmd := &cobra.Command{
		Use:   "similar FILE --in DIR",
		Short: "List the files under DIR most similar to FILE by shared chunks",
		Long: `similar cuts FILE and every file under --in into content-defined chunks,
finds candidates through the files' chunk sketches (--sketch), and lists the
most similar by their score: the exact Jaccard similarity of the two files'
sets of chunks (1 for identical content). Files that share no chunk with
FILE are not listed, nor is FILE itself when it lies under --in.`,
		Example: `  neardup files similar draft-v3.txt --in ~/docs --top 5
  neardup files similar draft-v3.txt --in ~/docs --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return runFilesSimilar(cmd.Context(), env, opts)
		},
	}
	opts.Chunk.bind(cmd)
	cmd.Flags().StringSliceVar(&opts.In, "in", nil, "directories (or files) to search (required)")
	cmd.Flags().IntVar(&opts.Top, "top", 10, "how many files to list, at least 1")
	cmd.Flags().StringVar(&opts.Sketch, "sketch", "rdc", "similarity sketch: rdc (12 x 6 bits) or large (128 x 8 bits)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	return cmd
}

// filesSimilarResult is the --json output of files similar.
type filesSimilarResult struct {
	File    string              `json:"file"`
	Chunks  int                 `json:"chunks"`
	Indexed int                 `json:"indexed"`
	Sketch  string              `json:"sketch"`
	Matches []filesSimilarMatch `json:"matches"`
}

type filesSimilarMatch struct {
	File string `json:"file"`
	// Score is the exact chunk-Jaccard; Estimate the sketch estimate from
	// Matches of Samples agreeing positions.
	Score     float64 `json:"score"`
	Estimate  float64 `json:"estimate"`
	Matches   int     `json:"matches"`
	Samples   int     `json:"samples"`
	Identical bool    `json:"identical"`
}

func runFilesSimilar(ctx context.Context, env *Env, opts filesSimilarOptions) error {
	if len(opts.In) == 0 {
		return usagef("--in DIR is required")
	}
	if opts.Top < 1 {
		return usagef("--top %d: want at least 1", opts.Top)
	}
	o, err := opts.Chunk.options()
	if err != nil {
		return err
	}
	params, err := sketchParams(opts.Sketch)
	if err != nil {
		return err
	}
	signer, err := chunk.NewSigner(o)
	if err != nil {
		return err
	}
	qsig, err := signFile(signer, opts.File, nil)
	if err != nil {
		return err
	}
	files, _, err := walkFiles(ctx, env, opts.In)
	if err != nil {
		return err
	}
	// FILE is not its own match.
	if qi, err := os.Stat(opts.File); err == nil {
		n := 0
		for _, f := range files {
			if fi, err := os.Stat(f.Path); err == nil && os.SameFile(qi, fi) {
				continue
			}
			files[n] = f
			n++
		}
		files = files[:n]
	}
	signed, _, err := signFiles(ctx, env, files, o, "indexing")
	if err != nil {
		return err
	}
	lists := make([][]chunk.Ref, len(signed))
	for i, f := range signed {
		lists[i] = f.Sig.Chunks
	}
	ms, err := filesim.Similar(qsig.Chunks, lists, params, opts.Top)
	if err != nil {
		return err
	}
	res := filesSimilarResult{File: opts.File, Chunks: len(qsig.Chunks), Indexed: len(signed),
		Sketch: fmt.Sprintf("%s %dx%d bits", params.Algorithm, params.K, params.Bits), Matches: []filesSimilarMatch{}}
	for _, m := range ms {
		f := signed[m.ID]
		res.Matches = append(res.Matches, filesSimilarMatch{File: f.Path, Score: round6(m.Score), Estimate: round6(m.Estimate),
			Matches: m.Matches, Samples: params.K, Identical: f.Sig.Root == qsig.Root})
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(&res)
	}
	w := env.Stdout
	fmt.Fprintf(w, "%d files indexed; most similar to %s (%d chunks), by score (exact chunk-Jaccard):\n", res.Indexed, opts.File, res.Chunks)
	fmt.Fprintf(w, "%6s %9s %8s  %s\n", "score", "estimated", "matches", "file")
	for _, m := range res.Matches {
		same := ""
		if m.Identical {
			same = "  (identical)"
		}
		fmt.Fprintf(w, "%6.2f %9.2f %5d/%-2d  %s%s\n", m.Score, m.Estimate, m.Matches, m.Samples, m.File, same)
	}
	if len(res.Matches) == 0 {
		fmt.Fprintln(w, "  (no file shares a chunk with it)")
	}
	return nil
}

type filesPlanOptions struct {
	Old, New string
	Delta    string
	Force    bool // replace an existing --delta file
	Chunk    chunkFlags
	JSON     bool
}

func newFilesPlanCmd(env *Env) *cobra.Command {
	var opts filesPlanOptions
	cmd := &cobra.Command{
		Use:   "plan OLD NEW",
		Short: "Plan a sync: which chunks of NEW are already in OLD (a file or directory), bytes to send",
		Example: `  neardup files plan v1.tar v2.tar
  neardup files plan ~/backup/project ./build.bin --delta build.delta`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New = args[0], args[1]
			return runFilesPlan(cmd.Context(), env, opts)
		},
	}
	opts.Chunk.bind(cmd)
	cmd.Flags().StringVar(&opts.Delta, "delta", "", "write a delta file that 'files apply' turns back into NEW (mode 0644; an existing file is kept unless --force)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing --delta file")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the plan's figures as JSON")
	return cmd
}

func runFilesPlan(ctx context.Context, env *Env, opts filesPlanOptions) error {
	o, err := opts.Chunk.options()
	if err != nil {
		return err
	}
	files, _, err := walkFiles(ctx, env, []string{opts.Old})
	if err != nil {
		return err
	}
	signed, _, err := signFiles(ctx, env, files, o, "indexing OLD")
	if err != nil {
		return err
	}
	signer, err := chunk.NewSigner(o)
	if err != nil {
		return err
	}
	nsig, err := signFile(signer, opts.New, nil)
	if err != nil {
		return err
	}
	sources := make([]delta.Source, len(signed))
	inputs := []string{opts.New}
	for i, f := range signed {
		sources[i] = delta.Source{Name: f.Rel, Sig: f.Sig}
		inputs = append(inputs, f.Path)
	}
	p := delta.NewPlan(sources, nsig)
	res := filesPlanResult{New: opts.New, NewBytes: p.NewSize, Chunks: p.Chunks, Root: fmt.Sprint(p.NewRoot), Old: opts.Old,
		OldFiles: len(signed), OldUsed: len(p.Sources), Present: p.Present, PresentBytes: p.CopyBytes,
		SendBytes: p.LiteralBytes, Operations: len(p.Ops), SignatureBytes: p.SignatureBytes}
	if opts.Delta != "" {
		nf, err := os.Open(opts.New)
		if err != nil {
			return err
		}
		defer nf.Close()
		err = createOutput(ctx, opts.Delta, outFile{Inputs: inputs, Replace: opts.Force}, func(dw io.Writer) error {
			cw := &filesCountingWriter{w: dw}
			err := delta.Write(cw, p, nf)
			res.DeltaBytes = cw.n
			return err
		})
		if err != nil {
			return err
		}
		res.Delta = opts.Delta
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(&res)
	}
	w := env.Stdout
	fmt.Fprintf(w, "NEW %s: %d bytes, %d chunks, root %s\n", opts.New, p.NewSize, p.Chunks, p.NewRoot)
	fmt.Fprintf(w, "OLD %s: %d files indexed, %d used\n", opts.Old, len(signed), len(p.Sources))
	pct := func(x int64) float64 {
		if p.NewSize == 0 {
			return 0
		}
		return 100 * float64(x) / float64(p.NewSize)
	}
	fmt.Fprintf(w, "chunks present: %d of %d; bytes present: %d (%.1f%%)\n", p.Present, p.Chunks, p.CopyBytes, pct(p.CopyBytes))
	fmt.Fprintf(w, "bytes to send: %d (%.1f%%) in %d operations; recursive signature exchange: %d bytes\n",
		p.LiteralBytes, pct(p.LiteralBytes), len(p.Ops), p.SignatureBytes)
	if res.Delta != "" {
		fmt.Fprintf(w, "delta written to %s: %d bytes\n", res.Delta, res.DeltaBytes)
	}
	return nil
}

// filesPlanResult is the --json output of files plan.
type filesPlanResult struct {
	New            string `json:"new"`
	NewBytes       int64  `json:"new_bytes"`
	Chunks         int    `json:"chunks"`
	Root           string `json:"root"`
	Old            string `json:"old"`
	OldFiles       int    `json:"old_files"`
	OldUsed        int    `json:"old_files_used"`
	Present        int    `json:"chunks_present"`
	PresentBytes   int64  `json:"bytes_present"`
	SendBytes      int64  `json:"bytes_to_send"`
	Operations     int    `json:"operations"`
	SignatureBytes int64  `json:"signature_bytes"`
	Delta          string `json:"delta,omitempty"`
	DeltaBytes     int64  `json:"delta_bytes,omitempty"`
}

type filesCountingWriter struct {
	w io.Writer
	n int64
}

func (c *filesCountingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type filesApplyOptions struct {
	Old, Delta string
	Out        string // the rebuilt file: the third argument (or the deprecated -o)
	Force      bool   // replace an existing NEW
	// MaxBytes caps the size the delta may claim for NEW (0: the free
	// space on NEW's filesystem).
	MaxBytes byteSize
	Chunk    chunkFlags
	JSON     bool
}

func newFilesApplyCmd(env *Env) *cobra.Command {
	var opts filesApplyOptions
	cmd := &cobra.Command{
		Use:   "apply OLD DELTA NEW",
		Short: "Rebuild NEW from OLD (file or directory) and a delta, verifying its signature root",
		Long: `apply rebuilds the file NEW from OLD (the file or directory the delta was
planned against) and DELTA (from 'files plan --delta'), and checks the
rebuilt bytes against the signature root the plan recorded. NEW is written
through an unnamed file linked into place when it is complete and verified
(mode 0644): a failure, SIGTERM or even SIGKILL leaves nothing behind. NEW
never replaces an input, nor an existing file unless --force. The size the
delta claims for NEW is checked before anything is written: over --max-bytes
(default: the free space on NEW's filesystem) it is refused.`,
		Example: "  neardup files apply v1.tar v2.delta v2.tar",
		Args:    cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.Delta = args[0], args[1]
			if len(args) == 3 {
				if opts.Out != "" {
					return usagef("NEW given twice: as an argument and with -o")
				}
				opts.Out = args[2]
			}
			return runFilesApply(cmd.Context(), env, opts)
		},
	}
	opts.Chunk.bind(cmd)
	// -o/--out named the rebuilt file; everywhere else it is a directory.
	cmd.Flags().StringVarP(&opts.Out, "out", "o", "", "where to write the rebuilt file")
	_ = cmd.Flags().MarkDeprecated("out", "give NEW as the third argument")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was rebuilt as JSON")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing file NEW")
	cmd.Flags().Var(&opts.MaxBytes, "max-bytes", "refuse a delta that claims NEW is larger than this (default: the free space on NEW's filesystem)")
	return cmd
}

func runFilesApply(ctx context.Context, env *Env, opts filesApplyOptions) error {
	if opts.Out == "" {
		return usagef("NEW, the file to write, is required: files apply OLD DELTA NEW")
	}
	o, err := opts.Chunk.options()
	if err != nil {
		return err
	}
	info, err := os.Stat(opts.Old)
	if err != nil {
		return err
	}
	df, err := os.Open(opts.Delta)
	if err != nil {
		return err
	}
	defer df.Close()
	claimed, err := delta.ReadHeader(df)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Delta, err)
	}
	limit, what := int64(opts.MaxBytes), "--max-bytes"
	if limit <= 0 {
		limit, what = freeBytes(filepath.Dir(opts.Out)), "the free space on its filesystem"
	}
	if limit >= 0 && claimed.NewSize > limit {
		return fmt.Errorf("%s claims %s is %d bytes, more than %s (%d bytes): nothing written", opts.Delta, opts.Out, claimed.NewSize, what, limit)
	}
	if _, err := df.Seek(0, io.SeekStart); err != nil {
		return err
	}
	inputs := []string{opts.Delta, opts.Old}
	var opened []*os.File
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	open := func(i int, name string) (io.ReaderAt, int64, error) {
		path := opts.Old
		if info.IsDir() {
			if !filepath.IsLocal(filepath.FromSlash(name)) {
				return nil, 0, fmt.Errorf("%w: source name %q escapes %s", delta.ErrFormat, name, opts.Old)
			}
			path = filepath.Join(opts.Old, filepath.FromSlash(name))
		}
		if p, same := sameAsAny(opts.Out, []string{path}); same {
			return nil, 0, usagef("refusing to write %s: it is the input %s", opts.Out, p)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, err
		}
		opened = append(opened, f)
		st, err := f.Stat()
		if err != nil {
			return nil, 0, err
		}
		return f, st.Size(), nil
	}
	var h *delta.Header
	err = createOutput(ctx, opts.Out, outFile{Inputs: inputs, Replace: opts.Force}, func(w io.Writer) error {
		var err error
		h, err = delta.Apply(w, ctxReader{ctx, df}, open, o)
		return err
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(struct {
			New      string `json:"new"`
			Bytes    int64  `json:"bytes"`
			OldFiles int    `json:"old_files"`
			Root     string `json:"root"`
			Verified bool   `json:"verified"`
		}{opts.Out, h.NewSize, len(h.Names), fmt.Sprint(h.NewRoot), true})
	}
	_, err = fmt.Fprintf(env.Stdout, "rebuilt %s: %d bytes from %d old files, root %s verified\n", opts.Out, h.NewSize, len(h.Names), h.NewRoot)
	return err
}
