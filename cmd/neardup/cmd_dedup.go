package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/store"
)

type dedupOptions struct {
	Inputs    []string
	Out       string
	Store     string
	Threshold float64
	Sampler   string
	K         int
	Seed      uint64
	LSH       string
	Exact     string
	Keep      string
	KeyField  string
	Star      bool
	// StoreFeatures keeps feature sets in the index records.
	StoreFeatures bool
	MaxSize       int
	Report        string
	Workers       int
	Quiet         bool
	Weighted      string
	Slack         float64
	// MaxRejected is the fraction of rejected records above which the
	// run fails (after writing its output).
	MaxRejected float64
	JSON        bool
	// Memory is --memory (a size; "" means 75% of physical memory), Work
	// --work (default OUT/work), KeepWork --keep-work.
	Memory   string
	Work     string
	KeepWork bool
	// Resume is --resume: continue from the stage files in the work
	// directory.
	Resume bool
	// Shard is --shard i/n: run stage 1 of shard i only (cmd_dedup_merge.go).
	Shard string
	// KeyFile is --key-file: the file of the identity key (made with a
	// new key when missing). Not part of the stage files' configuration:
	// they record a check of the key itself.
	KeyFile string `json:"-"`
	// MergeShards are the shards' work directories dedup merge joins
	// into the run's stage 1 (MergeResume: unless already joined).
	MergeShards []string `json:"-"`
	MergeResume bool     `json:"-"`
	// ExportBands is the Parquet file for the band keys ("" for none).
	ExportBands string
	// Given holds the flags given on the command line: the others are
	// left to the index (its recorded configuration, or the defaults).
	// Nil counts every flag as given.
	Given   map[string]bool
	Feature featFlags
	Corpus  featCorpusFlags
}

