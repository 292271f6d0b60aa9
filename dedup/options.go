package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/index"
)

// ExactMode says when candidate pairs are verified by exact Jaccard.
type ExactMode uint8

// Exact verification modes.
const (
	// ExactAuto verifies exactly at any size under a memory budget
	// (Options.Memory: past their share the feature sets go to the work
	// directory and those of the candidates' documents are read back); a
	// run without a budget keeps feature sets in memory while the corpus's
	// features fit in Options.ExactBudget, and otherwise lets the sketch
	// estimate decide.
	ExactAuto ExactMode = iota
	// ExactAlways always keeps feature sets and verifies exactly.
	ExactAlways
	// ExactNever verifies by the sketch estimate only.
	ExactNever
)

// Options configure Run. The zero value is valid: it deduplicates at
// threshold 0.8 with OPH sketches of 128 samples over 5-word shingles
// (index.Config's defaults), in memory, on all cores.
type Options struct {
	// Index is the index configuration: the sketch (sampler, k, seed,
	// feature options), the LSH scheme, the threshold and the slack of
	// verification by estimate. Its zero fields take, when Store holds an
	// index, the values recorded there (a non-zero field that contradicts
	// them is an *index.ConfigError), and otherwise index.Config's
	// defaults. The weighted samplers sketch.CWS and sketch.ICWS estimate
	// the weighted Jaccard (Σmin/Σmax) of the weights the feature options
	// give, and exact verification is then weighted too.
	Index index.Config
	// Store holds the index. The default, nil, deduplicates in memory by
	// the index's batch join and keeps nothing. With a store, this run's
	// documents are added to it (the last of them committed before Run
	// returns), and documents already there (earlier runs) are matched
	// too: a document identical or near to one of them is its duplicate.
	Store index.Store
	// StoreFeatures keeps each document's feature set in its index record
	// (when exact verification held it), so that later runs and queries
	// verify against it by exact Jaccard. The default keeps sketches only
	// (but for short documents, whose ids take 4 bytes each, no more than
	// the sketch: index.Doc.TrimFeatures): about 1 KB per document at k =
	// 128 instead of 8 bytes per shingle (the shipped corpus's index is
	// 0.8 MB instead of 5.5 MB), and later matches against longer stored
	// documents are verified by the sketch estimate.
	StoreFeatures bool
	// Exact selects exact verification. The default is ExactAuto.
	Exact ExactMode
	// ExactBudget bounds the feature ids kept in memory. In a run without
	// a memory budget (Memory 0), ExactAuto past it lets the sketch
	// estimate decide. Under a budget verification stays exact: past it,
	// past 4M ids (32 MiB) whatever the budget, or past the budget's
	// share, the feature sets go to a feature file in WorkDir while the
	// rest of the run stays in memory, and those of the candidates'
	// documents are read back after the join. The default is 64M ids
	// (512 MiB).
	ExactBudget int64
	// Workers is the number of sketching, join and verification
	// goroutines. The default is runtime.GOMAXPROCS(0).
	Workers int
	// Cluster configures clustering.
	Cluster ClusterOptions
	// Memory is the memory budget of an out-of-core run, in bytes. When
	// what the documents hold in memory (sketches, feature sets kept for
	// exact verification, and per document its Doc, name and map
	// entries) passes a quarter of it, the feature sets move to a file in
	// WorkDir first (as they do past ExactBudget ids) and the run stays in
	// memory; if the rest passes it too, the run goes out of core by
	// itself: sketches and feature sets move to files in WorkDir and the
	// join and verification run over sorted runs on disk (package spill),
	// each sort buffer taking a quarter of what the documents leave of the
	// budget, exact verification reading back the feature sets of the
	// candidates' documents only; the result is the same as in memory. The default, 0, stays in memory. With a Store, the
	// query and add stages read the sketches back in batches. The budget
	// bounds the pipeline's buffers; the caller sets the Go memory limit
	// (runtime/debug.SetMemoryLimit) if it wants one.
	Memory int64
	// WorkDir is the directory of the spill files (created if missing),
	// and of the high halves of the sketch values that a run in memory
	// with a Store or ExportBands writes there (it holds only 32 bits of
	// each value in memory). The default is a new temporary directory (for
	// the high halves, the system's temporary directory).
	WorkDir string
	// KeepWork keeps the spill files after the run instead of removing
	// them.
	KeepWork bool
	// Stages, when not nil, makes an out-of-core run resumable: stage
	// files with manifests in the work directory, and resumption from
	// them (see Stages). Run then leaves them for the caller to remove
	// (RemoveWork) once its outputs are written.
	Stages *Stages
	// ExportBands, when not nil, receives the band keys (the LSH lookup
	// keys) of every document this run indexes — the first copy of each
	// body, in input order — as one zstd Parquet file of (doc, seq, band,
	// key) rows, for the SQL self-join of package lsh/bandfile, which
	// yields the run's candidate pairs. Run writes the whole file (footer
	// included) before it returns; it does not close the writer.
	ExportBands io.Writer
	// Events receives the pipeline's progress, stage timings and rejected
	// records. The zero value reports nothing.
	Events EventListener
	// Clustered, when not nil, is called once, from Run's goroutine, as
	// soon as the run's clusters are final, while the store stage may
	// still be adding the run's documents to the index in the background
	// (out of core, that is the longest stage): a caller writes its
	// outputs there (pairs, clusters, the kept corpus), beside the adds,
	// instead of after Run. The Result is final except Summary.Stages and
	// Summary.Seconds, which Run fills in before it returns the same
	// Result. ctx is done if the adds fail (or Run's context is): Run
	// then returns their error whatever Clustered returns. An error
	// Clustered returns stops the adds, and Run returns it.
	Clustered func(ctx context.Context, res *Result) error
}

