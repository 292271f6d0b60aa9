package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
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
	Eps, Delta   float64
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
number of distinct shingles. Every estimate is printed with its standard
error: about n/sqrt(k) for the Flajolet-Martin estimate and the other
minimum-based ones, n/sqrt(k-2) for bottom-k, 1.04 n/sqrt(2^p) for
HyperLogLog. --eps and --delta choose k as the lecture notes on distinct
elements do: k >= 4/(eps² delta) minima give a (1±eps) estimate with
probability at least 1-delta (Chebyshev on the mean of k minima, whose
variance is at most 1/(k (n+1)²)).`,
		Example: `  neardup count testdata/licenses/docs.jsonl.gz --exact
  neardup count --sampler minhash --eps 0.1 --delta 0.1 testdata/licenses/docs.jsonl.gz   # k = 4000
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
	fl.Float64Var(&opts.Eps, "eps", 0, "with --delta: choose k so that the sketch estimate is within a factor 1±eps with probability at least 1-delta (k = ceil(4/(eps² delta)); overrides --k)")
	fl.Float64Var(&opts.Delta, "delta", 0, "with --eps: the failure probability of the (1±eps) guarantee")
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
	StderrDocuments   float64 `json:"stderr_documents"` // standard error of DistinctDocuments
	StderrShingles    float64 `json:"stderr_shingles"`  // standard error of DistinctShingles
}

type countHLL struct {
	Precision         int     `json:"precision"`
	DistinctDocuments uint64  `json:"distinct_documents"`
	DistinctShingles  uint64  `json:"distinct_shingles"`
	StderrDocuments   float64 `json:"stderr_documents"`
	StderrShingles    float64 `json:"stderr_shingles"`
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
	if opts.Eps != 0 || opts.Delta != 0 {
		k, err := kForEpsDelta(opts.Eps, opts.Delta)
		if err != nil {
			return err
		}
		opts.Sampler.K = k
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
	rh := 1.04 / math.Sqrt(float64(uint64(1)<<opts.HLLPrecision))
	res.Sketch.StderrDocuments = sketchRelStderr(sk.alg, int(sk.header.K), kept(uDocs)) * res.Sketch.DistinctDocuments
	res.Sketch.StderrShingles = sketchRelStderr(sk.alg, int(sk.header.K), kept(uShingles)) * res.Sketch.DistinctShingles
	res.HLL.StderrDocuments, res.HLL.StderrShingles = rh*float64(res.HLL.DistinctDocuments), rh*float64(res.HLL.DistinctShingles)
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
	row := func(name string, s, ss float64, h uint64, hs float64, exact func(*countExact) int) {
		fmt.Fprintf(tw, "%s\t%.0f ± %.0f\t%d ± %.0f", name, s, ss, h, hs)
		if res.Exact != nil {
			e := exact(res.Exact)
			fmt.Fprintf(tw, "\t%d  (sketch %+.1f%%, hll %+.1f%%)", e, relErr(s, e), relErr(float64(h), e))
		}
		fmt.Fprintln(tw)
	}
	row("distinct documents", res.Sketch.DistinctDocuments, res.Sketch.StderrDocuments, res.HLL.DistinctDocuments, res.HLL.StderrDocuments, func(e *countExact) int { return e.DistinctDocuments })
	row("distinct shingles", res.Sketch.DistinctShingles, res.Sketch.StderrShingles, res.HLL.DistinctShingles, res.HLL.StderrShingles, func(e *countExact) int { return e.DistinctShingles })
	return tw.Flush()
}

// relErr returns the relative error of est against exact, in percent.
func relErr(est float64, exact int) float64 {
	if exact == 0 {
		return 0
	}
	return 100 * (est - float64(exact)) / float64(exact)
}

// kForEpsDelta is the number of minima the lecture notes on distinct
// elements ask for a (1±eps) estimate with probability at least 1-delta:
// the mean Y of k minima has E[Y] = 1/(n+1) and Var[Y] <= 1/(k (n+1)²), so
// by Chebyshev P(|Y - E[Y]| > (eps/2) E[Y]) <= 4/(k eps²) <= delta when
// k >= 4/(eps² delta); and |Y - E[Y]| <= (eps/2) E[Y] puts 1/Y - 1 within
// about (1±eps)(n+1).
func kForEpsDelta(eps, delta float64) (int, error) {
	if !(eps > 0 && eps < 1) || !(delta > 0 && delta < 1) {
		return 0, usagef("--eps %g and --delta %g must both be given, each in (0, 1)", eps, delta)
	}
	k := math.Ceil(4/(eps*eps*delta) - 1e-9)
	if k > 1<<24 {
		return 0, usagef("--eps %g --delta %g ask for k = %.0f samples, more than %d", eps, delta, k, 1<<24)
	}
	return int(k), nil
}

// sketchRelStderr is the relative standard error of a union sketch's
// cardinality estimate with k samples: 1/sqrt(k-2) for bottom-k's
// (k-1)/U(k) (the k-th smallest of n uniforms is Beta(k, n-k+1)), about
// 1/sqrt(k) for the estimates from k minima (Flajolet-Martin and the
// censored minima of oph and superminhash), and about 1/sqrt(kept) for
// proportional's kept*m (kept is binomial: n trials of probability 1/m).
func sketchRelStderr(alg sketch.Algorithm, k, kept int) float64 {
	switch {
	case alg == sketch.BottomK && k > 2:
		return 1 / math.Sqrt(float64(k-2))
	case alg == sketch.Proportional:
		return 1 / math.Sqrt(float64(max(kept, 1)))
	}
	return 1 / math.Sqrt(float64(max(k, 1)))
}

// kept is the number of values of a counter's union sketch (0 when nothing
// was added).
func kept(d *sketch.DistinctCounter) int {
	if u := d.Union(); u != nil {
		return len(u.Values)
	}
	return 0
}
