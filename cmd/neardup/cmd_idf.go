package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/feature"
)

// newIDFCmd groups the document-frequency table commands.
func newIDFCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "idf",
		Short: "Build and inspect document-frequency tables for tf-idf weighting",
		Long: `A document-frequency table counts, for every feature, how many documents of
a corpus contain it. tf-idf weighting (neardup features --weight tfidf)
divides by it, so boilerplate shared by many documents weighs little. A
table is only valid for the feature flags it was built with (it records
their hash).`,
		Example: `  neardup idf build corpus.jsonl.gz --idf idf.bin
  neardup idf show idf.bin`,
	}
	cmd.AddCommand(newIDFBuildCmd(env), newIDFShowCmd(env))
	return cmd
}

type idfBuildOptions struct {
	Paths   []string
	Out     string // --idf
	JSON    bool
	MinDF   uint32
	Feature featFlags
	Corpus  featCorpusFlags
}

func newIDFBuildCmd(env *Env) *cobra.Command {
	var opts idfBuildOptions
	cmd := &cobra.Command{
		Use:   "build FILE|DIR|-... --idf FILE",
		Short: "Count document frequencies of features over a corpus",
		Long: `build reads the inputs once, extracts each document's features with the
given feature flags, and writes the document count and every feature's
document frequency to --idf in neardup's compact idf format (sorted ids,
varint deltas, CRC-32C). Use the same feature flags when weighting with it.`,
		Example: `  neardup idf build testdata/licenses/docs.jsonl.gz --idf idf.bin
  neardup idf build crawl/ --min-df 2 --shingle 4 --idf idf-k4.bin`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return runIDFBuild(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "idf", "", "the table file to write, the one --idf reads when weighting (required)")
	// -o/--out named a file here, a directory everywhere else.
	cmd.Flags().StringVarP(&opts.Out, "out", "o", "", "the table file to write")
	_ = cmd.Flags().MarkDeprecated("out", "use --idf FILE")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was written as JSON")
	cmd.Flags().Uint32Var(&opts.MinDF, "min-df", 1, "leave out features found in fewer documents (they weigh as the rarest)")
	opts.Feature.bind(cmd, false)
	opts.Corpus.bind(cmd)
	return cmd
}

func runIDFBuild(ctx context.Context, env *Env, opts idfBuildOptions) error {
	if opts.Out == "" {
		return usagef("--idf FILE is required")
	}
	o, err := opts.Feature.options()
	if err != nil {
		return err
	}
	if err := checkFeatOptions(o); err != nil {
		return err
	}
	b, stats, err := featCountDF(ctx, env, opts.Paths, opts.Corpus, o, "idf build")
	if err != nil {
		return err
	}
	t := b.Table(opts.MinDF)
	enc, _ := t.MarshalBinary()
	if err := idfWriteFile(opts.Out, enc); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "neardup idf build: %v\n", stats)
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(idfJSON{Path: opts.Out, Documents: t.Docs(), Features: t.Len(), Bytes: len(enc),
			FeatureOptions: o.String(), FeatureIDHash: fmt.Sprintf("%016x", o.IDHash())})
	}
	_, err = fmt.Fprintf(env.Stdout, "%s: %d documents, %d features, %d bytes; %s (id hash %016x)\n",
		opts.Out, t.Docs(), t.Len(), len(enc), o, o.IDHash())
	return err
}

// idfJSON is the --json output of idf build and idf show.
type idfJSON struct {
	Path           string `json:"path"`
	Documents      uint64 `json:"documents"`
	Features       int    `json:"features"`
	Bytes          int    `json:"bytes,omitempty"`
	FeatureOptions string `json:"feature_options,omitempty"`
	FeatureIDHash  string `json:"feature_id_hash"`
	Checksum       string `json:"checksum,omitempty"`
}

// idfWriteFile writes data with createOutput (mode 0644, through an
// unnamed or temporary file), so a crash never leaves a half-written table.
func idfWriteFile(path string, data []byte) error {
	return createOutput(context.Background(), path, outFile{Replace: true}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

type idfShowOptions struct {
	Path string
	JSON bool
}

func newIDFShowCmd(env *Env) *cobra.Command {
	var opts idfShowOptions
	cmd := &cobra.Command{
		Use:     "show FILE",
		Short:   "Print a document-frequency table's header",
		Example: "  neardup idf show idf.bin",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return runIDFShow(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the header as JSON")
	return cmd
}

func runIDFShow(_ context.Context, env *Env, opts idfShowOptions) error {
	f, err := os.Open(opts.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	t, err := feature.ReadIDF(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Path, err)
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(idfJSON{Path: opts.Path, Documents: t.Docs(), Features: t.Len(),
			FeatureIDHash: fmt.Sprintf("%016x", t.FeatureConfig()), Checksum: fmt.Sprintf("%016x", t.Checksum())})
	}
	_, err = fmt.Fprintf(env.Stdout, "%s: %d documents, %d features, feature id hash %016x, checksum %016x\n",
		opts.Path, t.Docs(), t.Len(), t.FeatureConfig(), t.Checksum())
	return err
}