func newDedupCmd(env *Env) *cobra.Command {
	var opts dedupOptions
	cmd := &cobra.Command{
		Use:   "dedup INPUT...",
		Short: "Find and drop near-duplicate documents in a corpus",
		Long: `dedup reads the inputs (files, directories, JSONL, WARC, Parquet, HTML; gzip
or zstd compressed), drops exact duplicates, sketches every document with
all cores, finds candidate pairs through supershingle keys in an index,
verifies them, clusters them, and writes to the directory --out:

  clusters.jsonl  one line per cluster of two or more documents:
                  cluster (1, 2, … in input order), kept (the id kept;
                  "" with --keep none, unless it is an earlier run's),
                  size, members (ids, kept first), details (per member: id,
                  similarity to the kept (first) document, exact, identical,
                  stored), min_similarity, edges (the verified pairs that
                  joined the cluster: a, b, similarity), oversize.
                  A member's similarity is -1 when it was joined to the
                  cluster through other members and never compared with
                  the kept document (min_similarity is then -1 too).
  pairs.jsonl     every verified pair, exact duplicates included: a, b
                  (ids; a the earlier), similarity (exact Jaccard when exact
                  is true, else the sketch estimate), estimate and stderr
                  (the sketch's), exact, identical, keys (LSH keys shared),
                  seq_a and seq_b (positions in the input; seq_a absent and
                  stored true when a comes from an earlier run's index),
                  kind ("identical" or "near").
  removed.jsonl   one line per dropped duplicate: id, duplicate_of (the
                  id kept in its cluster, perhaps from an earlier run's
                  index; with --keep none the cluster's first member, or
                  for that one the second), cluster, similarity (to the kept document, -1
                  when never compared), exact, identical, seq (position in
                  the input).
  rejected.jsonl  one line per rejected record: id ("" when not read),
                  source (the input file), line (JSONL/JSON line, Parquet
                  row), offset (byte offset in the decompressed input, when
                  known), count (records the line stands for: a Parquet row
                  group or the rows after a corrupt page), reason
                  (bad-json, missing-text, too-large, duplicate-id, …) and
                  error (the cause, naming both sources for duplicate-id).
  kept/           the deduplicated corpus, in the inputs' format; what is
                  kept of standard input ("-") goes to kept/stdin.FORMAT.zst
                  (e.g. kept/stdin.jsonl.zst), zstd-compressed
  summary.json    read = kept + duplicates + rejected, rejected by reason,
                  the configuration, time, peak memory and bytes spilled
                  per stage (stages overlap: the pipeline streams, so their
                  times add up to more than the total), external and
                  spilled_bytes (an out-of-core run)

--memory is the budget: when the sketches and feature sets would take
more than a quarter of it, the run goes out of core by itself (sketches,
feature sets and sorted runs in --work, removed at the end unless
--keep-work) and writes the same output, verified exactly: after the join
it reads back the feature sets of the candidates' documents only.
An out-of-core run works in stages with files between them (read+sketch,
candidate pairs, verified pairs), each saved with a manifest; after a kill,
the same command with --resume continues from the last finished stage (in
read+sketch from the last finished input file) and writes the output of an
uninterrupted run. Changed inputs or flags refuse to resume, saying what
changed; standard input cannot be resumed. --shard i/n runs stage 1 alone
over a share of the input files, into --work; "neardup dedup merge" joins
the shards and finishes the run (see its help).

Standard input ("-") is read once: while it is sketched, its bytes are
copied to --work/stdin.spool.s2 (its first GiB as is, the rest
S2-compressed; removed at the end
unless --keep-work; the disk needs room for it), from which the kept
documents are written.

The index lives in a Pebble store (--store DIR, by default OUT/index, made
afresh); give --store an existing index to deduplicate against earlier runs,
or "memory" to keep it in RAM.

A file's id is its path relative to the common root of all inputs
(crawl1/page.html and crawl2/page.html stay two documents); a record whose
id was already used in the run is rejected as duplicate-id, naming both
sources. A record over --max-record-bytes is rejected as too-large, in
every format, and the run goes on. An --out inside an input directory is
not read as input. A second run on the same --out (or --store) fails at
once: the directory is in use by another neardup process (its pid is
named).

When more than --max-rejected of the records are rejected (bad JSON, a
missing text field, …) the run still writes its output, then fails (exit 1)
naming the commonest reason and an example record.`,
		Example: `  neardup dedup testdata/licenses/docs.jsonl.gz --out out
  neardup dedup crawl/ --threshold 0.9 --store index/ --out run2 --report report.html
  neardup dedup docs.jsonl --keep longest --star --exact always
  neardup dedup pages.warc.gz --weighted tfidf --threshold 0.7
  zstdcat crawl.jsonl.zst | neardup dedup - --memory 4GiB --out run`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			opts.Given = givenFlags(cmd)
			return runDedup(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "out", "o", "neardup-out", "output directory")
	fl.StringVar(&opts.Store, "store", "", `index store: a Pebble directory (kept between runs), or "memory"; default OUT/index, made afresh`)
	fl.Float64VarP(&opts.Threshold, "threshold", "t", 0.8, "Jaccard similarity at or above which documents are near-duplicates, in (0, 1]")
	fl.StringVar(&opts.Sampler, "sampler", "oph", "sampler: "+samplerHelp(dedupSamplers))
	fl.IntVar(&opts.K, "k", 128, fmt.Sprintf("samples per sketch, 1 to %d", sample.MaxK))
	fl.Uint64Var(&opts.Seed, "seed", 0, "seed of the sampler and the LSH keys (--feature-seed seeds the feature ids)")
	deprecatedAlias(fl, "sketch-seed", "seed")
	fl.StringVar(&opts.LSH, "lsh", "auto", `supershingle scheme: auto (chosen for the threshold), altavista, bing, or R,B[,M] (R samples per supershingle, B supershingles, at least M must match)`)
	fl.StringVar(&opts.Exact, "exact", "auto", "verify pairs by exact Jaccard: auto (exact at any size: out of core the feature sets of the candidates' documents are read back from --work; only with --memory 0, by sketch estimate once the features pass 64M ids), always or never")
	fl.BoolVar(&opts.StoreFeatures, "store-features", false, "keep feature sets in the index (about 8 bytes per shingle) so later runs verify against this run's documents by exact Jaccard; by default the index keeps sketches, and feature ids only for short documents (4 bytes each, up to the sketch's size)")
	fl.StringVar(&opts.Keep, "keep", "first", "which member of a cluster to keep: first, longest, key (smallest --key-field value), key-desc (largest) or none (drop every member)")
	fl.StringVar(&opts.KeyField, "key-field", "", "JSONL field (dotted path) for --keep key")
	fl.BoolVar(&opts.Star, "star", false, "admit a document to a cluster only if it is similar to the kept document itself (guards against chaining)")
	fl.IntVar(&opts.MaxSize, "max-cluster", 1000, "flag clusters larger than this (reported with the edges that joined them)")
	fl.StringVar(&opts.Report, "report", "", "also write a self-contained HTML report to this file")
	fl.IntVar(&opts.Workers, "workers", 0, "worker goroutines (default: all cores)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	fl.Float64Var(&opts.Slack, "slack", 1.645, "when a pair is verified by sketch estimate (no exact Jaccard), accept estimates down to threshold - slack standard errors (1.645: a pair at the threshold is kept with probability 0.95; 0: estimate >= threshold)")
	fl.StringVar(&opts.Weighted, "weighted", "", "weighted dedup: count or tfidf weights (sets --weight; the sampler becomes cws unless --sampler is given), similarity is weighted Jaccard")
	fl.Float64Var(&opts.MaxRejected, "max-rejected", 0.10, "fail (exit 1, after writing the output) when more than this fraction of the records is rejected")
	fl.StringVar(&opts.ExportBands, "export-bands", "", "also write the band keys (doc, seq, band, key) of the indexed documents to this zstd Parquet file, for the SQL self-join in docs/beam.md")
	fl.BoolVar(&opts.JSON, "json", false, "print the summary (summary.json) to standard output instead of the text lines")
	fl.StringVar(&opts.Memory, "memory", "", "memory budget of the whole run, e.g. 2GiB (default 75% of physical memory): the index store takes its share (Pebble: cache, memtables, bulk buffer; --store memory: half, and the run is refused with exit 2 past it: at the start when its estimate from the input files' size passes it, on standard input once it does), and past a quarter of the rest in sketches and feature sets the run goes out of core (sketches, feature sets and sorted runs in --work) with the same output; the Go memory limit is the budget less Pebble's cache and memtables")
	fl.StringVar(&opts.Work, "work", "", "directory of the out-of-core spill files (default OUT/work)")
	fl.BoolVar(&opts.KeepWork, "keep-work", false, "keep the spill files after the run")
	fl.StringVar(&opts.Shard, "shard", "", "run only stage 1 (read + sketch) of shard i of n (i/n, 1 <= i <= n): the input files numbered i-1 modulo n in reading order, into --work; then join the shards with neardup dedup merge")
	fl.StringVar(&opts.KeyFile, "key-file", "", "file of the secret key of the identity fingerprints that decide exact duplicates (64 hex digits; when missing, a key is drawn and written there, mode 0600): needed by --shard, every shard of a run sharing one file; by default a run draws its own key, or uses its --store index's")
	fl.BoolVar(&opts.Resume, "resume", false, "continue a killed out-of-core run from its stage files in --work (same inputs and flags): from the last finished stage, within read+sketch from the last finished input file; the output is that of an uninterrupted run")
	opts.Feature.bind(cmd, true)
	opts.Corpus.bind(cmd)
	cmd.AddCommand(newDedupMergeCmd(env))
	return cmd
}

// slackOption maps the --slack flag to dedup.Options.Slack, where 0 means
// the default and a negative value means none.
func slackOption(z float64) float64 {
	if z == 0 {
		return -1
	}
	return z
}

// parseLSH parses the --lsh flag; nil means choose automatically.
func parseLSH(s string, seed uint64) (*lsh.Params, error) {
	var p lsh.Params
	switch strings.ToLower(s) {
	case "", "auto":
		return nil, nil
	case "altavista":
		p = lsh.AltaVista()
	case "bing":
		p = lsh.Bing()
	default:
		parts := strings.Split(s, ",")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, usagef("--lsh %q: want auto, altavista, bing or R,B[,M]", s)
		}
		var v [3]int
		v[2] = 1
		for i, part := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n <= 0 {
				return nil, usagef("--lsh %q: %q is not a positive integer", s, part)
			}
			v[i] = n
		}
		p = lsh.Params{R: v[0], B: v[1], M: v[2]}
	}
	p.Seed = seed
	if err := p.Validate(); err != nil {
		return nil, usagef("--lsh %q: %v", s, err)
	}
	return &p, nil
}

