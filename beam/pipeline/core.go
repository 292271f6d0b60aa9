package pipeline

// This file holds every call into the core neardup packages (corpus,
// feature, sample, sketch, lsh, index, dedup, identity). The rest of the
// pipeline sees only the small types below, so that a change of the core's
// API (sample.New(Config), a Sketcher) is an edit of this file alone.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// Config is the configuration of a run: the same values `neardup dedup`
// takes, with the same defaults. It travels inside the pipeline's DoFns
// (JSON), so every field is exported and plain. The zero value is valid:
// OPH sketches of 128 samples, seed 0, threshold 0.8, the default slack and
// feature options (5-word shingles), JSONL fields "id" and "text".
type Config struct {
	// Sampler names the sampler ("oph", "minhash", "superminhash",
	// "prefix", "lazybits", "lazybits-batched"). The default is "oph".
	// The weighted samplers (cws, icws) are not supported yet.
	Sampler string
	// K is the number of samples. The default is 128.
	K int
	// Seed selects the random functions of the sampler and the LSH keys.
	// The default is 0.
	Seed uint64
	// Threshold is the similarity at or above which two documents are
	// near-duplicates. The default is 0.8.
	Threshold float64
	// Slack widens the acceptance of a pair's estimate as in
	// index.Config.Slack: 0 means index.DefaultSlack (1.645), a negative
	// value none.
	Slack float64
	// MaxRun bounds the candidates taken from a run of documents sharing
	// a band key: each is paired with at most MaxRun earlier ones (in
	// input order). The default is index.MaxRun (2048); a run longer
	// than MaxRun is a hot key, counted and reported.
	MaxRun int
	// IDField and TextField name the JSONL fields (and Parquet columns)
	// of the id and the text. Defaults: "id" and "text".
	IDField, TextField string
	// IdentityKey is the secret key of the identity fingerprints that
	// decide exact duplicates (package identity), as 64 hex digits. The
	// default, "", has Build draw a key for the run (crypto/rand); it
	// travels to the workers inside the pipeline's DoFns and is never
	// written to the outputs.
	IdentityKey string
	// Exact selects the verification of candidate pairs: ExactAlways (the
	// default) verifies by the exact Jaccard of the two feature sets, as
	// `neardup dedup` does whenever the features fit its budget, and
	// gives dedup's clusters; ExactNever by the sketch estimate within
	// Slack standard errors, which ships no feature set.
	Exact string
}

// The values of Config.Exact (`neardup dedup --exact`'s names).
const (
	ExactAlways = "always"
	ExactNever  = "never"
)

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.Sampler == "" {
		c.Sampler = sketch.OPH.String()
	}
	if c.K == 0 {
		c.K = 128
	}
	if c.Threshold == 0 {
		c.Threshold = 0.8
	}
	if c.Slack == 0 {
		c.Slack = index.DefaultSlack
	}
	if c.MaxRun == 0 {
		c.MaxRun = index.MaxRun
	}
	if c.Exact == "" {
		c.Exact = ExactAlways
	}
	return c
}

// exact reports whether candidate pairs are verified by exact Jaccard.
func (c Config) exact() bool { return c.withDefaults().Exact != ExactNever }

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	if errs := c.problems(); len(errs) > 0 {
		return fmt.Errorf("neardup-beam: %w", errors.Join(errs...))
	}
	return nil
}

// problems lists the problems of c.
func (c Config) problems() []error {
	c = c.withDefaults()
	var errs []error
	alg, err := sketch.ParseAlgorithm(c.Sampler)
	switch {
	case err != nil:
		errs = append(errs, err)
	case alg.IsWeighted():
		errs = append(errs, fmt.Errorf("sampler %v: weighted samplers are not supported by the Beam pipeline", alg))
	case !alg.SlotWise():
		errs = append(errs, fmt.Errorf("sampler %v does not give slot-wise samples, which supershingles need", alg))
	}
	if c.K < 1 || c.K > sample.MaxK {
		errs = append(errs, fmt.Errorf("k = %d not in [1, %d]", c.K, sample.MaxK))
	}
	if !(c.Threshold > 0 && c.Threshold <= 1) {
		errs = append(errs, fmt.Errorf("threshold %v outside (0, 1]", c.Threshold))
	}
	if c.MaxRun < 1 {
		errs = append(errs, fmt.Errorf("max run %d < 1", c.MaxRun))
	}
	if c.IdentityKey != "" {
		if k, err := identity.ParseKey(c.IdentityKey); err != nil || k.IsZero() {
			errs = append(errs, errors.New("identity key: want 64 hex digits, not all zero"))
		}
	}
	if c.Exact != ExactAlways && c.Exact != ExactNever {
		errs = append(errs, fmt.Errorf("exact %q is neither %q nor %q", c.Exact, ExactAlways, ExactNever))
	}
	return errs
}

