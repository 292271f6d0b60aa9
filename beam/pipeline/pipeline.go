package pipeline

import (
	"errors"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Options configure Build. Inputs and Output are required; the other
// fields default as documented.
type Options struct {
	// Inputs are files, directories (local only) or glob patterns on any
	// Beam filesystem the program links (local, gs://, s3://). Each match
	// is read by one worker, so a corpus should come in many shards.
	Inputs []string
	// Output is the directory the results are written to (on any Beam
	// filesystem): kept/, removed/, rejected/, clusters/, hot_keys/ and
	// summary.json. Files of an earlier run with other shard counts are
	// not removed: use a fresh directory.
	Output string
	// Config is the sketch and matching configuration (dedup's defaults).
	Config Config
	// Rounds is the number of large-star/small-star rounds. The default
	// is DefaultRounds.
	Rounds int
	// Shards is the number of files of each of removed/, rejected/,
	// clusters/, pairs/, hot_keys/ (and candidates/, bands/). The default
	// is 1.
	Shards int
	// Candidates also writes every distinct candidate pair, with its
	// estimate and whether it was accepted, to candidates/*.jsonl.
	Candidates bool
	// ExportBands also writes the band keys of every unique document as
	// zstd Parquet rows (doc, seq, band, key) to bands/*.parquet, for the
	// SQL self-join of package lsh/bandfile.
	ExportBands bool
	// ShuffleBytes counts the elements and bytes entering every
	// GroupByKey and CoGroupByKey, by stage, as the counters
	// shuffle_elements.STAGE and shuffle_bytes.STAGE (the cost model's
	// measurement; it costs an encoding of every shuffled element).
	ShuffleBytes bool
}

// Validate reports every problem of o at once.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Inputs) == 0 {
		errs = append(errs, errors.New("no inputs"))
	}
	if o.Output == "" {
		errs = append(errs, errors.New("no output directory"))
	}
	if o.Rounds < 0 {
		errs = append(errs, fmt.Errorf("rounds %d < 0", o.Rounds))
	}
	if o.Shards < 0 {
		errs = append(errs, fmt.Errorf("shards %d < 0", o.Shards))
	}
	errs = append(errs, o.Config.problems()...)
	if len(errs) > 0 {
		return fmt.Errorf("neardup-beam: %w", errors.Join(errs...))
	}
	return nil
}

// EnsureDefaults fills in the defaults of o.
func (o *Options) EnsureDefaults() {
	if o.Rounds == 0 {
		o.Rounds = DefaultRounds
	}
	if o.Shards == 0 {
		o.Shards = 1
	}
	o.Config = o.Config.withDefaults()
}

// Build adds the deduplication of o.Inputs to the pipeline of s. Running
// the pipeline writes the results under o.Output; it fails if the books do
// not balance or the components do not converge in o.Rounds rounds. Build
// returns the summary's JSON text as a single-element PCollection<string>,
// for a caller or a test that wants it without reading the file.
func Build(s beam.Scope, o Options) (beam.PCollection, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return beam.PCollection{}, err
	}
	cfg, err := o.Config.withKey()
	if err != nil {
		return beam.PCollection{}, err
	}
	desc, err := cfg.Describe()
	if err != nil {
		return beam.PCollection{}, err
	}
	s = s.Scope("neardup")

	// Read and sketch, one input per bundle.
	files := beam.Reshuffle(s, beam.ParDo(s, &expandFn{Inputs: o.Inputs}, beam.Impulse(s)))
	byID, readRejects, stats := beam.ParDo3(s, &readFn{Cfg: cfg}, files)

	// Ids, then exact fingerprints.
	m := meter{On: o.ShuffleBytes}
	byFP, idRejects := beam.ParDo2(s, &uniqueIDFn{}, m.gbk(s, "ids", byID))
	unique, nodes, identical, idPairs := beam.ParDo4(s, &exactFn{}, m.gbk(s, "fingerprints", byFP))

	// Band keys, candidates, verification.
	keyedFiles := beam.ParDo(s, fileKeyFn, files)
	pairs, hot, candidates, candLines, rows := Candidates(s, o, unique, keyedFiles)

	// Components of the pairs that join clusters (identical copies included).
	edges := beam.Flatten(s, identical, beam.ParDo(s, &edgeFn{Cfg: cfg}, pairs))
	roots := components(s, edges, o.Rounds, m)
	clusters, removed, drops, sums, maxes := clustersOf(s, nodes, roots, m)

	// Outputs.
	allDrops := beam.Flatten(s, drops, beam.ParDo(s, dropOfRejectFn, idRejects))
	kept := beam.ParDo(s, &keptFn{Cfg: cfg, Output: o.Output}, m.cogbk(s, "kept", keyedFiles, allDrops))
	rejects := beam.Flatten(s, readRejects, idRejects)
	writeLines(s, m, o.Output, "clusters", o.Shards, clusters)
	writeLines(s, m, o.Output, "removed", o.Shards, removed)
	writeLines(s, m, o.Output, "rejected", o.Shards, beam.ParDo(s, rejectLineFn, rejects))
	writeLines(s, m, o.Output, "hot_keys", o.Shards, beam.ParDo(s, hotLineFn, hot))
	writeLines(s, m, o.Output, "pairs", o.Shards, beam.ParDo(s, pairLineFn, beam.Flatten(s, idPairs, pairs)))
	if o.Candidates {
		writeLines(s, m, o.Output, "candidates", o.Shards, candLines)
	}
	if o.ExportBands {
		writeBands(s, o.Output, o.Shards, rows)
	}

	// The books.
	parts := beam.Flatten(s,
		sums, kept,
		beam.ParDo(s, statPartsFn, stats),
		beam.ParDo(s, rejectPartsFn, rejects),
		count(s, "candidates", candidates),
		count(s, "pairs", pairs),
		count(s, "pairs", identical),
		count(s, "hot_keys", hot),
	)
	summed := beam.CombinePerKey(s, sumInt64, parts)
	maxed := beam.CombinePerKey(s, maxInt64, maxes)
	summary := beam.ParDo(s, &summaryFn{Output: o.Output, Rounds: o.Rounds, Config: desc}, beam.Impulse(s),
		beam.SideInput{Input: summed}, beam.SideInput{Input: maxed})
	return summary, nil
}

func sumInt64(a, b int64) int64 { return a + b }
func maxInt64(a, b int64) int64 { return max(a, b) }

func init() {
	register.Function2x1(sumInt64)
	register.Function2x1(maxInt64)
}
