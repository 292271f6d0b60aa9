// Command neardup-beam deduplicates a corpus on Apache Beam: locally on
// Prism (the default runner), or on Flink, Spark or Google Cloud Dataflow,
// with the same results as `neardup dedup` (see package pipeline).
//
// Usage:
//
//	neardup-beam --input 'data/*.jsonl.gz' --output out [--threshold 0.8 --k 128 --seed 0]
//	    [--runner prism|flink|spark|dataflow --endpoint HOST:PORT --project P --region R ...]
//
// The runner flags are the Beam Go SDK's own (beamx links every runner and
// the local, gs:// and s3:// filesystems); see docs/beam.md in the
// repository for the exact flags of each runner.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/neardup/neardup/beam/pipeline"
)

// inputs is a repeatable --input flag.
type inputs []string

func (i *inputs) String() string { return strings.Join(*i, ",") }
func (i *inputs) Set(s string) error {
	*i = append(*i, s)
	return nil
}

// options are the command's flags.
type options struct {
	pipeline.Options
	quiet bool
}

// bind registers the command's flags on fs (the SDK registers its runner
// flags on flag.CommandLine).
func bind(fs *flag.FlagSet, o *options) {
	fs.Var((*inputs)(&o.Inputs), "input", "input file, directory or glob on any Beam filesystem (local, gs://, s3://); repeatable; each match is read by one worker")
	fs.StringVar(&o.Output, "output", "", "output directory (local, gs:// or s3://): kept/, removed/, rejected/, clusters/, hot_keys/, summary.json")
	fs.Float64Var(&o.Config.Threshold, "threshold", 0.8, "Jaccard similarity at or above which documents are near-duplicates")
	fs.IntVar(&o.Config.K, "k", 128, "samples per sketch")
	fs.Uint64Var(&o.Config.Seed, "seed", 0, "seed of the sampler and the LSH keys (neardup dedup's --sketch-seed)")
	fs.StringVar(&o.Config.Sampler, "sampler", "oph", "sampler: oph, minhash, superminhash, prefix, lazybits, lazybits-batched")
	fs.Float64Var(&o.Config.Slack, "slack", 1.645, "accept estimates down to threshold - slack standard errors (0: estimate >= threshold)")
	fs.StringVar(&o.Config.Exact, "exact", "always", "verify candidate pairs by exact Jaccard (always: the documents of candidate pairs are read again for their feature sets, as neardup dedup verifies) or by the sketch estimate within --slack (never: no feature set is shuffled)")
	fs.IntVar(&o.Config.MaxRun, "max-run", 2048, "pair each document of a band key's run with at most this many earlier ones (hot-key guard)")
	fs.StringVar(&o.Config.IDField, "id-field", "id", "JSONL field (dotted path) or Parquet column of the document id")
	fs.StringVar(&o.Config.TextField, "text-field", "text", "JSONL field (dotted path) or Parquet column of the text")
	fs.IntVar(&o.Rounds, "cc-rounds", pipeline.DefaultRounds, "large-star/small-star rounds of the connected components (the run fails if they do not converge)")
	fs.IntVar(&o.Shards, "shards", 1, "files per output of removed/, rejected/, clusters/ and hot_keys/")
	fs.BoolVar(&o.Candidates, "candidates", false, "also write every candidate pair, its estimate and whether it was accepted, to candidates/")
	fs.BoolVar(&o.ExportBands, "export-bands", false, "also write the band keys (doc, seq, band, key) as zstd Parquet to bands/, for the SQL self-join in docs/beam.md")
	fs.BoolVar(&o.ShuffleBytes, "shuffle-bytes", false, "count the elements and encoded bytes entering every GroupByKey, by stage (counters shuffle_bytes.STAGE; for the cost model)")
	fs.BoolVar(&o.quiet, "quiet", false, "print nothing but errors")
}