// features returns the feature options: the core's defaults, as
// `neardup dedup` uses them without feature flags.
func (c Config) features() feature.Options { return feature.Options{} }

// scheme returns the LSH parameters dedup chooses for the configuration.
func (c Config) scheme() (lsh.Params, error) {
	return index.ChooseLSH(c.Threshold, c.K, c.Seed)
}

// Describe returns the configuration as the summary records it: the
// sampler, k, seed, threshold, LSH scheme and feature options.
func (c Config) Describe() (ConfigSummary, error) {
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return ConfigSummary{}, err
	}
	p, err := c.scheme()
	if err != nil {
		return ConfigSummary{}, err
	}
	return ConfigSummary{Sampler: c.Sampler, K: c.K, Seed: c.Seed, Threshold: c.Threshold, Slack: c.Slack,
		LSH: p.String(), Keys: p.NumKeys(), Features: c.features().String(), MaxRun: c.MaxRun, Exact: c.Exact}, nil
}

// ConfigSummary is the configuration as written into summary.json.
type ConfigSummary struct {
	Sampler   string  `json:"sampler"`
	K         int     `json:"k"`
	Seed      uint64  `json:"seed"`
	Threshold float64 `json:"threshold"`
	Slack     float64 `json:"slack"`
	LSH       string  `json:"lsh"`
	Keys      int     `json:"lsh_keys"`
	Features  string  `json:"features"`
	MaxRun    int     `json:"max_run"`
	Exact     string  `json:"exact"`
}

// sketcher turns bodies into exact fingerprints and sketches, sketches into
// band keys, and pairs of sketches into similarity estimates, exactly as
// package dedup does. One sketcher must not be used by two goroutines at
// once (the extractor and the sampler keep scratch space).
type sketcher struct {
	cfg    Config
	ex     *feature.Extractor
	exHTML *feature.Extractor // for bodies the reader knows to be HTML
	smp    sample.Sampler
	hdr    sketch.Header
	id     *identity.Hasher
	scheme *lsh.Scheme
	fs     []feature.Feature
	ix     *index.Index
	da, db index.Doc // verify's
}

// newSketcher builds the sketcher of c (the same extractor, sampler and LSH
// scheme as dedup.Run with the same options).
func newSketcher(c Config) (*sketcher, error) {
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	fo := c.features()
	ex, err := feature.New(fo)
	if err != nil {
		return nil, err
	}
	exHTML := ex
	if fo.Format == feature.FormatAuto {
		ho := fo
		ho.Format = feature.FormatHTML
		if exHTML, err = feature.New(ho); err != nil {
			return nil, err
		}
	}
	alg, _ := sketch.ParseAlgorithm(c.Sampler) // checked by Validate
	smp, err := sample.New(sample.Config{Algorithm: alg, K: c.K, Seed: c.Seed, Features: fo})
	if err != nil {
		return nil, err
	}
	p, err := c.scheme()
	if err != nil {
		return nil, err
	}
	scheme, err := lsh.New(p)
	if err != nil {
		return nil, err
	}
	key, _ := identity.ParseKey(c.IdentityKey) // checked by Validate; "" only in tests: the public hash
	// The index verifies pairs (Verify) and makes feature sets (NewDoc);
	// it holds nothing (an empty in-memory store).
	ix, err := index.Open(context.Background(), nil, index.Config{
		Sketch:    sample.Config{Algorithm: alg, K: c.K, Seed: c.Seed, Features: fo},
		Threshold: c.Threshold, Slack: c.Slack})
	if err != nil {
		return nil, err
	}
	if ix.Header() != smp.Header() {
		return nil, fmt.Errorf("neardup-beam: the index's sketch header %v is not the sampler's %v", ix.Header(), smp.Header())
	}
	return &sketcher{cfg: c, ex: ex, exHTML: exHTML, smp: smp, hdr: smp.Header(), id: identity.New(key), scheme: scheme, ix: ix}, nil
}

