// Package index provides the near-duplicate index: documents go in as
// sketches, queries come out as verified near-duplicates with estimated
// similarity and standard error.
//
// Each document's sketch is cut into lookup keys by an lsh.Scheme
// (supershingles, "at least m of b" combination keys; book 2.5, 3.1, 6.1)
// and its id is posted under every key in a store.Store. A query computes
// the same keys, gathers the ids posted under them (the candidates), and
// verifies each candidate: first by the full-sketch Jaccard estimate
// (book 2.4), and, when both documents were stored with their feature sets,
// by the exact Jaccard of those sets. Only candidates at or above the
// threshold are returned. The index works streaming ("is this new document a
// near-duplicate of anything seen?": Query then Add) and in batch (Add
// everything, then Query each document), and survives restarts when its
// store is persistent: its configuration is recorded in the store and a
// reopened index must be configured the same way.
//
// This package does not extract features, sketch documents or cluster
// results: packages feature, sample and cluster do.
package index

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// Errors returned by the index.
var (
	// ErrConfig means the store holds an index built with another
	// configuration (sketch header or LSH parameters).
	ErrConfig = errors.New("index: store was built with another configuration")
	// ErrCollision means two different names hashed to the same id; it is
	// astronomically unlikely (about n²/2^65 for n documents).
	ErrCollision = errors.New("index: id collision between different names")
	// ErrCorrupt marks a stored record that does not decode.
	ErrCorrupt = errors.New("index: corrupt record")
)

const configMeta = "neardup.index.config"

// Config is what an index is built with. Sketches added or queried must have
// exactly Header. Config is recorded in the store on first use.
type Config struct {
	// Header is the sketch header every document must carry.
	Header sketch.Header `json:"header"`
	// LSH are the supershingle parameters; LSH.K() samples are taken from
	// the front of each sketch, so Header.K must be at least LSH.K().
	LSH lsh.Params `json:"lsh"`
	// Threshold is the similarity at or above which a candidate is a match.
	// The default (0) means 0.8.
	Threshold float64 `json:"threshold"`
	// Slack widens verification by sketch estimate; see Accept. The default
	// (0) means DefaultSlack; a negative value means none.
	Slack float64 `json:"slack"`
}

// DefaultSlack is the default Config.Slack: a candidate exactly at the
// threshold is accepted with probability 0.95 (one-sided normal bound).
const DefaultSlack = 1.645

// Accept reports whether a candidate at similarity sim is a match at
// threshold t. An exact Jaccard must reach t. A sketch estimate from k
// samples must reach t − slack·σ, σ = sqrt(t(1−t)/k) the estimate's
// standard error at the threshold: with slack 0 a pair exactly at t is
// missed half the time; with DefaultSlack, 5% of the time, while a pair 3σ
// below t slips in with probability P(Z > 3 − 1.645) ≈ 9% and one 4σ below
// with about 0.9%.
func Accept(t, slack float64, k int, sim float64, exact bool) bool {
	if exact || slack <= 0 || k <= 0 {
		return sim >= t
	}
	return sim >= t-slack*math.Sqrt(t*(1-t)/float64(k))
}

func (c *Config) ensureDefaults() {
	if c.Threshold == 0 {
		c.Threshold = 0.8
	}
	if c.Slack == 0 {
		c.Slack = DefaultSlack
	}
}

// Doc is a document as the index stores it.
type Doc struct {
	// Name is the caller's identifier of the document (unique).
	Name string
	// Sketch is the document's sketch; its header must equal the index's.
	Sketch sketch.Sketch
	// Features, when not nil, is the sorted set of the document's feature
	// ids; stored, it lets queries verify candidates exactly.
	Features []uint64
}

// Match is a verified near-duplicate found by Query.
type Match struct {
	// ID is the internal id (a hash of Name).
	ID uint64
	// Name is the stored document's name.
	Name string
	// Estimate is the sketch estimate of Jaccard similarity.
	Estimate sketch.Estimate
	// Exact is the exact Jaccard of the feature sets, or -1 when either
	// side has no stored features.
	Exact float64
	// Keys is the number of lookup keys the two documents share.
	Keys int
}

// Similarity returns the exact Jaccard when known, else the estimate.
func (m Match) Similarity() float64 {
	if m.Exact >= 0 {
		return m.Exact
	}
	return m.Estimate.J
}