func runDedup(ctx context.Context, env *Env, opts dedupOptions) error {
	do, err := dedupLibOptions(ctx, env, &opts)
	if err != nil {
		return err
	}
	copts, err := opts.Corpus.options()
	if err != nil {
		return err
	}
	if opts.Shard != "" {
		if err := checkInputs(opts.Inputs); err != nil {
			return err
		}
		return runDedupShard(ctx, env, opts, do, copts)
	}
	if opts.Resume && hasStdin(opts.Inputs) {
		return usagef("--resume: standard input cannot be resumed within stage 1 (read + sketch): it cannot be read again; save it to a file")
	}
	if err := checkDedupOut(opts); err != nil {
		return err
	}
	if err := checkInputs(opts.Inputs); err != nil {
		return err
	}
	if opts.Store == "memory" {
		sc := copts
		sc.ExcludePaths = append(slices.Clip(sc.ExcludePaths), opts.Out)
		if err := checkMemoryStore(ctx, opts.Inputs, sc, do); err != nil {
			return err
		}
	}
	// Lock the output directory first, then clean it: a second run on the
	// same --out fails here instead of removing the first one's live index.
	unlock, err := store.LockDir(opts.Out)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := openDedupStore(env, opts, do.Memory)
	if err != nil {
		return err
	}
	defer st.Close()
	do.Store = st
	if do.WorkDir == "" {
		do.WorkDir = filepath.Join(opts.Out, "work")
	}
	// The batch commands keep the executable's pages out of a small
	// budget (trimExecutable); the server does not, whose requests would
	// wait for them to be read back.
	defer trimExecutable(do.Memory)()
	budget := do.Memory
	limit := do.Memory
	if opts.Store != "memory" { // a Pebble store takes its share of the budget
		offHeap, heap := pebbleShare(do.Memory)
		limit -= offHeap
		do.Memory -= offHeap + heap
	} else if do.Memory > 0 { // and the store in memory its share (budgetedMemory)
		do.Memory -= memoryShare(do.Memory)
	}
	defer withMemoryLimit(limit)()
	if !do.KeepWork {
		defer os.Remove(do.WorkDir) // once empty; never a directory the run did not empty
	}

	logf := func(format string, args ...any) {
		if !opts.Quiet {
			fmt.Fprintf(env.Stderr, format, args...)
		}
	}
	copts.OnWarning = func(e *corpus.RecordError) { logf("neardup dedup: warning: %v\n", e) }
	copts.ExcludePaths = append(copts.ExcludePaths, opts.Out) // an --out inside an input is not read back
	if opts.KeyField != "" {
		copts.MetaFields = []string{opts.KeyField}
	}
	copts.Stdin = env.Stdin
	var spool *stdinSpool // standard input, kept for the kept corpus
	if hasStdin(opts.Inputs) {
		if spool, err = newStdinSpool(do.WorkDir, env.Stdin); err != nil {
			return err
		}
		defer func() {
			if do.KeepWork {
				spool.Finish()
			} else {
				spool.Remove()
			}
		}()
		copts.Stdin = spool
	}
	r, docs, err := dedupRecords(opts.Inputs, copts, !hasStdin(opts.Inputs))
	if err != nil {
		return usagef("%v", err)
	}
	defer r.Close()
	// Out of core, the run saves its stages in the work directory and can
	// resume from them.
	cfg, err := dedupConfig(opts)
	if err != nil {
		return err
	}
	stages := &dedup.Stages{Dir: do.WorkDir, Resume: opts.Resume, Inputs: stageInputs(r), Config: cfg}
	if len(opts.MergeShards) > 0 { // dedup merge: stage 1 is the shards'
		if done, err := stages.InputsDone(); err != nil || !opts.MergeResume || done < len(stages.Inputs) {
			if err := dedup.MergeShards(opts.MergeShards, stages); err != nil {
				return err
			}
		}
	}
	skip, err := stages.InputsDone()
	if err != nil {
		return err
	}
	var skipped int64 // bytes of the inputs finished before
	if skip > 0 {
		r.Skip(func(i int) bool { return i < skip })
		for _, in := range r.Inputs()[:skip] {
			skipped += max(in.Size, 0)
		}
	}
	do.Stages = stages
	openSkipped := r.Stats().Skipped
	var po progress.Options
	if !opts.Quiet {
		po = progress.Options{W: env.Stderr, Interactive: env.Interactive}
	}
	var rejects rejectLog
	var written atomic.Bool // the outputs are written (Clustered): the adds get a bar
	do.Events = withKillHook(dedupEvents(po, r, skipped, logf, &rejects, &written))
	rf, err := os.Create(filepath.Join(opts.Out, "rejected.jsonl"))
	if err != nil {
		return err
	}
	defer rf.Close()
	rw := dedup.NewRejectedWriter(rf)
	logReject := do.Events.Rejected
	do.Events.Rejected = func(e *corpus.RecordError) { rw.Write(e); logReject(e) }
	var bands *os.File
	if opts.ExportBands != "" {
		if bands, err = os.Create(opts.ExportBands); err != nil {
			return err
		}
		defer bands.Close()
		do.ExportBands = bands
	}
	// The outputs but the report and the summary (which need the store
	// stage's time) are written as soon as the clusters are final, while
	// the index adds go on in the background (out of core the longest
	// stage): the kept corpus is a second pass over the inputs, on the
	// core the adds leave idle (1M documents of 200 words at --memory
	// 410MiB: 55 s instead of 73.5). Under a budget below overlapBudget
	// they are written after the adds: the writer's memory beside the
	// adds' (its encoder, buffers and code) took 102-113 MiB at 96 MiB,
	// against 89-96 one after the other.
	writeResults := func(ctx context.Context, res *dedup.Result) error {
		if spool != nil {
			// A short spool fails the run, whatever the reader made of
			// the spool's error: the kept corpus would miss documents.
			if err := spool.Finish(); err != nil {
				return err
			}
		}
		if err := writeDedupResults(ctx, opts, copts, spool, po, res); err != nil {
			return err
		}
		written.Store(true)
		return nil
	}
	overlap := budget == 0 || budget >= overlapBudget
	if overlap {
		do.Clustered = writeResults
	}
	res, err := dedup.Run(ctx, docs, do)
	if err == nil && res.Summary.Upgraded {
		fmt.Fprintf(env.Stderr, "neardup dedup: %s\n", upgradedNote)
	}
	if spool != nil {
		if serr := spool.Finish(); serr != nil { // (writeResults has not run, or failed on it)
			return serr
		}
	}
	if err != nil {
		return configError(err)
	}
	if err := rw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", rf.Name(), err)
	}
	if err := rf.Close(); err != nil {
		return fmt.Errorf("%s: %w", rf.Name(), err)
	}
	if bands != nil {
		if err := bands.Close(); err != nil {
			return err
		}
	}
	// The run counted the inputs' warnings and skips (those of inputs
	// finished before a resumption too); skips met walking are the reader's.
	res.Summary.Skipped += openSkipped
	if !overlap {
		if err := writeResults(ctx, res); err != nil {
			return err
		}
	}
	if err := writeDedupFinal(ctx, opts, copts, spool, res); err != nil {
		return err
	}
	if !do.KeepWork {
		if err := dedup.RemoveWork(do.WorkDir); err != nil {
			return err
		}
	}
	s := res.Summary
	if opts.JSON {
		if err := dedup.WriteSummary(env.Stdout, &s); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.Stdout, "read %d: kept %d, duplicates %d (%d identical, %d near), rejected %d\n", s.Read, s.Kept, s.Duplicates, s.Exact, s.Near, s.Rejected)
		fmt.Fprintf(env.Stdout, "%d verified pairs in %d clusters (largest %d); %d candidates checked; %s J >= %g, lsh %v\n",
			s.Pairs, s.Clusters, s.Largest, s.Candidates, s.Config.Sampler+" k="+strconv.Itoa(s.Config.K), s.Config.Threshold, s.Config.LSH)
		fmt.Fprintf(env.Stdout, "wrote %s/{clusters,pairs,removed,rejected}.jsonl, summary.json, kept/ in %.2fs\n", opts.Out, s.Seconds)
		if s.NotSegmented > 0 {
			fmt.Fprintf(env.Stdout, "not segmented: %d documents of %d bytes or more gave at most %d features (first: %q); they match only identical copies (docs/languages.md)\n",
				s.NotSegmented, dedup.UnsegmentedBytes, dedup.UnsegmentedFeatures, s.NotSegmentedExample)
		}
	}
	return rejects.check(s.Read, s.Rejected, s.RejectedBy, opts.MaxRejected)
}