// withKey returns c with an identity key drawn if it has none.
func (c Config) withKey() (Config, error) {
	if c.IdentityKey != "" {
		return c, nil
	}
	k, err := identity.NewKey()
	if err != nil {
		return c, fmt.Errorf("neardup-beam: %w", err)
	}
	c.IdentityKey = k.String()
	return c, nil
}

// fpKey is the grouping key of an identity fingerprint: all 128 bits and
// the length, so that documents grouped together are identical by the
// whole fingerprint.
func fpKey(f identity.Fingerprint) string {
	return f.String() + "/" + strconv.FormatUint(f.Len, 10)
}

// sketch returns the identity fingerprint of body (as fpKey) and its
// sketch, appended to dst[:0]. A body without features has an empty
// sketch.
func (s *sketcher) sketch(dst []uint64, body []byte, html bool) (fp string, values []uint64) {
	if html {
		s.fs = s.exHTML.Extract(s.fs[:0], body)
	} else {
		s.fs = s.ex.Extract(s.fs[:0], body)
	}
	return fpKey(s.id.Sum(body)), s.smp.Sketch(dst[:0], s.fs)
}

// numKeys returns the number of band keys per document, C(b, m).
func (s *sketcher) numKeys() int { return s.scheme.NumKeys() }

// bandKey returns band key number c of a sketch: the 64-bit lookup key of
// the c-th combination of m supershingles (lsh.Scheme.Key). Keys of
// different combinations are hashed with different seeds, so one
// GroupByKey over all of them mixes combinations only at the 2^-64 rate of
// any key collision. (dedup's in-memory sort-join compares the top 32 bits
// within one combination at a time, to sort 8-byte entries; that adds about
// n²/2^33 chance candidates per combination, all rejected by verification.
// A pipeline for billions of documents cannot afford them, so it groups by
// the whole key; on the shipped corpus both give the same candidates.)
func (s *sketcher) bandKey(c int, values []uint64) uint64 {
	return s.scheme.Key(c, values)
}

// features returns the sorted feature ids of body, as dedup keeps them for
// exact verification (index.Index.NewDoc), and its sketch, appended to
// dst[:0].
func (s *sketcher) features(dst []uint64, body []byte, html bool) (values, ids []uint64) {
	_, values = s.sketch(dst, body, html)
	d := s.ix.NewDoc("", &sample.Sketched{Values: values, Features: s.fs}, true)
	return values, d.Features
}

// verify compares the documents of a candidate pair with the index's one
// verification, index.Index.Verify, as dedup does: by the exact Jaccard of
// their feature sets when both are given (fa, fb not nil), else by the
// sketch estimate within the slack (index.Accept). It returns the
// similarity (exact when known), the estimate, whether the exact Jaccard
// was computed, and whether the pair is accepted.
func (s *sketcher) verify(a, b []uint64, fa, fb []uint64) (sim, est float64, exact, ok bool, err error) {
	s.da.Sketch = sketch.Sketch{Header: s.hdr, Values: a}
	s.db.Sketch = sketch.Sketch{Header: s.hdr, Values: b}
	s.da.Features, s.db.Features = fa, fb
	c, ok, err := s.ix.Verify(&s.da, &s.db)
	if err != nil {
		return 0, 0, false, false, err
	}
	return c.Similarity(), c.Estimate.J, c.Exact >= 0, ok, nil
}

// joins reports whether a verified pair joins a cluster: package cluster,
// as dedup configures it, drops edges below the threshold (so a pair
// accepted within the slack is reported but does not merge clusters).
func (c Config) joins(sim float64) bool {
	c = c.withDefaults()
	return !math.IsNaN(sim) && sim >= math.Min(c.Threshold, 1)
}

// Rejection reasons added by the pipeline, as dedup names them.
const reasonDuplicateID = dedup.ReasonDuplicateID

// record is one document read from an input.
type record struct {
	doc *corpus.Document
}

