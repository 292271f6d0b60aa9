package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/store"
)

type indexStatsOptions struct {
	Store string
	JSON  bool
}

func newIndexStatsCmd(env *Env) *cobra.Command {
	var opts indexStatsOptions
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print an index's documents, bytes on disk per document (by kind) and configuration",
		Long: `stats opens the index in --store read-only and prints how many documents it
holds, the bytes its directory takes on disk, per document in all and by
kind: the document records (sketches, feature sets), the postings (one per
document and LSH key), metadata (configuration, fingerprint filter), the
write-ahead logs and the rest (MANIFEST, OPTIONS); then the configuration
recorded with the index. The split of the tables by kind is Pebble's
estimate; the logs hold what is not yet in a table.

It also splits the document records (before the store's compression) into
sketches, the feature sets kept for exact verification (index add
--features, dedup --exact auto|always), and the rest (names, fingerprints).

--json prints {"store", "documents", "postings", "meta_values",
"disk_bytes", "file_bytes", "bytes_per_document", "kinds": [{"kind",
"bytes", "bytes_per_document"}], "records": {"bytes", "sketches",
"feature_sets", "other", "documents_with_feature_sets"}, "config":
{"sampler", "k", "seed", "threshold", "lsh", "features"}, "slack"}.`,
		Example: `  neardup index stats --store out/index
  neardup index stats --store idx/ --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runIndexStats(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Store, "store", "", "the index: a Pebble directory (required)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the statistics as JSON")
	_ = cmd.MarkFlagRequired("store")
	return cmd
}

// indexStatsKind is the space one kind of file or record takes.
type indexStatsKind struct {
	Kind   string  `json:"kind"`
	Bytes  int64   `json:"bytes"`
	PerDoc float64 `json:"bytes_per_document"`
}

// indexStatsJSON is the --json output of index stats.
type indexStatsJSON struct {
	Store      string           `json:"store"`
	Documents  int64            `json:"documents"`
	Postings   int64            `json:"postings"`
	MetaValues int64            `json:"meta_values"`
	DiskBytes  int64            `json:"disk_bytes"`
	FileBytes  int64            `json:"file_bytes"`
	PerDoc     float64          `json:"bytes_per_document"`
	Kinds      []indexStatsKind `json:"kinds"`
	// Records splits the bytes of the document records (before the
	// store's compression) into their parts.
	Records indexStatsRecords `json:"records"`
	Config  dedup.Config      `json:"config"`
	Slack   float64           `json:"slack"`
}

// indexStatsRecords are the bytes of the document records by part: the
// sketches, the feature sets kept for exact verification, and the rest
// (names, fingerprints, headers).
type indexStatsRecords struct {
	Bytes    int64 `json:"bytes"`
	Sketches int64 `json:"sketches"`
	Features int64 `json:"feature_sets"`
	Other    int64 `json:"other"`
	// WithFeatures counts the documents that have a feature set.
	WithFeatures int64 `json:"documents_with_feature_sets"`
}

func runIndexStats(ctx context.Context, env *Env, opts indexStatsOptions) error {
	if opts.Store == "" {
		return usagef("--store is required")
	}
	if _, err := os.Stat(opts.Store); err != nil {
		return usagef("--store %s: no index there (%v)", opts.Store, errors.Unwrap(err))
	}
	if ents, err := os.ReadDir(opts.Store); err == nil && len(ents) == 0 {
		return usagef("--store %s is empty: no index there", opts.Store)
	}
	st, err := store.OpenPebble(opts.Store, &store.PebbleOptions{ReadOnly: true})
	if errors.Is(err, store.ErrNotStore) {
		return usagef("--store %s holds no index: %v", opts.Store, err)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	cfg, ok, err := index.Stored(ctx, st)
	if err != nil {
		return err
	}
	if !ok {
		return usagef("--store %s holds no index; 'neardup index add --store %s' creates one", opts.Store, opts.Store)
	}
	ps, err := st.Stats(ctx)
	if err != nil {
		return err
	}
	recs, err := recordParts(ctx, st)
	if err != nil {
		return err
	}
	out := indexStatsJSON{Store: opts.Store, Documents: ps.Docs, Postings: ps.Postings, MetaValues: ps.MetaValues,
		DiskBytes: ps.DiskBytes, FileBytes: ps.FileBytes, PerDoc: perDoc(ps.DiskBytes, ps.Docs), Slack: cfg.Slack, Records: recs,
		Config: dedup.Config{Sampler: cfg.Sketch.Algorithm.String(), K: cfg.Sketch.K, Seed: cfg.Sketch.Seed, Threshold: cfg.Threshold,
			LSH: cfg.LSH, Features: cfg.Sketch.Features.String()}}
	// An LSH key width of 0 means 64 bits (lsh.Params.KeyBits), as the
	// text says.
	if out.Config.LSH.KeyBits == 0 {
		out.Config.LSH.KeyBits = 64
	}
	for _, k := range []struct {
		name  string
		bytes int64
	}{
		{"documents", int64(ps.DocTableBytes)},
		{"postings", int64(ps.PostingTableBytes)},
		{"meta", int64(ps.MetaTableBytes)},
		{"logs", ps.LogBytes},
		{"other", ps.OtherBytes},
	} {
		out.Kinds = append(out.Kinds, indexStatsKind{Kind: k.name, Bytes: k.bytes, PerDoc: perDoc(k.bytes, ps.Docs)})
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(out)
	}
	w := env.Stdout
	fmt.Fprintf(w, "%s: %d documents, %d postings, %d metadata values\n", opts.Store, out.Documents, out.Postings, out.MetaValues)
	fmt.Fprintf(w, "on disk %s (files %s), %.0f bytes per document\n", sizeString(out.DiskBytes), sizeString(out.FileBytes), out.PerDoc)
	for _, k := range out.Kinds {
		fmt.Fprintf(w, "  %-10s %10s  %10.0f bytes per document\n", k.Kind, sizeString(k.Bytes), k.PerDoc)
	}
	r := out.Records
	fmt.Fprintf(w, "records %s: sketches %.0f, feature sets %.0f (%d documents have one), other %.0f bytes per document\n",
		sizeString(r.Bytes), perDoc(r.Sketches, ps.Docs), perDoc(r.Features, ps.Docs), r.WithFeatures, perDoc(r.Other, ps.Docs))
	c := out.Config
	_, err = fmt.Fprintf(w, "config: %s k=%d seed=%d, J >= %g (slack %g), lsh %v\nfeatures: %s\n", c.Sampler, c.K, c.Seed, c.Threshold, out.Slack, c.LSH, c.Features)
	return err
}

// perDoc divides bytes among n documents (0 for none).
func perDoc(bytes, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(bytes) / float64(n)
}

// sizeString prints a byte count in B, kB, MB or GB (powers of 1000).
func sizeString(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}

// recordParts reads every document record and splits its bytes into the
// sketch, the feature set and the rest: O(documents), one decoding each.
func recordParts(ctx context.Context, st store.Store) (indexStatsRecords, error) {
	var r indexStatsRecords
	var buf []byte
	err := st.ScanDocs(ctx, func(_ uint64, rec []byte) error {
		d, err := index.DecodeDoc(rec)
		if err != nil {
			return err
		}
		r.Bytes += int64(len(rec))
		if d.Features != nil || d.Weighted != nil {
			r.WithFeatures++
		}
		d.Features, d.Weighted = nil, nil
		if buf, err = index.AppendDoc(buf[:0], d); err != nil {
			return err
		}
		r.Features += int64(len(rec) - len(buf))
		n := len(buf)
		if buf, err = d.Sketch.AppendBinary(buf[:0]); err != nil {
			return err
		}
		r.Sketches += int64(len(buf))
		r.Other += int64(n - len(buf))
		return nil
	})
	return r, err
}
