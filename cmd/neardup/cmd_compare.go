package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
)

type compareOptions struct {
	A, B    string
	Corpus  string // JSONL (or any corpus) file holding A and B as ids
	JSON    bool
	Sampler skSamplerFlags
	Feature featFlags
	Fields  featCorpusFlags
}

func newCompareCmd(env *Env) *cobra.Command {
	var opts compareOptions
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Estimate the Jaccard similarity of two documents from their sketches, beside the exact value",
		Long: `compare extracts the features of two documents, sketches both with the
chosen sampler and prints the estimated Jaccard similarity with its standard
error (the true value lies within two standard errors about 95% of the
time), and the exact Jaccard similarity of the two feature sets. With a
weighted sampler (cws, cws-oblivious, cws-unary, icws, hmt, hmt-dep) the exact value is the weighted
Jaccard similarity sum(min)/sum(max). hmt and hmt-dep may instead answer
"below α" when the total weights differ by more than a factor 1/α: the
similarity is then at most their ratio min/max, printed as the bound.

A and B are files ("-" for standard input), or with --corpus the ids of two
documents of a corpus (JSONL, WARC, Parquet or a directory).`,
		Example: `  neardup compare a.txt b.txt
  neardup compare --corpus testdata/licenses/docs.jsonl.gz debian-copyright/alsa-topology-conf debian-copyright/alsa-ucm-conf
  neardup compare --sampler icws --k 256 --json a.html b.html`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			return runCompare(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Corpus, "corpus", "", "read A and B as document ids from this corpus")
	fl.BoolVar(&opts.JSON, "json", false, `print {"estimate": ..., "stderr": ..., "exact": ...} (hmt adds "alpha", and "below_alpha" and "bound" when the weights rule out similarity ≥ α)`)
	opts.Sampler.bind(fl, "oph", 128, true)
	skBindFeatFlags(cmd, &opts.Feature, true)
	opts.Fields.bind(cmd)
	return cmd
}

// compareResult is the --json output.
type compareResult struct {
	Estimate float64 `json:"estimate"`
	StdErr   float64 `json:"stderr"`
	Exact    float64 `json:"exact"`
	// BelowAlpha is set when an HMT estimate only says "similarity below
	// α" (sketch.Estimate.Below): then Estimate and Bound hold the
	// weight-ratio upper bound (< Alpha) and StdErr is 0.
	BelowAlpha bool `json:"below_alpha,omitempty"`
	// Alpha is HMT's interestingness threshold α (absent for other
	// samplers).
	Alpha float64 `json:"alpha,omitempty"`
	// Bound is the upper bound min/max of the total weights when
	// BelowAlpha (absent otherwise; 0 when one document has no features).
	Bound *float64 `json:"bound,omitempty"`
}

func runCompare(ctx context.Context, env *Env, opts compareOptions) error {
	alg, err := skParseSampler(opts.Sampler.Sampler)
	if err != nil {
		return err
	}
	idfPaths := []string{opts.A, opts.B}
	if opts.Corpus != "" {
		idfPaths = []string{opts.Corpus}
	}
	fo, err := skFeatureOptions(ctx, env, opts.Feature, alg, idfPaths, opts.Fields, "compare")
	if err != nil {
		return err
	}
	sk, err := newSketcher(opts.Sampler, fo)
	if err != nil {
		return err
	}
	da, db, err := compareDocs(env, opts)
	if err != nil {
		return err
	}
	x, err := newFeatExtractors(fo)
	if err != nil {
		return err
	}
	fa := x.pick(da).Extract(nil, da.Body)
	fb := x.pick(db).Extract(nil, db.Body)
	smp := sk.newSampler()
	sa, _, err := sk.make(smp, nil, fa)
	if err != nil {
		return err
	}
	sb, _, err := sk.make(smp, nil, fb)
	if err != nil {
		return err
	}
	e, err := sketch.Jaccard(sa, sb)
	if err != nil {
		return err
	}
	res := compareResult{Estimate: e.J, StdErr: e.StdErr, BelowAlpha: e.Below, Alpha: e.Alpha}
	if e.Below {
		bound := e.J
		res.Bound = &bound
	}
	var inter int
	if alg.IsWeighted() {
		res.Exact = weighted.Jaccard(fa, fb)
	} else {
		res.Exact, inter = exactJaccard(fa, fb)
	}
	if opts.JSON {
		enc := json.NewEncoder(env.Stdout)
		return enc.Encode(res)
	}
	kind := "Jaccard"
	if alg.IsWeighted() {
		kind = "weighted Jaccard"
	}
	est := fmt.Sprintf("%.4f ± %.4f", res.Estimate, res.StdErr)
	if e.Below {
		est = fmt.Sprintf("below α=%.2f (weight ratio bound ≤ %.4f)", e.Alpha, e.J)
	}
	fmt.Fprintf(env.Stdout, "estimated %s  %s  (%v k=%d b=%d)\n", kind, est, sk.alg, sk.header.K, sk.bits)
	if alg.IsWeighted() {
		fmt.Fprintf(env.Stdout, "exact %s      %.4f  (%d and %d features)\n", kind, res.Exact, len(fa), len(fb))
	} else {
		fmt.Fprintf(env.Stdout, "exact %s      %.4f  (%d and %d features, %d shared)\n", kind, res.Exact, len(fa), len(fb), inter)
	}
	return nil
}

// exactJaccard returns the exact Jaccard similarity of two feature sets
// (sketch.ExactJaccard, the index's exact verification) and the size of
// their intersection. Two empty sets have similarity 1.
func exactJaccard(a, b []feature.Feature) (float64, int) {
	ids := func(fs []feature.Feature) []uint64 {
		out := make([]uint64, len(fs))
		for i, f := range fs {
			out[i] = f.ID
		}
		slices.Sort(out)
		return out
	}
	ia, ib := ids(a), ids(b)
	inter, _ := sketch.Overlap(ia, ib)
	return sketch.ExactJaccard(ia, ib), inter
}

// compareDocs returns documents A and B: whole files (or standard input
// for "-"), or with --corpus the first documents of the corpus with those
// ids.
func compareDocs(env *Env, opts compareOptions) (*corpus.Document, *corpus.Document, error) {
	if opts.Corpus == "" {
		if opts.A == "-" && opts.B == "-" {
			return nil, nil, usagef("only one of A and B can be standard input")
		}
		read := func(p string) (*corpus.Document, error) {
			var data []byte
			var err error
			if p == "-" {
				data, err = io.ReadAll(env.Stdin)
			} else {
				data, err = os.ReadFile(p)
			}
			if err != nil {
				return nil, err
			}
			return &corpus.Document{ID: p, Body: data}, nil
		}
		a, err := read(opts.A)
		if err != nil {
			return nil, nil, err
		}
		b, err := read(opts.B)
		return a, b, err
	}
	r, err := openFeatCorpus(env, []string{opts.Corpus}, opts.Fields, "compare")
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var a, b *corpus.Document
	for r.Next() && (a == nil || b == nil) {
		d := r.Doc()
		if a == nil && d.ID == opts.A {
			a = d.Clone()
		}
		if b == nil && d.ID == opts.B {
			b = d.Clone()
		}
	}
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	switch {
	case a == nil:
		return nil, nil, usagef("no document with id %q in %s", opts.A, opts.Corpus)
	case b == nil:
		return nil, nil, usagef("no document with id %q in %s", opts.B, opts.Corpus)
	}
	return a, b, nil
}