func (r record) id() string     { return r.doc.ID }
func (r record) body() []byte   { return r.doc.Body }
func (r record) html() bool     { return r.doc.HTML }
func (r record) source() string { return r.doc.Source }
func (r record) line() int64    { return r.doc.Line }
func (r record) offset() int64  { return r.doc.Offset }

// readStats counts the records of one input as the corpus reader does:
// Read = Yielded + Rejected.
type readStats struct {
	Read, Yielded, Rejected, Warnings, Skipped int64
}

// isLocal reports whether path is on the local filesystem (no scheme, or
// file://), where the core reader opens it directly, directories included.
func isLocal(path string) bool {
	return !strings.Contains(path, "://") || strings.HasPrefix(path, "file://")
}

// readInput reads one input with the core's corpus reader and calls each for
// every document, in order, and reject for every rejected record. A local
// path is opened by the reader itself (so ids and formats are exactly
// dedup's); any other path is read through open: streamed as the reader's
// standard input (JSONL, WARC, single documents), or, for Parquet (which
// needs random access), copied to a temporary file first. Ids the reader
// derives from the source name ("<source>:<line>", or the name of a whole
// file) are rewritten to name the remote path.
func readInput(ctx context.Context, c Config, path string, open func() (io.ReadCloser, error), each func(r record) error, reject func(rej rejectRec)) (readStats, error) {
	c = c.withDefaults()
	opts := corpus.Options{IDField: c.IDField, TextField: c.TextField}
	src := strings.TrimPrefix(path, "file://")
	var cleanup func()
	if !isLocal(path) {
		rc, err := open()
		if err != nil {
			// One rejected record, as the reader counts an unopenable input.
			reject(rejectRec{Path: path, Reason: corpus.ReasonOpen, Error: err.Error(), Offset: -1})
			return readStats{Read: 1, Rejected: 1}, nil
		}
		defer rc.Close()
		if strings.HasSuffix(strings.ToLower(path), ".parquet") {
			tmp, err := os.CreateTemp("", "neardup-beam-*.parquet")
			if err != nil {
				return readStats{}, err
			}
			cleanup = func() { os.Remove(tmp.Name()) }
			defer cleanup()
			if _, err := io.Copy(tmp, rc); err != nil {
				tmp.Close()
				return readStats{}, fmt.Errorf("copying %s: %w", path, err)
			}
			if err := tmp.Close(); err != nil {
				return readStats{}, err
			}
			src = tmp.Name()
		} else {
			opts.Stdin = rc
			src = "-"
		}
	}
	opts.OnReject = func(e *corpus.RecordError) {
		p := e.Path
		if p == src {
			p = path
		}
		msg := ""
		if e.Err != nil {
			msg = e.Err.Error()
		}
		reject(rejectRec{Path: p, Line: e.Line, Offset: e.Offset, Reason: e.Reason, Error: msg})
	}
	r, err := corpus.Open([]string{src}, opts)
	if err != nil {
		return readStats{}, err
	}
	defer r.Close()
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return readStats{}, err
		}
		d := r.Doc()
		if src != path && d.Source == src {
			// Names derived from the local stand-in name the remote path.
			if d.ID == src {
				d.ID = path
			} else if rest, ok := strings.CutPrefix(d.ID, src+":"); ok && rest == fmt.Sprint(d.Line) {
				d.ID = path + ":" + rest
			}
			d.Source = path
		}
		if err := each(record{doc: d}); err != nil {
			return readStats{}, err
		}
	}
	if err := r.Err(); err != nil {
		return readStats{}, fmt.Errorf("reading %s: %w", path, err)
	}
	st := r.Stats()
	return readStats{Read: st.Read, Yielded: st.Yielded, Rejected: st.Rejected, Warnings: st.Warnings, Skipped: st.Skipped}, nil
}

// keptWriter writes kept documents as JSONL: a JSONL record as its
// original line, any other record as {"id", "text", "meta"}
// (corpus.JSONLWriter).
type keptWriter struct{ w *corpus.JSONLWriter }

func newKeptWriter(w io.Writer) keptWriter { return keptWriter{corpus.NewJSONLWriter(w)} }

func (k keptWriter) write(r record) error { return k.w.Write(r.doc) }

func (k keptWriter) close() error { return k.w.Close() }