// slack maps the --slack flag to Config.Slack, where 0 means the default
// and a negative value none (as neardup dedup does).
func slack(z float64) float64 {
	if z == 0 {
		return -1
	}
	return z
}

func main() {
	var o options
	bind(flag.CommandLine, &o)
	flag.Parse()
	beam.Init()
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, oneLine(err))
		os.Exit(1)
	}
}

// oneLine reduces an error to one line: a failed pipeline's error is the
// runner's whole chain of causes, whose last line from this program
// ("neardup-beam: ...") is the one that says what went wrong.
func oneLine(err error) string {
	msg := err.Error()
	const prefix = "neardup-beam: "
	if i := strings.LastIndex(msg, prefix); i >= 0 {
		msg = msg[i+len(prefix):]
	}
	if strings.Contains(err.Error(), "caused by") {
		msg, _, _ = strings.Cut(msg, "\n") // the rest is the runner's trace
	}
	return prefix + strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
}

// run builds the pipeline, runs it on the runner the SDK's flags select,
// and prints the summary and the counters.
func run(ctx context.Context, o options, stdout io.Writer) error {
	if len(flag.Args()) > 0 {
		return fmt.Errorf("unexpected arguments %q (inputs are given with --input)", flag.Args())
	}
	o.Config.Slack = slack(o.Config.Slack)
	if err := o.Validate(); err != nil {
		return err
	}
	if o.quiet {
		stdout = io.Discard
	}
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Build(s, o.Options); err != nil {
		return err
	}
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return err
	}
	if res != nil {
		totals := map[string]int64{}
		for _, c := range res.Metrics().AllMetrics().Counters() {
			if c.Namespace() == "neardup" {
				totals[c.Name()] += c.Result()
			}
		}
		if lines := counterLines(totals); len(lines) > 0 {
			fmt.Fprintf(stdout, "counters:\n%s\n", strings.Join(lines, "\n"))
		}
	}
	// The summary, when the output is readable from here.
	b, err := readSummary(ctx, o.Output)
	if err != nil {
		return nil // a remote runner's output may not be readable from the launcher
	}
	var sum pipeline.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	fmt.Fprintf(stdout, "read %d: kept %d, duplicates %d (%d identical, %d near), rejected %d\n", sum.Read, sum.Kept, sum.Duplicates, sum.Exact, sum.Near, sum.Rejected)
	fmt.Fprintf(stdout, "%d verified pairs in %d clusters (largest %d); %d candidates checked, %d hot keys; %s k=%d J >= %g, lsh %s\n",
		sum.Pairs, sum.Clusters, sum.Largest, sum.Candidates, sum.HotKeys, sum.Config.Sampler, sum.Config.K, sum.Config.Threshold, sum.Config.LSH)
	return nil
}

func readSummary(ctx context.Context, dir string) ([]byte, error) {
	name := strings.TrimSuffix(dir, "/") + "/summary.json"
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return filesystem.Read(ctx, fs, name)
}

// counterLines formats the pipeline's counters, one line per name: a
// runner reports a counter once per step that increments it (every
// GroupByKey of a stage counts under the stage's name), so the values are
// summed by name first. With --shuffle-bytes it adds the bytes through
// every GroupByKey and their rate per document read, the cost model's
// figure.
func counterLines(totals map[string]int64) []string {
	var lines []string
	var shuffled int64
	for name, v := range totals {
		lines = append(lines, fmt.Sprintf("  %s = %d", name, v))
		if strings.HasPrefix(name, "shuffle_bytes.") {
			shuffled += v
		}
	}
	sort.Strings(lines)
	if shuffled > 0 {
		per := ""
		if n := totals["read"]; n > 0 {
			per = fmt.Sprintf(" (%.0f bytes per document read)", float64(shuffled)/float64(n))
		}
		lines = append(lines, fmt.Sprintf("  shuffle_bytes, all stages = %d%s", shuffled, per))
	}
	return lines
}