// EnsureDefaults sets the zero fields of o to their defaults, except those
// of o.Index: index.Open resolves them, against the configuration recorded
// in o.Store when there is one.
func (o *Options) EnsureDefaults() {
	if o.ExactBudget == 0 {
		o.ExactBudget = 64 << 20
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Cluster.MaxSize == 0 {
		o.Cluster.MaxSize = 1000
	}
}

// Validate reports every problem of o at once, or nil. Zero fields are
// valid (they stand for their defaults).
func (o *Options) Validate() error {
	var errs []error
	if err := o.Index.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.Exact > ExactNever {
		errs = append(errs, fmt.Errorf("unknown exact mode %d", o.Exact))
	}
	if o.Memory < 0 {
		errs = append(errs, fmt.Errorf("memory budget %d < 0", o.Memory))
	}
	if o.ExactBudget < 0 {
		errs = append(errs, fmt.Errorf("exact budget %d < 0", o.ExactBudget))
	}
	if o.Cluster.Keep == cluster.KeepField && o.Cluster.KeyField == "" {
		errs = append(errs, errors.New("keep policy key needs a key field"))
	}
	if o.Cluster.MaxSize < 0 {
		errs = append(errs, fmt.Errorf("max cluster size %d < 0", o.Cluster.MaxSize))
	}
	if len(errs) > 0 {
		return fmt.Errorf("dedup: %w", errors.Join(errs...))
	}
	return nil
}

// ClusterOptions configure clustering (package cluster).
type ClusterOptions struct {
	// Keep is the keep policy. The default is cluster.KeepFirst: the
	// earliest document of a cluster in input order. Under
	// cluster.KeepNone every member of this run is dropped (a document of
	// an earlier run, in the store, stays); Cluster.Kept is then empty, or
	// the stored member, and the members' similarities are to the first
	// member.
	Keep cluster.Keep
	// KeyField is the metadata field cluster.KeepField orders by: the
	// key of corpus.Document.Meta the input documents carry it under (a
	// reader gets it with corpus.Options.MetaFields). Descending keeps
	// the largest value instead of the smallest.
	KeyField   string
	Descending bool
	// Star admits a document to a cluster only when it is verified similar
	// (at the threshold) to the cluster's kept document, not merely
	// connected to it through other members: the guard against chaining.
	// The default is off (connected components of verified pairs).
	Star bool
	// MaxSize flags clusters with more members than this as oversize. The
	// default is 1000.
	MaxSize int
}

// ParseKeepPolicy parses "first", "longest", "key" (the smallest value of
// ClusterOptions.KeyField; "key-desc" for the largest) or "none" (every
// member of a cluster is dropped).
func ParseKeepPolicy(s string) (keep cluster.Keep, descending bool, err error) {
	switch s {
	case "first", "":
		return cluster.KeepFirst, false, nil
	case "longest":
		return cluster.KeepLongest, false, nil
	case "key":
		return cluster.KeepField, false, nil
	case "key-desc":
		return cluster.KeepField, true, nil
	case "none":
		return cluster.KeepNone, false, nil
	}
	return 0, false, fmt.Errorf("dedup: unknown keep policy %q (first, longest, key, key-desc or none)", s)
}