// dedupLibOptions turns the flags into dedup.Options (without the store
// and the events). Flags not given are left zero for the index to resolve.
func dedupLibOptions(ctx context.Context, env *Env, opts *dedupOptions) (dedup.Options, error) {
	set := opts.Given
	if opts.Weighted != "" {
		if opts.Weighted != "count" && opts.Weighted != "tfidf" {
			return dedup.Options{}, usagef("--weighted %q: want count or tfidf", opts.Weighted)
		}
		opts.Feature.Weight = opts.Weighted
		if !given(set, "sampler") {
			opts.Sampler = "cws"
		}
	}
	fo, err := opts.Feature.options()
	if err != nil {
		return dedup.Options{}, err
	}
	if err := checkFeatOptions(fo); err != nil {
		return dedup.Options{}, err
	}
	alg, err := parseSampler(opts.Sampler, dedupSamplers)
	if err != nil {
		return dedup.Options{}, err
	}
	if err := checkThreshold("--threshold", opts.Threshold); err != nil {
		return dedup.Options{}, err
	}
	if err := checkSamples("--k", opts.K); err != nil {
		return dedup.Options{}, err
	}
	if err := checkMaxRejected(opts.MaxRejected); err != nil {
		return dedup.Options{}, err
	}
	if fo.Weighting != feature.WeightSet && !alg.IsWeighted() && (given(set, "sampler") || given(set, "weighted")) {
		return dedup.Options{}, usagef("--weight %v needs a weighted sampler (--sampler cws, cws-oblivious, cws-unary or icws); %v ignores weights", fo.Weighting, alg)
	}
	if fo.Weighting == feature.WeightTFIDF {
		if fo.IDFTable, err = featLoadIDF(ctx, env, opts.Feature.IDF, opts.Inputs, opts.Corpus, fo, "dedup"); err != nil {
			return dedup.Options{}, err
		}
	}
	params, err := parseLSH(opts.LSH, opts.Seed)
	if err != nil {
		return dedup.Options{}, err
	}
	var exact dedup.ExactMode
	switch opts.Exact {
	case "auto":
		exact = dedup.ExactAuto
	case "always":
		exact = dedup.ExactAlways
	case "never":
		exact = dedup.ExactNever
	default:
		return dedup.Options{}, usagef("--exact %q: want auto, always or never", opts.Exact)
	}
	keep, desc, err := dedup.ParseKeepPolicy(opts.Keep)
	if err != nil {
		return dedup.Options{}, usagef("--keep: %v", err)
	}
	flags := indexFlags{Sampler: alg, K: opts.K, Seed: opts.Seed, LSH: params, Threshold: opts.Threshold, Slack: slackOption(opts.Slack), Features: fo}
	memory, err := memoryBudget(opts.Memory)
	if err != nil {
		return dedup.Options{}, err
	}
	icfg := flags.config(set)
	if opts.KeyFile != "" {
		if icfg.Identity, err = loadKeyFile(opts.KeyFile); err != nil {
			return dedup.Options{}, err
		}
	}
	return dedup.Options{
		Index:         icfg,
		Exact:         exact,
		StoreFeatures: opts.StoreFeatures,
		Memory:        memory,
		WorkDir:       opts.Work,
		KeepWork:      opts.KeepWork,
		Workers:       opts.Workers,
		Cluster:       dedup.ClusterOptions{Keep: keep, Descending: desc, KeyField: opts.KeyField, Star: opts.Star, MaxSize: opts.MaxSize},
	}, nil
}

