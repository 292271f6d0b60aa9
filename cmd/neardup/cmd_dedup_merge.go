package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/store"
)

// parseShard parses --shard i/n (1 <= i <= n) into a 0-based shard.
func parseShard(s string) (shard, shards int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, usagef("--shard %q: want i/n with 1 <= i <= n, e.g. 2/3", s)
	}
	return i - 1, n, nil
}

// runDedupShard runs stage 1 (read + sketch) of shard i of n: the inputs
// whose number in reading order is i-1 modulo n, into its work directory,
// for neardup dedup merge. It writes nothing else.
func runDedupShard(ctx context.Context, env *Env, opts dedupOptions, do dedup.Options, copts corpus.Options) error {
	shard, shards, err := parseShard(opts.Shard)
	if err != nil {
		return err
	}
	if opts.Work == "" {
		return usagef("--shard needs --work: each shard writes its stage files to its own work directory")
	}
	if opts.KeyFile == "" {
		return usagef("--shard needs --key-file: the shards of a run must fingerprint documents under one secret key to find exact duplicates across shards (the file is made with a new key if missing)")
	}
	if hasStdin(opts.Inputs) {
		return usagef("--shard: standard input cannot be shared between shards; save it to a file")
	}
	unlock, err := store.LockDir(opts.Work)
	if err != nil {
		return err
	}
	defer unlock()
	defer withMemoryLimit(do.Memory)()
	defer trimExecutable(do.Memory)()
	logf := func(format string, args ...any) {
		if !opts.Quiet {
			fmt.Fprintf(env.Stderr, format, args...)
		}
	}
	copts.OnWarning = func(e *corpus.RecordError) { logf("neardup dedup: warning: %v\n", e) }
	if opts.KeyField != "" {
		copts.MetaFields = []string{opts.KeyField}
	}
	r, docs, err := dedupRecords(opts.Inputs, copts, true)
	if err != nil {
		return usagef("%v", err)
	}
	defer r.Close()
	cfg, err := dedupConfig(opts)
	if err != nil {
		return err
	}
	stages := &dedup.Stages{Dir: opts.Work, Resume: opts.Resume, Inputs: stageInputs(r), Config: cfg, Shard: shard, Shards: shards}
	done, err := stages.InputsDone()
	if err != nil {
		return err
	}
	var skipped int64
	for i, in := range r.Inputs() {
		if i < done || i%shards != shard {
			skipped += max(in.Size, 0)
		}
	}
	r.Skip(func(i int) bool { return i < done || i%shards != shard })
	do.Stages, do.WorkDir = stages, opts.Work
	var po progress.Options
	if !opts.Quiet {
		po = progress.Options{W: env.Stderr, Interactive: env.Interactive}
	}
	var rejects rejectLog
	do.Events = withKillHook(dedupEvents(po, r, skipped, logf, &rejects, new(atomic.Bool)))
	res, err := dedup.Run(ctx, docs, do)
	if err != nil {
		return configError(err)
	}
	s := res.Summary
	fmt.Fprintf(env.Stdout, "shard %d/%d: read %d (sketched %d, rejected %d) in %.2fs; stage files in %s for neardup dedup merge\n",
		shard+1, shards, s.Read, s.Kept, s.Rejected, s.Seconds, opts.Work)
	return nil
}

func newDedupMergeCmd(env *Env) *cobra.Command {
	var opts dedupOptions
	cmd := &cobra.Command{
		Use:   "merge WORK...",
		Short: "Join the stage files of dedup --shard runs and finish the run",
		Long: `merge joins the stage-1 outputs (read + sketch) of the shards of a run,
"neardup dedup --shard i/n --work WORKi INPUT...", one work directory per
shard, and runs the remaining stages (candidate pairs, verification,
clustering, outputs) as neardup dedup would: the output in --out equals
that of one "neardup dedup INPUT..." with the shards' flags, byte for byte.
The inputs and flags are the shards' (read from their manifests); run merge
in the directory the shards ran in, with the inputs unchanged. It refuses,
in one line, a missing or repeated shard, a shard that has not finished,
and shards with different inputs or flags.

A killed merge continues with --resume from its own stage files (in --work,
default OUT/work), like dedup.`,
		Example: `  neardup dedup --shard 1/3 --work w1 crawl/ &
  neardup dedup --shard 2/3 --work w2 crawl/ &
  neardup dedup --shard 3/3 --work w3 crawl/ & wait
  neardup dedup merge --out out w1 w2 w3`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDedupMerge(cmd.Context(), env, opts, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "out", "o", "neardup-out", "output directory")
	fl.StringVar(&opts.Memory, "memory", "", "memory budget, e.g. 2GiB (default 75% of physical memory)")
	fl.StringVar(&opts.Work, "work", "", "work directory of the merged run (default OUT/work)")
	fl.BoolVar(&opts.KeepWork, "keep-work", false, "keep the work files after the run")
	fl.BoolVar(&opts.Resume, "resume", false, "continue a killed merge from its stage files")
	fl.StringVar(&opts.Report, "report", "", "also write a self-contained HTML report to this file")
	fl.IntVar(&opts.Workers, "workers", 0, "worker goroutines (default: all cores)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	fl.BoolVar(&opts.JSON, "json", false, "print the summary (summary.json) to standard output instead of the text lines")
	fl.Float64Var(&opts.MaxRejected, "max-rejected", 0.10, "fail (exit 1, after writing the output) when more than this fraction of the records is rejected")
	return cmd
}

// runDedupMerge runs dedup with the shards' options over their joined
// stage files.
func runDedupMerge(ctx context.Context, env *Env, m dedupOptions, dirs []string) error {
	cfg, err := dedup.ShardConfig(dirs)
	if err != nil {
		return err
	}
	opts, err := dedupOptionsOf(cfg)
	if err != nil {
		return fmt.Errorf("dedup merge: the shards' options: %w", err)
	}
	opts.Out, opts.Memory, opts.Work, opts.KeepWork, opts.Report = m.Out, m.Memory, m.Work, m.KeepWork, m.Report
	opts.Workers, opts.Quiet, opts.JSON, opts.MaxRejected = m.Workers, m.Quiet, m.JSON, m.MaxRejected
	opts.Resume = true // from the merged stage 1
	opts.MergeShards, opts.MergeResume = dirs, m.Resume
	return runDedup(ctx, env, opts)
}
