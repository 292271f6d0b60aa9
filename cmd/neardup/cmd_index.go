package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/store"
)

// indexOptions are shared by index add, query and remove.
type indexOptions struct {
	Store string
	// Memory is --memory of index add (see memoryBudget).
	Memory string
	// MaxRejected is the fraction of rejected records above which index
	// add fails (after adding the rest).
	MaxRejected float64
	JSON        bool
	Sampler     string
	K           int
	Seed        uint64
	LSH         string
	Threshold   float64
	Features    bool
	Quiet       bool
	Feature     featFlags
	Corpus      featCorpusFlags
	Args        []string
	// Given holds the flags given on the command line (nil: all); the
	// others take the index's recorded values.
	Given map[string]bool
}

func (o *indexOptions) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.Store, "store", "", "the index: a Pebble directory (required)")
	fl.StringVar(&o.Sampler, "sampler", "oph", "sampler of a new index (an existing one keeps its own; a different value is an error): "+samplerHelp(indexSamplers))
	fl.IntVar(&o.K, "k", 128, fmt.Sprintf("samples per sketch of a new index, 1 to %d (an existing one keeps its own)", sample.MaxK))
	fl.Uint64Var(&o.Seed, "seed", 0, "seed of the sampler and LSH keys of a new index (an existing one keeps its own)")
	deprecatedAlias(fl, "sketch-seed", "seed")
	fl.StringVar(&o.LSH, "lsh", "auto", "supershingle scheme of a new index: auto, altavista, bing or R,B[,M] (an existing one keeps its own)")
	fl.Float64VarP(&o.Threshold, "threshold", "t", 0.8, "similarity threshold in (0, 1] (recorded by a new index; given, it overrides the recorded one)")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress output")
	o.Feature.bind(cmd, false)
	o.Corpus.bind(cmd)
	_ = cmd.MarkFlagRequired("store")
}

func newIndexCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Maintain a persistent near-duplicate index (add, query, remove, stats, check)",
		Long: `index keeps sketches and LSH postings in a Pebble store, so a new crawl can be
deduplicated against earlier ones. The sampler, k, seed, LSH scheme and
feature flags are recorded in the store on first use; later commands reopen
the index with them and need none of these flags (a flag that contradicts
the recorded value is an error naming both).`,
		Example: `  neardup index add --store idx/ crawl1.jsonl.gz
  neardup index query --store idx/ crawl2.jsonl.gz > matches.jsonl
  neardup index remove --store idx/ doc-17 doc-42
  neardup index check --store idx/ --repair`,
	}
	cmd.AddCommand(newIndexAddCmd(env), newIndexQueryCmd(env), newIndexRemoveCmd(env), newIndexStatsCmd(env), newIndexCheckCmd(env),
		newIndexBackupCmd(env), newIndexRestoreCmd(env))
	return cmd
}

func newIndexAddCmd(env *Env) *cobra.Command {
	var opts indexOptions
	var serverURL string
	cmd := &cobra.Command{
		Use:   "add FILE...",
		Short: "Add documents to the index (a document with an id stored by an earlier run replaces it)",
		Long: `add sketches the documents and adds them to the index. A document whose id
the index holds from an earlier run replaces it (counted as replaced). Within
one run ids must be unique: a record whose id an earlier record of the run
already used is rejected with reason duplicate-id, naming both sources
(file:line), and nothing is replaced. A file's id is its path relative to
the common root of the inputs. A record over --max-record-bytes is
rejected as too-large.`,
		Example: "  neardup index add --store idx/ testdata/licenses/docs.jsonl.gz",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.Given = givenFlags(cmd)
			if serverURL != "" {
				return runIndexAddServer(cmd.Context(), env, opts, serverURL)
			}
			return runIndexAdd(cmd.Context(), env, opts)
		},
	}
	opts.bind(cmd)
	cmd.Flags().BoolVar(&opts.Features, "features", false, "also store feature sets (about 8 bytes per shingle) so queries verify by exact Jaccard; by default the index keeps sketches, and feature ids only for short documents (4 bytes each, up to the sketch's size: about 260 words at k=128), and verifies longer ones by the sketch estimate")
	cmd.Flags().StringVar(&serverURL, "server", "", "add through a neardup server at this URL instead of --store (bearer token from NEARDUP_TOKEN)")
	cmd.Flags().Lookup("store").Annotations = nil // --store or --server
	cmd.Flags().Float64Var(&opts.MaxRejected, "max-rejected", 0.10, "fail (exit 1, after adding the rest) when more than this fraction of the records is rejected")
	cmd.Flags().StringVar(&opts.Memory, "memory", "", memoryFlagUsage)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"added", "new", "replaced", "read", "rejected", "rejected_by", "store"} as JSON`)
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
			opts.Given = givenFlags(cmd)
			return runIndexQuery(cmd.Context(), env, opts)
		},
	}
	opts.bind(cmd)
	jsonLinesFlag(cmd)
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
			opts.Given = givenFlags(cmd)
			return runIndexRemove(cmd.Context(), env, opts)
		},
	}
	opts.bind(cmd)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"removed": ..., "asked": ...} as JSON`)
	return cmd
}