// checkDedupOut refuses an output directory that is or holds an input.
func checkDedupOut(opts dedupOptions) error {
	if opts.Out == "" {
		return usagef("--out must name a directory")
	}
	for _, in := range opts.Inputs {
		if in == "-" {
			continue
		}
		if abs1, err1 := filepath.Abs(in); err1 == nil {
			if abs2, err2 := filepath.Abs(opts.Out); err2 == nil && (abs1 == abs2 || strings.HasPrefix(abs1, abs2+string(filepath.Separator))) {
				return usagef("--out %s contains the input %s: nothing is written over an input", opts.Out, in)
			}
		}
	}
	return nil
}

// openDedupStore opens the store of --store: memory, a Pebble directory,
// or by default OUT/index made afresh.
func openDedupStore(env *Env, opts dedupOptions, budget int64) (store.Store, error) {
	switch opts.Store {
	case "memory":
		if budget <= 0 {
			return store.NewMemory(), nil
		}
		return &budgetedMemory{Memory: store.NewMemory(), limit: memoryShare(budget), budget: budget}, nil
	case "":
		dir := filepath.Join(opts.Out, "index")
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		return store.OpenPebble(dir, pebbleBudget(env.pebbleOptions(nil), budget))
	}
	return store.OpenPebble(opts.Store, pebbleBudget(env.pebbleOptions(nil), budget))
}