// Index is a near-duplicate index over a store. It is safe for concurrent
// use: queries may run in parallel with each other and with Add.
type Index struct {
	st     store.Store
	cfg    Config
	scheme *lsh.Scheme
}

// Open returns the index kept in st. A store holding no index is
// initialized with cfg; one holding an index made with another
// configuration gives ErrConfig.
func Open(st store.Store, cfg Config) (*Index, error) {
	cfg.ensureDefaults()
	if cfg.Threshold < 0 || cfg.Threshold > 1 {
		return nil, fmt.Errorf("index: threshold %v outside [0, 1]", cfg.Threshold)
	}
	if err := cfg.Header.Validate(); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	scheme, err := lsh.New(cfg.LSH)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if !cfg.Header.Algorithm.IsSet() && int(cfg.Header.K) < cfg.LSH.K() {
		return nil, fmt.Errorf("index: sketch has k = %d samples but the LSH scheme %v needs %d", cfg.Header.K, cfg.LSH, cfg.LSH.K())
	}
	want, err := json.Marshal(storedConfig{cfg.Header, cfg.LSH})
	if err != nil {
		return nil, err
	}
	got, ok, err := st.Meta(context.TODO(), configMeta, nil)
	if err != nil {
		return nil, err
	}
	if ok && string(got) != string(want) {
		return nil, fmt.Errorf("%w: stored %s, asked for %s", ErrConfig, got, want)
	}
	if !ok {
		b := st.NewBatch()
		defer b.Close()
		b.PutMeta(configMeta, want)
		if err := b.Commit(context.TODO()); err != nil {
			return nil, err
		}
	}
	return &Index{st: st, cfg: cfg, scheme: scheme}, nil
}

// storedConfig is what Open records in the store.
type storedConfig struct {
	Header sketch.Header `json:"header"`
	LSH    lsh.Params    `json:"lsh"`
}

// Stored returns the sketch header and LSH parameters an index in st was
// built with, and false if st holds no index. Callers use it to adopt an
// existing index's configuration instead of repeating it.
func Stored(st store.Store) (sketch.Header, lsh.Params, bool, error) {
	b, ok, err := st.Meta(context.TODO(), configMeta, nil)
	if err != nil || !ok {
		return sketch.Header{}, lsh.Params{}, false, err
	}
	var c storedConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return sketch.Header{}, lsh.Params{}, false, fmt.Errorf("%w: config: %v", ErrCorrupt, err)
	}
	return c.Header, c.LSH, true, nil
}

// Config returns the index configuration (with defaults filled in).
func (x *Index) Config() Config { return x.cfg }

// Scheme returns the LSH scheme keys are made with.
func (x *Index) Scheme() *lsh.Scheme { return x.scheme }

// ID returns the internal id of a document name: a 64-bit hash.
func ID(name string) uint64 {
	h := rng.Key(0x6e616d65) // "name"
	var w [8]byte
	for len(name) >= 8 {
		h = rng.Hash(h, binary.LittleEndian.Uint64([]byte(name[:8])))
		name = name[8:]
	}
	w = [8]byte{}
	copy(w[:], name)
	return rng.Hash(h^uint64(len(name)), binary.LittleEndian.Uint64(w[:]))
}

// Keys appends the lookup keys of s to dst. Set sketches (BottomK,
// Proportional) are not slot-wise and cannot be cut into supershingles.
func (x *Index) Keys(dst []uint64, s *sketch.Sketch) ([]uint64, error) {
	if err := x.cfg.Header.Check(s.Header); err != nil {
		return dst, fmt.Errorf("index: %w", err)
	}
	if len(s.Values) == 0 {
		return dst, nil // an empty document has no keys; it matches nothing
	}
	return x.scheme.Keys(dst, s.Values)
}