// indexSession is an open index with the means to sketch documents for it.
type indexSession struct {
	st *store.Pebble
	x  *index.Index
	sk *sample.Sketcher
}

// openIndexSession opens the index of --store with the given flags: a
// new index records them, an existing one is reopened with its recorded
// configuration (a given flag that contradicts it is a usage error naming
// the flag and both values). With create (index add) a store that does not
// exist yet is made; otherwise (query, remove) it must exist and hold an
// index: a mistyped --store is an error, not an empty index. With sketcher
// the session can sketch documents.
func openIndexSession(ctx context.Context, env *Env, opts indexOptions, create, sketcher bool) (*indexSession, error) {
	if opts.Store == "" {
		return nil, usagef("--store is required")
	}
	if !create {
		if _, err := os.Stat(opts.Store); err != nil {
			return nil, usagef("--store %s: no index there (%v); 'neardup index add --store %s' creates one", opts.Store, errors.Unwrap(err), opts.Store)
		}
	}
	if err := checkThreshold("--threshold", opts.Threshold); err != nil {
		return nil, err
	}
	if err := checkSamples("--k", opts.K); err != nil {
		return nil, err
	}
	fo, err := opts.Feature.options()
	if err != nil {
		return nil, err
	}
	if err := checkFeatOptions(fo); err != nil {
		return nil, err
	}
	alg, err := parseSampler(opts.Sampler, indexSamplers)
	if err != nil {
		return nil, err
	}
	p, err := parseLSH(opts.LSH, opts.Seed)
	if err != nil {
		return nil, err
	}
	flags := indexFlags{Sampler: alg, K: opts.K, Seed: opts.Seed, LSH: p, Threshold: opts.Threshold, Features: fo}
	budget, err := memoryBudget(opts.Memory)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenPebble(opts.Store, pebbleBudget(env.pebbleOptions(nil), budget))
	if errors.Is(err, store.ErrNotStore) {
		return nil, usagef("--store %s holds no index: %v", opts.Store, err)
	}
	if err != nil {
		return nil, err
	}
	if !create {
		if _, stored, err := index.Stored(ctx, st); err != nil {
			st.Close()
			return nil, err
		} else if !stored {
			st.Close()
			return nil, usagef("--store %s holds no index; 'neardup index add --store %s' creates one", opts.Store, opts.Store)
		}
	}
	x, err := index.Open(ctx, st, flags.config(opts.Given))
	if err != nil {
		st.Close()
		return nil, configError(err)
	}
	s := &indexSession{st: st, x: x}
	if x.Upgraded() {
		fmt.Fprintf(env.Stderr, "neardup index: %s\n", upgradedNote)
	}
	if sketcher {
		if s.sk, err = x.NewSketcher(); err != nil {
			st.Close()
			return nil, usagef("%v", err)
		}
	}
	return s, nil
}

// doc sketches a corpus document; withFeatures keeps its feature set for
// exact verification.
func (s *indexSession) doc(d *corpus.Document, withFeatures bool, sk *sample.Sketched) *index.Doc {
	s.sk.Sketch(sk, d.Body, d.HTML)
	return s.x.NewDoc(d.ID, sk, withFeatures)
}

func (s *indexSession) close() error { return s.st.Close() }

// openAddInput opens the input of index add, noting rejected records in
// rejects, with a progress bar over its bytes.
func openAddInput(env *Env, opts indexOptions, rejects *rejectLog) (*corpus.Reader, *progress.Bar, error) {
	r, err := openFeatCorpusLog(env, opts.Args, opts.Corpus, "index add", rejects)
	if err != nil {
		return nil, nil, err
	}
	var po progress.Options
	if !opts.Quiet {
		po = progress.Options{W: env.Stderr, Interactive: env.Interactive}
	}
	return r, progress.New(po, "add", r.TotalBytes(), "bytes"), nil
}