// dedupEvents draws a progress bar per stage (the sketch stage by bytes
// read from r; the store stage's once written is set) and logs rejected
// records.
func dedupEvents(po progress.Options, r *corpus.Reader, skipped int64, logf func(string, ...any), rejects *rejectLog, written *atomic.Bool) dedup.EventListener {
	bars := map[string]*progress.Bar{}
	return dedup.EventListener{
		Progress: func(p dedup.ProgressInfo) {
			if p.Stage == dedup.StageStore && !written.Load() {
				return // in the background: its bar would garble the others'
			}
			b, ok := bars[p.Stage]
			if !ok {
				if p.Stage == dedup.StageSketch {
					total := r.TotalBytes() // of the inputs left to read
					if total > 0 {
						total -= skipped
					}
					b = progress.New(po, p.Stage, total, "bytes")
				} else {
					b = progress.New(po, p.Stage, p.Total, p.Unit)
				}
				bars[p.Stage] = b
			}
			if p.Stage == dedup.StageSketch {
				b.Set(r.BytesRead())
			} else {
				b.Set(p.Done)
			}
		},
		StageEnd: func(s dedup.StageInfo) {
			if b, ok := bars[s.Stage]; ok {
				b.Finish()
			}
		},
		Rejected: func(e *corpus.RecordError) {
			rejects.observe(e)
			logf("neardup dedup: rejected: %v\n", e)
		},
	}
}

