package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// skSamplerFlags choose the sampler and its parameters (sketch, compare,
// count).
type skSamplerFlags struct {
	Sampler string
	K       int
	Seed    uint64
	Bits    int
	Modulus uint64
	Block   int
}

func (s *skSamplerFlags) bind(fl *pflag.FlagSet, defSampler string, defK int, bits bool) {
	fl.StringVar(&s.Sampler, "sampler", defSampler, "sampler: minhash, prefix, lazybits, lazybits-batched, bottomk, proportional, oph, superminhash; weighted: cws, cws-oblivious, cws-unary, icws, hmt, hmt-dep")
	fl.IntVar(&s.K, "k", defK, "samples per sketch (bottomk: the bottom-k size; hmt: comparable bins)")
	fl.Uint64Var(&s.Seed, "seed", 0, "seed of the sample functions (sketches compare only with equal seeds)")
	if bits {
		fl.IntVar(&s.Bits, "bits", 64, "keep b bits per sample: 1, 2, 4, 8, 16, 32 or 64 (b-bit minwise hashing, book 2.4)")
	}
	fl.Uint64Var(&s.Modulus, "modulus", 64, "proportional: keep the hashes that are 0 mod m")
	fl.IntVar(&s.Block, "block", 128, "lazybits-batched: block size, 64 or 128")
}

// skBindFeatFlags registers the feature flags of 'neardup features'
// (featFlags: package feature's options) on cmd, without the -k shorthand of
// --shingle (here --k is the number of samples, and -k would be a trap), and
// with --weighted as an alias of --weight.
func skBindFeatFlags(cmd *cobra.Command, f *featFlags, withWeights bool) {
	scratch := &cobra.Command{}
	f.bind(scratch, withWeights)
	scratch.Flags().VisitAll(func(fl *pflag.Flag) {
		c := *fl
		c.Shorthand = ""
		cmd.Flags().AddFlag(&c)
		if c.Name == "weight" {
			alias := c
			alias.Name, alias.Usage = "weighted", "alias of --weight"
			cmd.Flags().AddFlag(&alias)
		}
	})
}

// skFeatureOptions resolves the feature flags for a sampler: a weighted
// sampler left with set weights gets counts (weighted Jaccard of sets is
// plain Jaccard), an unweighted one refuses weights (it would ignore them),
// and tf-idf loads its table from --idf or counts it in a first pass over
// idfPaths.
func skFeatureOptions(ctx context.Context, env *Env, ff featFlags, alg sketch.Algorithm, idfPaths []string, cf featCorpusFlags, cmdName string) (feature.Options, error) {
	if alg.IsWeighted() && (ff.Weight == "" || ff.Weight == "set") {
		ff.Weight = "count"
	}
	if !alg.IsWeighted() && ff.Weight != "" && ff.Weight != "set" {
		return feature.Options{}, usagef("--weight %s needs a weighted sampler (cws, cws-oblivious, cws-unary, icws, hmt, hmt-dep); %v ignores weights", ff.Weight, alg)
	}
	o, err := ff.options()
	if err != nil {
		return o, err
	}
	if err := checkFeatOptions(o); err != nil {
		return o, err
	}
	if o.Weighting == feature.WeightTFIDF {
		if o.IDFTable, err = featLoadIDF(ctx, env, ff.IDF, idfPaths, cf, o, cmdName); err != nil {
			return o, err
		}
	}
	return o, nil
}

// skParseSampler parses --sampler: any sampler.
func skParseSampler(name string) (sketch.Algorithm, error) {
	return parseSampler(name, allSamplers)
}

// sketcher makes sketches with one configuration. Its fields are read-only
// after newSketcher, so workers share it; each worker draws with its own
// sampler (newSampler).
type sketcher struct {
	alg    sketch.Algorithm
	bits   int
	header sketch.Header // of the full-value sketches
	base   sample.Sampler
	fopts  feature.Options
	cfg    sample.Config
}

