package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"text/tabwriter"

	"github.com/axiomhq/hyperloglog"
	"github.com/spf13/cobra"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/rabin"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

type countOptions struct {
	Files        []string
	Raw          bool
	Exact        bool
	JSON         bool
	HLLPrecision int
	Workers      int
	Sampler      skSamplerFlags
	Feature      featFlags
	Corpus       featCorpusFlags
}

func newCountCmd(env *Env) *cobra.Command {
	var opts countOptions
	cmd := &cobra.Command{
		Use:   "count [FILE|DIR|-]...",
		Short: "Estimate the number of distinct documents and distinct shingles of a corpus",
		Long: `count estimates how many distinct documents and how many distinct shingles
(features: shingles, words or character n-grams per the feature flags) a
corpus holds, in one pass and bounded memory, two ways:

  - from sketches: every batch of documents is sketched with --sampler and
    the sketches are merged into one union sketch, whose cardinality
    estimate (package sketch: Flajolet-Martin 1/mean(min) - 1 for minhash,
    prefix and lazybits; (k-1)/U(k) for bottomk; kept*m for proportional;
    the censored-minimum estimate for oph and superminhash) is the count;
  - with HyperLogLog (github.com/axiomhq/hyperloglog), for comparison.

A document is identified by the Rabin fingerprint of its normalized text
(the one 'neardup fingerprint --normalized' prints), or of its raw bytes
with --raw. --exact also counts exactly, in memory proportional to the
number of distinct shingles.`,
		Example: `  neardup count testdata/licenses/docs.jsonl.gz --exact
  neardup count --sampler minhash --k 4096 crawl/ --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return runCount(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Raw, "raw", false, "identify documents by their raw bytes instead of their normalized text")
	fl.BoolVar(&opts.Exact, "exact", false, "also count exactly (memory grows with the number of distinct shingles)")
	fl.BoolVar(&opts.JSON, "json", false, "print the counts as JSON")
	fl.IntVar(&opts.HLLPrecision, "hll-precision", 14, "HyperLogLog precision p (2^p registers, 4 to 18)")
	fl.IntVar(&opts.Workers, "workers", runtime.NumCPU(), "parallel workers")
	opts.Sampler.bind(fl, "bottomk", 1024, false)
	skBindFeatFlags(cmd, &opts.Feature, false)
	opts.Corpus.bind(cmd)
	return cmd
}

// countResult is the --json output of count.
type countResult struct {
	Documents int64       `json:"documents"`
	Rejected  int64       `json:"rejected"`
	Sketch    countSketch `json:"sketch"`
	HLL       countHLL    `json:"hyperloglog"`
	Exact     *countExact `json:"exact,omitempty"`
	Features  string      `json:"features"`
	Sampler   string      `json:"sampler"`
}

type countSketch struct {
	DistinctDocuments float64 `json:"distinct_documents"`
	DistinctShingles  float64 `json:"distinct_shingles"`
}

type countHLL struct {
	Precision         int    `json:"precision"`
	DistinctDocuments uint64 `json:"distinct_documents"`
	DistinctShingles  uint64 `json:"distinct_shingles"`
}

type countExact struct {
	DistinctDocuments int `json:"distinct_documents"`
	DistinctShingles  int `json:"distinct_shingles"`
}

// countWorker is one worker's running state: union sketches, HyperLogLogs
// and (with --exact) sets of what it has seen.
type countWorker struct {
	x          *featExtractors
	smp        sample.Sampler
	fs, all    []feature.Feature
	fps        []feature.Feature
	vals       []uint64
	norm       []byte
	uShingles  *sketch.DistinctCounter
	uDocs      *sketch.DistinctCounter
	hllShingle *hyperloglog.Sketch
	hllDocs    *hyperloglog.Sketch
	exShingles map[uint64]struct{}
	exDocs     map[uint64]struct{}
}

func runCount(ctx context.Context, env *Env, opts countOptions) error {
	if opts.Workers < 1 {
		return usagef("--workers %d must be at least 1", opts.Workers)
	}
	if opts.HLLPrecision < 4 || opts.HLLPrecision > 18 {
		return usagef("--hll-precision %d not in [4, 18]", opts.HLLPrecision)
	}
	// count needs sketches with a union and a cardinality: unweighted.
	alg, err := parseSampler(opts.Sampler.Sampler, countSamplers)
	if err != nil {
		return err
	}
	fo, err := skFeatureOptions(ctx, env, opts.Feature, alg, opts.Files, opts.Corpus, "count")
	if err != nil {
		return err
	}
	sk, err := newSketcher(opts.Sampler, fo)
	if err != nil {
		return err
	}
	fpTable := rabin.New(rabin.DefaultPoly)
	var workers []*countWorker
	newWorker := func() (*countWorker, error) {
		x, err := newFeatExtractors(fo)
		if err != nil {
			return nil, err
		}
		w := &countWorker{x: x, smp: sk.newSampler()}
		if w.uShingles, err = sketch.NewDistinctCounter(sk.header); err != nil {
			return nil, usagef("--sampler %v: %v", sk.alg, err)
		}
		w.uDocs, _ = sketch.NewDistinctCounter(sk.header)
		if w.hllShingle, err = hyperloglog.NewSketch(uint8(opts.HLLPrecision), true); err != nil {
			return nil, usagef("--hll-precision: %v", err)
		}
		w.hllDocs, _ = hyperloglog.NewSketch(uint8(opts.HLLPrecision), true)
		if opts.Exact {
			w.exShingles, w.exDocs = map[uint64]struct{}{}, map[uint64]struct{}{}
		}
		workers = append(workers, w)
		return w, nil
	}
	work := func(w *countWorker, b *docBatch) error {
		w.all, w.fps = w.all[:0], w.fps[:0]
		for i := range b.docs {
			d := &b.docs[i].doc
			e := w.x.pick(d)
			w.fs = e.Extract(w.fs[:0], d.Body)
			w.all = append(w.all, w.fs...)
			var fp uint64
			if opts.Raw {
				fp = fpTable.Hash(featExactBytes(d))
			} else {
				w.norm = e.Normalize(w.norm[:0], d.Body)
				fp = fpTable.Hash(w.norm)
			}
			w.fps = append(w.fps, feature.Feature{ID: fp, Weight: 1})
			// HyperLogLog wants well-mixed hashes; Rabin fingerprints are
			// linear, so they go through the rng finalizer first.
			w.hllDocs.InsertHash(rng.Mix64(fp))
			for _, f := range w.fs {
				w.hllShingle.InsertHash(rng.Mix64(f.ID))
			}
			if opts.Exact {
				w.exDocs[fp] = struct{}{}
				for _, f := range w.fs {
					w.exShingles[f.ID] = struct{}{}
				}
			}
		}
		// The sketch of a batch's concatenated features is the union of
		// its documents' sketches (samplers ignore duplicate ids).
		w.vals = w.smp.Sketch(w.vals[:0], w.all)
		if err := w.uShingles.Add(w.vals); err != nil {
			return err
		}
		w.vals = w.smp.Sketch(w.vals[:0], w.fps)
		return w.uDocs.Add(w.vals)
	}
	emit := func(*docBatch) error { return nil }
	st, err := skPipeline(ctx, env, "count", opts.Files, opts.Corpus, opts.Workers, newWorker, work, emit)
	if err != nil {
		return err
	}

	res := countResult{Documents: st.Yielded, Rejected: st.Rejected, Features: fo.String(),
		Sampler: fmt.Sprintf("%v k=%d", sk.alg, sk.header.K)}
	res.HLL.Precision = opts.HLLPrecision
	uShingles, uDocs := workers[0].uShingles, workers[0].uDocs
	hllS, hllD := workers[0].hllShingle, workers[0].hllDocs
	for _, w := range workers[1:] {
		if err := uShingles.Merge(w.uShingles); err != nil {
			return err
		}
		if err := uDocs.Merge(w.uDocs); err != nil {
			return err
		}
		if err := hllS.Merge(w.hllShingle); err != nil {
			return err
		}
		if err := hllD.Merge(w.hllDocs); err != nil {
			return err
		}
	}
	if res.Sketch.DistinctShingles, err = uShingles.Cardinality(); err != nil {
		return err
	}
	if res.Sketch.DistinctDocuments, err = uDocs.Cardinality(); err != nil {
		return err
	}
	res.HLL.DistinctShingles, res.HLL.DistinctDocuments = hllS.Estimate(), hllD.Estimate()
	if opts.Exact {
		docs, shingles := workers[0].exDocs, workers[0].exShingles
		for _, w := range workers[1:] {
			for x := range w.exDocs {
				docs[x] = struct{}{}
			}
			for x := range w.exShingles {
				shingles[x] = struct{}{}
			}
		}
		res.Exact = &countExact{DistinctDocuments: len(docs), DistinctShingles: len(shingles)}
	}

	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(res)
	}
	fmt.Fprintf(env.Stdout, "%d documents read, %d rejected\n", res.Documents, res.Rejected)
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	header := fmt.Sprintf("\tsketch (%s)\thyperloglog (p=%d)", res.Sampler, res.HLL.Precision)
	if res.Exact != nil {
		header += "\texact"
	}
	fmt.Fprintln(tw, header)
	row := func(name string, s float64, h uint64, exact func(*countExact) int) {
		fmt.Fprintf(tw, "%s\t%.0f\t%d", name, s, h)
		if res.Exact != nil {
			e := exact(res.Exact)
			fmt.Fprintf(tw, "\t%d  (sketch %+.1f%%, hll %+.1f%%)", e, relErr(s, e), relErr(float64(h), e))
		}
		fmt.Fprintln(tw)
	}
	row("distinct documents", res.Sketch.DistinctDocuments, res.HLL.DistinctDocuments, func(e *countExact) int { return e.DistinctDocuments })
	row("distinct shingles", res.Sketch.DistinctShingles, res.HLL.DistinctShingles, func(e *countExact) int { return e.DistinctShingles })
	return tw.Flush()
}

// relErr returns the relative error of est against exact, in percent.
func relErr(est float64, exact int) float64 {
	if exact == 0 {
		return 0
	}
	return 100 * (est - float64(exact)) / float64(exact)
}