func runIndexAdd(ctx context.Context, env *Env, opts indexOptions) error {
	if err := checkMaxRejected(opts.MaxRejected); err != nil {
		return err
	}
	budget, err := memoryBudget(opts.Memory)
	if err != nil {
		return err
	}
	defer withMemoryLimit(budget)()
	defer trimExecutable(budget)()
	s, err := openIndexSession(ctx, env, opts, true, true)
	if err != nil {
		return err
	}
	defer s.close()
	var rejects rejectLog
	r, bar, err := openAddInput(env, opts, &rejects)
	if err != nil {
		return err
	}
	defer r.Close()
	// One bulk for the whole input: a large one is sorted and ingested as
	// finished tables, a small one stays one write-ahead-log batch.
	bk, err := s.x.NewBulk()
	if err != nil {
		return err
	}
	defer bk.Close()
	var batch []*index.Doc
	var sk sample.Sketched
	var total index.AddResult
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := bk.Add(ctx, batch...)
		if err != nil {
			return err
		}
		total.Added += res.Added
		total.Replaced += res.Replaced
		total.Duplicates += res.Duplicates
		batch = batch[:0]
		return nil
	}
	// The first place of every id of this run: a later record with the
	// same id is rejected (duplicate-id), naming both, rather than
	// replacing the first.
	seen := map[string]string{}
	var dupIDs int64
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := r.Doc()
		place := docPlace(d)
		if first, dup := seen[d.ID]; dup {
			e := &corpus.RecordError{ID: d.ID, Path: d.Source, Line: d.Line, Offset: d.Offset, Reason: reasonDuplicateID,
				Err: fmt.Errorf("id %q already used by %s", d.ID, first)}
			rejects.observe(e)
			fmt.Fprintf(env.Stderr, "neardup index add: rejected: %v\n", e)
			dupIDs++
			continue
		}
		seen[d.ID] = place
		batch = append(batch, s.doc(d, opts.Features, &sk))
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
	if err := bk.Commit(ctx); err != nil {
		return err
	}
	bk.Close()
	bar.Finish()
	if err := s.x.Flush(ctx); err != nil {
		return err
	}
	if err := store.Compact(ctx, s.st); err != nil {
		return err
	}
	st := r.Stats()
	if dupIDs > 0 {
		st.Rejected += dupIDs
		by := maps.Clone(st.RejectedBy)
		if by == nil {
			by = map[string]int64{}
		}
		by[reasonDuplicateID] += dupIDs
		st.RejectedBy = by
	}
	if opts.JSON {
		err = json.NewEncoder(env.Stdout).Encode(indexAddJSON{Added: total.Added + total.Replaced, New: total.Added, Replaced: total.Replaced,
			Read: st.Read, Rejected: st.Rejected, RejectedBy: st.RejectedBy, Store: opts.Store})
	} else {
		_, err = fmt.Fprintf(env.Stdout, "added %d documents to %s (%d new, %d replaced from earlier runs; read %d, rejected %d)\n",
			total.Added+total.Replaced, opts.Store, total.Added, total.Replaced, st.Read, st.Rejected)
	}
	if err != nil {
		return err
	}
	return rejects.check(st.Read, st.Rejected, st.RejectedBy, opts.MaxRejected)
}

// indexAddJSON is the --json output of index add.
type indexAddJSON struct {
	Added      int              `json:"added"`
	New        int              `json:"new"`
	Replaced   int              `json:"replaced"`
	Read       int64            `json:"read"`
	Rejected   int64            `json:"rejected"`
	RejectedBy map[string]int64 `json:"rejected_by"`
	Store      string           `json:"store"`
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
	s, err := openIndexSession(ctx, env, opts, false, true)
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
	var sk sample.Sketched
	var ms []index.Match
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := s.doc(r.Doc(), true, &sk)
		ms, err = s.x.Query(ctx, ms[:0], d, "")
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

func runIndexRemove(ctx context.Context, env *Env, opts indexOptions) error {
	s, err := openIndexSession(ctx, env, opts, false, false)
	if err != nil {
		return err
	}
	defer s.close()
	n, err := s.x.Remove(ctx, opts.Args...)
	if err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(struct {
			Removed int    `json:"removed"`
			Asked   int    `json:"asked"`
			Store   string `json:"store"`
		}{n, len(opts.Args), opts.Store})
	}
	_, err = fmt.Fprintf(env.Stdout, "removed %d of %d ids from %s\n", n, len(opts.Args), opts.Store)
	return err
}

// reasonDuplicateID is the reason of a record whose id an earlier record of
// the same run used (as dedup.ReasonDuplicateID).
const reasonDuplicateID = dedup.ReasonDuplicateID

// docPlace formats where a document was read: "path:line", "path@offset"
// or the path.
func docPlace(d *corpus.Document) string {
	p := d.Source
	switch {
	case d.Line > 0:
		p += ":" + strconv.FormatInt(d.Line, 10)
	case d.Offset >= 0:
		p += "@" + strconv.FormatInt(d.Offset, 10)
	}
	return p
}