// newSketcher builds the sampler of sf for features extracted with fo.
func newSketcher(sf skSamplerFlags, fo feature.Options) (*sketcher, error) {
	alg, err := skParseSampler(sf.Sampler)
	if err != nil {
		return nil, err
	}
	if sf.Bits == 0 {
		sf.Bits = 64
	}
	switch sf.Bits {
	case 1, 2, 4, 8, 16, 32, 64:
	default:
		return nil, usagef("--bits %d not in {1, 2, 4, 8, 16, 32, 64}", sf.Bits)
	}
	// sketch.Compress's rules: b-bit values need a slot-wise algorithm
	// (minhash, prefix, lazybits*, oph, superminhash, cws, icws), not a
	// set sketch (bottomk, proportional) nor HMT, whose blocks of bins are
	// aligned by scale and whose Values[0:2] hold the scale and weight.
	if sf.Bits < 64 && !alg.SlotWise() {
		return nil, usagef("--bits %d: b-bit compression needs a slot-wise sampler (minhash, prefix, lazybits, lazybits-batched, oph, superminhash, cws, cws-oblivious, cws-unary, icws), not %v", sf.Bits, alg)
	}
	if sf.K < 1 || sf.K > sample.MaxK {
		return nil, usagef("--k %d not in [1, %d]", sf.K, sample.MaxK)
	}
	s := &sketcher{alg: alg, bits: sf.Bits, fopts: fo}
	s.cfg = sample.Config{Algorithm: alg, K: sf.K, Seed: sf.Seed, Features: fo, Modulus: sf.Modulus, Block: sf.Block}
	if s.base, err = sample.New(s.cfg); err != nil {
		return nil, usagef("%v", err)
	}
	s.header = s.base.Header()
	return s, nil
}

// newSampler returns a sampler for one goroutine: a clone of the sample
// package's samplers, the shared (immutable, concurrency-safe) weighted
// ones.
func (s *sketcher) newSampler() sample.Sampler {
	if c, ok := s.base.(sample.Cloner); ok {
		return c.Clone()
	}
	return s.base
}

// make returns the sketch of fs drawn with smp into vals (reused),
// compressed to b bits when asked. Size is the exact size of the set
// (sample.Config.Size): the number of features for unweighted samplers (the
// extractor gives distinct ids), the total weight for weighted ones. The
// sketch's Values alias vals unless it was compressed.
func (s *sketcher) make(smp sample.Sampler, vals []uint64, fs []feature.Feature) (*sketch.Sketch, []uint64, error) {
	vals = smp.Sketch(vals[:0], fs)
	sk := &sketch.Sketch{Header: s.header, Values: vals, Size: s.cfg.Size(fs)}
	if s.bits < 64 {
		c, err := sketch.Compress(sk, s.bits) // keeps Size
		if err != nil {
			return nil, vals, err
		}
		sk = c
	}
	return sk, vals, nil
}

type sketchOptions struct {
	Files   []string
	Format  string // --output-format: jsonl or binary
	JSON    bool   // --json: --output-format jsonl
	Out     string // directory for sketches.jsonl or sketches.bin, or "" for stdout
	Output  string // deprecated (--output): a file
	Workers int
	Sampler skSamplerFlags
	Feature featFlags
	Corpus  featCorpusFlags
}

