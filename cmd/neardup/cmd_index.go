package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// indexOptions are shared by index add, query and remove.
type indexOptions struct {
	Store     string
	Sampler   string
	K         int
	Seed      uint64
	LSH       string
	Threshold float64
	Features  bool
	Quiet     bool
	Feature   featFlags
	Corpus    featCorpusFlags
	Args      []string
}

func (o *indexOptions) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.Store, "store", "", "the index: a Pebble directory (required)")
	fl.StringVar(&o.Sampler, "sampler", "oph", "sampler (must match the index)")
	fl.IntVar(&o.K, "k", 128, "samples per sketch (must match the index)")
	fl.Uint64Var(&o.Seed, "sketch-seed", 0, "seed of the sampler and LSH keys (must match the index)")
	fl.StringVar(&o.LSH, "lsh", "auto", "supershingle scheme (must match the index): auto, altavista, bing or R,B[,M]")
	fl.Float64VarP(&o.Threshold, "threshold", "t", 0.8, "similarity threshold (for auto LSH parameters and for query matches)")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output")
	o.Feature.bind(cmd, false)
	o.Corpus.bind(cmd)
	_ = cmd.MarkFlagRequired("store")
}

func newIndexCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Maintain a persistent near-duplicate index (add, query, remove)",
		Long: `index keeps sketches and LSH postings in a Pebble store, so a new crawl can be
deduplicated against earlier ones. The sampler, k, seed, LSH scheme and
feature flags are recorded in the store on first use and must match after.`,
		Example: `  neardup index add --store idx/ crawl1.jsonl.gz
  neardup index query --store idx/ crawl2.jsonl.gz > matches.jsonl
  neardup index remove --store idx/ doc-17 doc-42`,
	}
	cmd.AddCommand(newIndexAddCmd(env), newIndexQueryCmd(env), newIndexRemoveCmd(env))
	return cmd
}

func newIndexAddCmd(env *Env) *cobra.Command {
	var opts indexOptions
	cmd := &cobra.Command{
		Use:     "add FILE...",
		Short:   "Add documents to the index (a document with a known id replaces it)",
		Example: "  neardup index add --store idx/ testdata/licenses/docs.jsonl.gz",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return runIndexAdd(cmd.Context(), env, opts)
		},
	}
	opts.bind(cmd)
	cmd.Flags().BoolVar(&opts.Features, "features", true, "store feature sets so queries verify by exact Jaccard")
	return cmd
}

func newIndexQueryCmd(env *Env) *cobra.Command {
	var opts indexOptions
	cmd := &cobra.Command{
		Use:   "query FILE...",
		Short: "Print, for each document, its near-duplicates in the index (JSONL)",
		Long: `query prints one line per input document:
{"id": ..., "matches": [{"id": ..., "similarity": ..., "estimate": ..., "stderr": ..., "exact": ...}]}`,
		Example: "  neardup index query --store idx/ new.jsonl",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return runIndexQuery(cmd.Context(), env, opts)
		},
	}
	opts.bind(cmd)
	return cmd
}

func newIndexRemoveCmd(env *Env) *cobra.Command {
	var opts indexOptions
	cmd := &cobra.Command{
		Use:     "remove ID...",
		Short:   "Remove documents from the index by id",
		Example: "  neardup index remove --store idx/ debian-copyright/adduser",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return runIndexRemove(cmd.Context(), env, opts)
		},
	}
	opts.bind(cmd)
	return cmd
}

// indexSession is an open index with the means to sketch documents for it.
type indexSession struct {
	st  store.Store
	x   *index.Index
	smp sample.Sampler
	ex  *featExtractors
}

func openIndexSession(opts indexOptions) (*indexSession, error) {
	if opts.Store == "" {
		return nil, usagef("--store is required")
	}
	fo, err := opts.Feature.options()
	if err != nil {
		return nil, err
	}
	if err := checkFeatOptions(fo); err != nil {
		return nil, err
	}
	alg, err := sketch.ParseAlgorithm(opts.Sampler)
	if err != nil {
		return nil, usagef("--sampler: %v", err)
	}
	if alg.IsSet() || alg.IsWeighted() {
		return nil, usagef("--sampler %v: the index needs a slot-wise unweighted sampler", alg)
	}
	smp, err := sample.New(sample.Config{Algorithm: alg, K: opts.K, Seed: opts.Seed, Features: fo})
	if err != nil {
		return nil, usagef("%v", err)
	}
	p, err := parseLSH(opts.LSH, opts.Seed)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenPebble(opts.Store, nil)
	if err != nil {
		return nil, err
	}
	if p == nil {
		// Adopt the scheme of an existing index.
		if _, sp, ok, err := index.Stored(st); err != nil {
			st.Close()
			return nil, err
		} else if ok {
			p = &sp
		}
	}
	if p == nil {
		c, err := dedup.ChooseLSH(opts.Threshold, opts.K, opts.Seed)
		if err != nil {
			st.Close()
			return nil, usagef("%v", err)
		}
		p = &c
	}
	ex, err := newFeatExtractors(fo)
	if err != nil {
		st.Close()
		return nil, err
	}
	x, err := index.Open(st, index.Config{Header: smp.Header(), LSH: *p, Threshold: opts.Threshold})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &indexSession{st: st, x: x, smp: smp, ex: ex}, nil
}