// Add stores docs and posts them under their keys in one atomic, durable
// batch. Adding a name again replaces the document (its old postings are
// removed).
func (x *Index) Add(docs ...*Doc) error {
	b := x.st.NewBatch()
	defer b.Close()
	var keys, oldKeys []uint64
	var rec, old []byte
	for _, d := range docs {
		var err error
		keys, err = x.Keys(keys[:0], &d.Sketch)
		if err != nil {
			return fmt.Errorf("index: %q: %w", d.Name, err)
		}
		id := ID(d.Name)
		var ok bool
		old, ok, err = x.st.Doc(context.TODO(), id, old[:0])
		if err != nil {
			return err
		}
		if ok {
			var od Doc
			if err := decodeDoc(old, &od); err != nil {
				return err
			}
			if od.Name != d.Name {
				return fmt.Errorf("%w: %q and %q", ErrCollision, od.Name, d.Name)
			}
			oldKeys, _ = x.Keys(oldKeys[:0], &od.Sketch)
			for _, k := range oldKeys {
				if !slices.Contains(keys, k) {
					b.RemovePosting(k, id)
				}
			}
		}
		for _, k := range keys {
			b.AddPosting(k, id)
		}
		rec = AppendDoc(rec[:0], d)
		b.PutDoc(id, rec)
	}
	return b.Commit(context.TODO())
}

// Remove deletes the named documents and their postings in one atomic
// batch, and returns how many existed.
func (x *Index) Remove(names ...string) (int, error) {
	b := x.st.NewBatch()
	defer b.Close()
	var keys []uint64
	var rec []byte
	n := 0
	for _, name := range names {
		id := ID(name)
		var ok bool
		var err error
		rec, ok, err = x.st.Doc(context.TODO(), id, rec[:0])
		if err != nil {
			return 0, err
		}
		if !ok {
			continue
		}
		var d Doc
		if err := decodeDoc(rec, &d); err != nil {
			return 0, err
		}
		keys, _ = x.Keys(keys[:0], &d.Sketch)
		for _, k := range keys {
			b.RemovePosting(k, id)
		}
		b.DeleteDoc(id)
		n++
	}
	return n, b.Commit(context.TODO())
}

// Get returns the stored document with the given name.
func (x *Index) Get(name string) (*Doc, bool, error) {
	rec, ok, err := x.st.Doc(context.TODO(), ID(name), nil)
	if err != nil || !ok {
		return nil, false, err
	}
	d := new(Doc)
	if err := decodeDoc(rec, d); err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// Query returns the stored documents whose similarity to (s, features) is
// at least the threshold, most similar first (ties by name), appended to
// dst. features may be nil; when both it and a candidate's stored features
// are present, the exact Jaccard decides, otherwise the estimate does. A
// document stored under exclude (its own name, for batch self-queries) is
// skipped; pass "" to exclude nothing.
func (x *Index) Query(dst []Match, s *sketch.Sketch, features []uint64, exclude string) ([]Match, error) {
	cands, err := x.Candidates(nil, s)
	if err != nil {
		return dst, err
	}
	excl := uint64(0)
	if exclude != "" {
		excl = ID(exclude)
	}
	start := len(dst)
	var rec []byte
	var d Doc
	for _, c := range cands {
		if exclude != "" && c.ID == excl {
			continue
		}
		var ok bool
		rec, ok, err = x.st.Doc(context.TODO(), c.ID, rec[:0])
		if err != nil {
			return dst, err
		}
		if !ok {
			continue // removed between the posting read and now
		}
		if err := decodeDoc(rec, &d); err != nil {
			return dst, err
		}
		m, ok, err := x.verify(s, features, &d)
		if err != nil {
			return dst, err
		}
		if ok {
			m.ID, m.Keys = c.ID, c.Keys
			dst = append(dst, m)
		}
	}
	res := dst[start:]
	sort.Slice(res, func(i, j int) bool {
		si, sj := res[i].Similarity(), res[j].Similarity()
		if si != sj {
			return si > sj
		}
		return res[i].Name < res[j].Name
	})
	return dst, nil
}

// Verify compares a sketch (and optional features) with a stored document
// and reports the match and whether it reaches the threshold.
func (x *Index) verify(s *sketch.Sketch, features []uint64, d *Doc) (Match, bool, error) {
	est, err := sketch.Jaccard(s, &d.Sketch)
	if err != nil {
		return Match{}, false, fmt.Errorf("index: %q: %w", d.Name, err)
	}
	m := Match{Name: d.Name, Estimate: est, Exact: -1}
	if features != nil && d.Features != nil {
		m.Exact = ExactJaccard(features, d.Features)
	}
	return m, Accept(x.cfg.Threshold, x.cfg.Slack, len(s.Values), m.Similarity(), m.Exact >= 0), nil
}

// Candidate is a document sharing at least one lookup key with a query.
type Candidate struct {
	ID   uint64
	Keys int // number of shared keys
}

// Candidates appends the unverified candidates of s (ids sharing a key with
// it), in increasing id order, to dst.
func (x *Index) Candidates(dst []Candidate, s *sketch.Sketch) ([]Candidate, error) {
	keys, err := x.Keys(make([]uint64, 0, x.scheme.NumKeys()), s)
	if err != nil {
		return dst, err
	}
	var ids []uint64
	for _, k := range keys {
		ids, err = x.st.Postings(context.TODO(), k, ids)
		if err != nil {
			return dst, err
		}
	}
	slices.Sort(ids)
	for i := 0; i < len(ids); {
		j := i
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		dst = append(dst, Candidate{ID: ids[i], Keys: j - i})
		i = j
	}
	return dst, nil
}

// ExactJaccard returns |A∩B|/|A∪B| of two sorted sets of feature ids
// (duplicates allowed and ignored). Two empty sets have similarity 1.
// Cost: O(|A|+|B|), no allocation.
func ExactJaccard(a, b []uint64) float64 {
	inter, union := 0, 0
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			union++
			i = skip(a, i)
		case i == len(a) || b[j] < a[i]:
			union++
			j = skip(b, j)
		default:
			inter++
			union++
			i = skip(a, i)
			j = skip(b, j)
		}
	}
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