func newSketchCmd(env *Env) *cobra.Command {
	var opts sketchOptions
	cmd := &cobra.Command{
		Use:   "sketch [FILE|DIR|-]...",
		Short: "Write a consistent-sampling sketch of every document",
		Long: `sketch extracts the features of every document of a corpus (files,
directories, JSONL, WARC, Parquet, optionally gzip- or zstd-compressed;
standard input when no FILE is given) and writes one sketch per document, in
input order, using all cores.

--output-format jsonl (the default) writes one line per document:
  {"id":"...","sketch":"<base64 of the binary encoding>","algorithm":"oph","k":128}
--output-format binary writes, per document, uvarint(len(id)) id uvarint(len(enc)) enc,
where enc is the sketch's binary encoding (package sketch).

A sketch records its algorithm, version, seed, k, b and a hash of the feature
configuration; only sketches made with equal settings can be compared.
Feature flags are those of 'neardup features' (--shingle has no -k
shorthand here: --k is the number of samples). Weighted samplers (cws, icws, hmt,
hmt-dep) weigh features by count unless --weight tfidf is given.`,
		Example: `  neardup sketch testdata/licenses/docs.jsonl.gz > sketches.jsonl
  neardup sketch --sampler minhash --k 256 --bits 8 --output-format binary -o sketches/ pages.warc.gz
  neardup sketch --sampler icws --weighted tfidf --idf corpus.idf docs.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return runSketch(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Format, "output-format", "jsonl", "output format: jsonl or binary (--format is the input format, as in every command that reads a corpus)")
	fl.BoolVar(&opts.JSON, "json", false, "JSON Lines output: --output-format jsonl (the default)")
	fl.StringVarP(&opts.Out, "out", "o", "", "write DIR/sketches.jsonl (or sketches.bin with --output-format binary) instead of standard output")
	fl.StringVar(&opts.Output, "output", "", "write to this file instead of standard output")
	_ = fl.MarkDeprecated("output", "use -o/--out DIR (it writes DIR/sketches.jsonl or DIR/sketches.bin)")
	fl.IntVar(&opts.Workers, "workers", runtime.NumCPU(), "parallel workers")
	opts.Sampler.bind(fl, "oph", 128, true)
	skBindFeatFlags(cmd, &opts.Feature, true)
	opts.Corpus.bind(cmd)
	return cmd
}

func runSketch(ctx context.Context, env *Env, opts sketchOptions) error {
	if opts.Corpus.Format == "binary" {
		// --format was this command's output format before it became
		// the input format of every command; "binary" is no input
		// format, so it can only mean the old spelling.
		fmt.Fprintln(env.Stderr, "Flag --format binary has been deprecated, use --output-format binary")
		opts.Format, opts.Corpus.Format = "binary", "auto"
	}
	if opts.JSON && opts.Format != "jsonl" {
		return usagef("--json and --output-format %s exclude each other", opts.Format)
	}
	if opts.Format != "jsonl" && opts.Format != "binary" {
		return usagef("unknown --output-format %q (want jsonl or binary)", opts.Format)
	}
	if opts.Workers < 1 {
		return usagef("--workers %d must be at least 1", opts.Workers)
	}
	alg, err := skParseSampler(opts.Sampler.Sampler)
	if err != nil {
		return err
	}
	fo, err := skFeatureOptions(ctx, env, opts.Feature, alg, opts.Files, opts.Corpus, "sketch")
	if err != nil {
		return err
	}
	sk, err := newSketcher(opts.Sampler, fo)
	if err != nil {
		return err
	}
	out := env.Stdout
	var file *os.File
	path := opts.Output
	if opts.Out != "" {
		if opts.Output != "" {
			return usagef("--out and --output exclude each other")
		}
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return err
		}
		name := "sketches.jsonl"
		if opts.Format == "binary" {
			name = "sketches.bin"
		}
		path = filepath.Join(opts.Out, name)
	}
	if path != "" {
		if file, err = os.Create(path); err != nil {
			return err
		}
		defer file.Close()
		out = file
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	algName := sk.alg.String()
	type worker struct {
		x    *featExtractors
		smp  sample.Sampler
		fs   []feature.Feature
		vals []uint64
		enc  []byte
	}
	newWorker := func() (*worker, error) {
		x, err := newFeatExtractors(sk.fopts)
		if err != nil {
			return nil, err
		}
		return &worker{x: x, smp: sk.newSampler()}, nil
	}
	work := func(w *worker, b *docBatch) error {
		for i := range b.docs {
			d := &b.docs[i]
			w.fs = w.x.pick(&d.doc).Extract(w.fs[:0], d.doc.Body)
			s, vals, err := sk.make(w.smp, w.vals, w.fs)
			w.vals = vals
			if err != nil {
				return fmt.Errorf("%s: %w", d.doc.ID, err)
			}
			w.enc, err = s.AppendBinary(w.enc[:0])
			if err != nil {
				return fmt.Errorf("%s: %w", d.doc.ID, err)
			}
			if opts.Format == "binary" {
				b.out = binary.AppendUvarint(b.out, uint64(len(d.doc.ID)))
				b.out = append(b.out, d.doc.ID...)
				b.out = binary.AppendUvarint(b.out, uint64(len(w.enc)))
				b.out = append(b.out, w.enc...)
				continue
			}
			id, err := json.Marshal(d.doc.ID)
			if err != nil {
				return err
			}
			b.out = append(b.out, `{"id":`...)
			b.out = append(b.out, id...)
			b.out = append(b.out, `,"sketch":"`...)
			b.out = base64.StdEncoding.AppendEncode(b.out, w.enc)
			b.out = append(b.out, `","algorithm":"`...)
			b.out = append(b.out, algName...)
			b.out = append(b.out, `","k":`...)
			b.out = strconv.AppendUint(b.out, uint64(s.Header.K), 10)
			b.out = append(b.out, "}\n"...)
		}
		return nil
	}
	emit := func(b *docBatch) error {
		_, err := bw.Write(b.out)
		return err
	}
	st, err := skPipeline(ctx, env, "sketch", opts.Files, opts.Corpus, opts.Workers, newWorker, work, emit)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "neardup sketch: %v; %v k=%d b=%d; %s\n", st, sk.alg, sk.header.K, sk.bits, sk.fopts)
	return nil
}