// overlapBudget is the smallest memory budget under which dedup writes
// its outputs beside the index adds (an unlimited one does too).
const overlapBudget = 256 << 20

// writeOutput writes the output file name of the run's --out with fn.
func writeOutput(opts dedupOptions, name string, fn func(f *os.File) error) error {
	killPoint("write", name)
	f, err := os.Create(filepath.Join(opts.Out, name))
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}

// writeDedupResults writes pairs, clusters, removed and the kept corpus
// (reading the inputs again, standard input from spool, which is
// finished).
func writeDedupResults(ctx context.Context, opts dedupOptions, copts corpus.Options, spool *stdinSpool, po progress.Options, res *dedup.Result) error {
	if err := writeOutput(opts, "pairs.jsonl", func(f *os.File) error { return dedup.WritePairs(f, res.Pairs) }); err != nil {
		return err
	}
	if err := writeOutput(opts, "clusters.jsonl", func(f *os.File) error { return dedup.WriteClusters(f, res.Clusters) }); err != nil {
		return err
	}
	if err := writeOutput(opts, "removed.jsonl", func(f *os.File) error { return dedup.WriteRemoved(f, res) }); err != nil {
		return err
	}
	keptDir := filepath.Join(opts.Out, "kept")
	if err := os.RemoveAll(keptDir); err != nil {
		return err
	}
	mirror, err := corpus.NewMirrorWriter(keptDir)
	if err != nil {
		return err
	}
	var mw corpus.FilterWriter = mirror
	if spool != nil {
		mw = &stdinKeptWriter{MirrorWriter: mirror}
		in, err := spool.Open()
		if err != nil {
			mirror.Close()
			return err
		}
		defer in.Close()
		copts.Stdin = in
	}
	// The inputs are read a second time and copied through the mirror
	// writer, which is also told what is dropped and given the records
	// that are not documents: a WARC crawl keeps the request, metadata and
	// warcinfo records of its kept responses.
	copts.OnWarning = nil
	bar := progress.New(po, "write", res.Summary.Kept, "docs")
	keeper := dedup.NewKeeper(res)
	var written int64
	n, err := corpus.CopyKept(ctx, opts.Inputs, copts, mw, func(n int64, d *corpus.Document) bool {
		keep := keeper.Keep(n, d)
		if n%64 == 0 {
			killPoint("write", "kept")
		}
		if keep {
			if written++; written&63 == 0 {
				bar.Set(written)
			}
		}
		return keep
	})
	if err == nil {
		err = keeper.Err()
	}
	bar.Set(n)
	bar.Finish()
	if cerr := mw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n != res.Summary.Kept {
		return fmt.Errorf("wrote %d kept documents, expected %d (did an input change during the run?)", n, res.Summary.Kept)
	}
	return nil
}

// writeDedupFinal writes what needs the whole run's times, once Run has
// returned: the report (reading the inputs again) and the summary.
func writeDedupFinal(ctx context.Context, opts dedupOptions, copts corpus.Options, spool *stdinSpool, res *dedup.Result) error {
	copts.OnWarning = nil // said in the first pass
	if opts.Report != "" {
		if spool != nil {
			rc, err := spool.Open()
			if err != nil {
				return err
			}
			defer rc.Close()
			copts.Stdin = rc
		}
		src := &reportSource{Inputs: opts.Inputs, Corpus: copts, Features: res.Index.Sketch.Features}
		if err := writeDedupReportFrom(ctx, opts.Report, res, src); err != nil {
			return err
		}
	}
	// The summary says what stdout says: an LSH key width of 0 means 64
	// bits (lsh.Params.KeyBits).
	if res.Summary.Config.LSH.KeyBits == 0 {
		res.Summary.Config.LSH.KeyBits = 64
	}
	return writeOutput(opts, "summary.json", func(f *os.File) error { return dedup.WriteSummary(f, &res.Summary) })
}