// doc sketches a corpus document; withFeatures keeps its sorted feature ids.
func (s *indexSession) doc(d *corpus.Document, withFeatures bool, fs []feature.Feature) (*index.Doc, []feature.Feature) {
	fs = s.ex.pick(d).Extract(fs[:0], d.Body)
	out := &index.Doc{Name: d.ID, Sketch: sketch.Sketch{Header: s.smp.Header(), Values: s.smp.Sketch(nil, fs), Size: float64(len(fs))}}
	if withFeatures {
		out.Features = make([]uint64, len(fs))
		for i, f := range fs {
			out.Features[i] = f.ID
		}
		slices.Sort(out.Features)
	}
	return out, fs
}

func (s *indexSession) close() error { return s.st.Close() }

func runIndexAdd(ctx context.Context, env *Env, opts indexOptions) error {
	s, err := openIndexSession(opts)
	if err != nil {
		return err
	}
	defer s.close()
	r, err := openFeatCorpus(env, opts.Args, opts.Corpus, "index add")
	if err != nil {
		return err
	}
	defer r.Close()
	var po progress.Options
	if !opts.Quiet {
		po = progress.Options{W: env.Stderr, Interactive: env.Interactive}
	}
	bar := progress.New(po, "add", r.TotalBytes(), "bytes")
	var batch []*index.Doc
	var fs []feature.Feature
	var added int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := s.x.Add(batch...); err != nil {
			return err
		}
		added += int64(len(batch))
		batch = batch[:0]
		return nil
	}
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var d *index.Doc
		d, fs = s.doc(r.Doc(), opts.Features, fs)
		batch = append(batch, d)
		if len(batch) == 1024 {
			if err := flush(); err != nil {
				return err
			}
		}
		bar.Set(r.BytesRead())
	}
	if err := r.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	bar.Finish()
	if err := store.Compact(ctx, s.st); err != nil {
		return err
	}
	st := r.Stats()
	fmt.Fprintf(env.Stdout, "added %d documents to %s (read %d, rejected %d)\n", added, opts.Store, st.Read, st.Rejected)
	return nil
}

type queryMatchJSON struct {
	ID         string  `json:"id"`
	Similarity float64 `json:"similarity"`
	Estimate   float64 `json:"estimate"`
	StdErr     float64 `json:"stderr"`
	Exact      bool    `json:"exact"`
}

type queryJSON struct {
	ID      string           `json:"id"`
	Matches []queryMatchJSON `json:"matches"`
}

func runIndexQuery(ctx context.Context, env *Env, opts indexOptions) error {
	s, err := openIndexSession(opts)
	if err != nil {
		return err
	}
	defer s.close()
	r, err := openFeatCorpus(env, opts.Args, opts.Corpus, "index query")
	if err != nil {
		return err
	}
	defer r.Close()
	w := bufio.NewWriter(env.Stdout)
	enc := json.NewEncoder(w)
	var fs []feature.Feature
	var ms []index.Match
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var d *index.Doc
		d, fs = s.doc(r.Doc(), true, fs)
		ms, err = s.x.Query(ms[:0], &d.Sketch, d.Features, "")
		if err != nil {
			return err
		}
		out := queryJSON{ID: d.Name, Matches: []queryMatchJSON{}}
		for _, m := range ms {
			out.Matches = append(out.Matches, queryMatchJSON{ID: m.Name, Similarity: round6(m.Similarity()), Estimate: round6(m.Estimate.J), StdErr: round6(m.Estimate.StdErr), Exact: m.Exact >= 0})
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	return w.Flush()
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func runIndexRemove(_ context.Context, env *Env, opts indexOptions) error {
	s, err := openIndexSession(opts)
	if err != nil {
		return err
	}
	defer s.close()
	n, err := s.x.Remove(opts.Args...)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "removed %d of %d ids from %s\n", n, len(opts.Args), opts.Store)
	return nil
}