func skip(s []uint64, i int) int {
	v := s[i]
	for i < len(s) && s[i] == v {
		i++
	}
	return i
}

// Record encoding (version 1):
//
//	byte 1 | uvarint len(name) | name | uint32 LE len(sketch) | sketch encoding |
//	uvarint nfeatures+1 (0: no features) | delta uvarints of sorted features
const recordVersion = 1

// AppendDoc appends the stored encoding of d to dst.
func AppendDoc(dst []byte, d *Doc) []byte {
	dst = append(dst, recordVersion)
	dst = binary.AppendUvarint(dst, uint64(len(d.Name)))
	dst = append(dst, d.Name...)
	n0 := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := d.Sketch.AppendBinary(dst)
	if err != nil {
		// AppendBinary fails only for invalid sketches, which Keys rejected.
		panic(fmt.Sprintf("index: encoding a checked sketch: %v", err))
	}
	binary.LittleEndian.PutUint32(dst[n0:], uint32(len(dst)-n0-4))
	if d.Features == nil {
		return binary.AppendUvarint(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(d.Features))+1)
	prev := uint64(0)
	for _, f := range d.Features {
		dst = binary.AppendUvarint(dst, f-prev)
		prev = f
	}
	return dst
}

// DecodeDoc decodes a record made by AppendDoc. The result does not alias
// rec.
func DecodeDoc(rec []byte) (*Doc, error) {
	d := new(Doc)
	return d, decodeDoc(rec, d)
}

func decodeDoc(rec []byte, d *Doc) error {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrCorrupt, what) }
	if len(rec) == 0 || rec[0] != recordVersion {
		return bad("unknown record version")
	}
	rec = rec[1:]
	n, w := binary.Uvarint(rec)
	if w <= 0 || n > uint64(len(rec)-w) {
		return bad("name")
	}
	d.Name = string(rec[w : w+int(n)])
	rec = rec[w+int(n):]
	if len(rec) < 4 || uint64(binary.LittleEndian.Uint32(rec)) > uint64(len(rec)-4) {
		return bad("sketch length")
	}
	n = uint64(binary.LittleEndian.Uint32(rec))
	if err := d.Sketch.UnmarshalBinary(rec[4 : 4+n]); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	rec = rec[4+n:]
	n, w = binary.Uvarint(rec)
	if w <= 0 {
		return bad("feature count")
	}
	rec = rec[w:]
	if n == 0 {
		d.Features = nil
		if len(rec) != 0 {
			return bad("trailing bytes")
		}
		return nil
	}
	n--
	if n > uint64(len(rec)) {
		return bad("feature count")
	}
	d.Features = make([]uint64, 0, n)
	prev := uint64(0)
	for i := uint64(0); i < n; i++ {
		v, w := binary.Uvarint(rec)
		if w <= 0 {
			return bad("features")
		}
		prev += v
		d.Features = append(d.Features, prev)
		rec = rec[w:]
	}
	if len(rec) != 0 {
		return bad("trailing bytes")
	}
	return nil
}
