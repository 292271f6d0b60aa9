// Package index provides the near-duplicate index, the one owner of
// everything keyed in a store (package store): documents go in as sketches
// with their exact fingerprints, queries come out as verified
// near-duplicates with estimated similarity and standard error.
//
// Each document's sketch is cut into lookup keys by an lsh.Scheme
// (supershingles, "at least m of b" combination keys; Manasse, "On the
// Efficient Determination of Most Near Neighbors" (the book) 2.5, 3.1, 6.1)
// and its id is posted under every key; its exact fingerprint (book 2.2, 3.3)
// is posted in the same key space, behind a Bloom filter kept in the store's
// metadata (lecture notes on Bloom filters), so identical bodies are
// recognized before any sketch is compared; and its record keeps its name,
// fingerprint, sketch and, optionally, its feature set — always for a short
// document, whose ids in short form (4 bytes each) take no more bytes than
// its sketch, so that its matches are verified exactly at no cost in
// space (NewDoc, Cheap). A query computes the
// same keys, gathers the ids posted under them in one multi-key lookup (the
// candidates), reads their records in a second one, and verifies each
// candidate with Verify: by the full-sketch Jaccard estimate (book 2.4), or
// by the exact (weighted) Jaccard when both sides have features. The batch
// path — Join, AltaVista's sort-join of (key, document) pairs (book 3.1) —
// finds the candidate pairs of a whole collection without a store, and
// verifies them with the same Verify. Replacing or removing a document
// removes every posting it made, fingerprint included; Check walks a whole
// store and proves (or repairs) that.
//
// A server keeps the postings in memory (LoadPostings). On a shared store
// it follows the store's journal of every process's posting writes, and
// acknowledges what it has read so that the store trims it; one silent
// past the store's expiry rebuilds from the postings. Backup writes a
// consistent copy of a Pebble index while it serves.
//
// A build of many documents (dedup's store stage, `neardup index add` of a
// large input) goes through a Bulk: its postings and records are sorted
// and handed to the store as finished tables (store.Bulker: Pebble's
// sstable ingestion) instead of one write-ahead-log record per posting
// that compactions then rewrite; small online adds keep the batch path.
//
// The index records its Config in the store when it creates it, and adopts
// the recorded one when it is reopened: a reopened index needs no settings,
// and a setting that contradicts the recorded one is a *ConfigError naming
// both values.
//
// This package does not read corpora or cluster results (packages corpus,
// cluster and dedup do); it sketches only through package sample's
// Sketcher, built from its Config.
package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// Errors returned by the index.
var (
	// ErrConfig means the store holds an index built with another
	// configuration; the error is a *ConfigError naming the setting.
	ErrConfig = errors.New("index: store was built with another configuration")
	// ErrCollision means two different names hashed to the same id; it is
	// astronomically unlikely (about n²/2^65 for n documents).
	ErrCollision = errors.New("index: id collision between different names")
	// ErrCorrupt marks a stored record or metadata value that does not
	// decode; Check with repair drops what cannot be read.
	ErrCorrupt = errors.New("index: corrupt record")
)

// Index is a near-duplicate index over a store. It is safe for concurrent
// use: queries run in parallel with each other and with Add and Remove,
// which are serialized with each other (each reads the records it
// replaces). Two processes writing one shared store (store.Capabilities
// Shared) must not replace the same ids at the same time.
type Index struct {
	st     store.Store
	prior  bool // st held an index when opened
	cfg    Config
	hdr    sketch.Header
	scheme *lsh.Scheme
	wmu    sync.Mutex // serializes Add, Remove, Flush and Check's repairs
	fps    filter     // the Bloom filter in front of the fingerprints

	bulkOpen  bool                        // a Bulk is open (guarded by wmu)
	collapser collapserHook               // the collapse table kept up to date, if any
	mem       atomic.Pointer[memPostings] // postings in memory (LoadPostings), if any
}

// Store is what an index is kept in (package store: Pebble, Redis, memory),
// named here so that the index's users hand one over without using the
// store's own API: only this package reads and writes its keys.
type Store = store.Store

// Open returns the index kept in st; a nil st is a new in-memory store,
// gone with the Index. A store holding no index is
// initialized with cfg (defaults filled in), and cfg is recorded. A store
// holding one is opened with the recorded configuration: each zero field
// of cfg takes the recorded value, each non-zero field must equal it (or
// Open returns a *ConfigError), except Threshold and Slack, which when
// given override the recorded ones for this Index (they decide matches,
// not keys). An index recorded by an earlier release (configuration
// version 1, which kept only a hash of the feature options) is opened when
// cfg's feature options hash to the recorded value, and its record is then
// upgraded.
//
// A TF-IDF index reopened without its table (cfg.Sketch.Features.IDFTable
// nil) opens for everything but NewSketcher.
func Open(ctx context.Context, st store.Store, cfg Config) (*Index, error) {
	if st == nil {
		st = store.NewMemory()
	}
	raw, ok, err := st.Meta(ctx, configMeta, nil)
	if err != nil {
		return nil, fmt.Errorf("index: reading the configuration: %w", err)
	}
	var hdr sketch.Header
	write := !ok
	if !ok {
		cfg.EnsureDefaults()
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		smp, err := sample.New(cfg.Sketch)
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		hdr = smp.Header()
	} else {
		r, err := decodeStored(raw)
		if err != nil {
			return nil, err
		}
		if cfg, write, err = r.adopt(cfg); err != nil {
			return nil, err
		}
		hdr = r.header
		check := cfg
		if !complete(check.Sketch.Features) {
			check.Sketch.Features.Weighting = 0 // the table is not needed to open
		}
		if err := check.Validate(); err != nil {
			return nil, err
		}
	}
	scheme, err := lsh.New(cfg.LSH)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if write {
		rec, err := encodeStored(cfg, hdr)
		if err != nil {
			return nil, err
		}
		b := st.NewBatch()
		defer b.Close()
		b.PutMeta(configMeta, rec)
		if _, j := st.(store.Journaled); j && !ok {
			// The store's journal holds this index's whole history.
			b.PutMeta(journalMeta, []byte{1})
		}
		if err := b.Commit(ctx); err != nil {
			return nil, fmt.Errorf("index: recording the configuration: %w", err)
		}
	}
	return &Index{st: st, prior: ok, cfg: cfg, hdr: hdr, scheme: scheme}, nil
}

// Reopened reports whether the store held an index when Open was called
// (documents of earlier runs may be there).
func (x *Index) Reopened() bool { return x.prior }

// Compact compacts the store after a large build (store.Compact): a no-op
// for stores that do not compact.
func (x *Index) Compact(ctx context.Context) error { return store.Compact(ctx, x.st) }

// Stored returns the configuration recorded in st, with defaults filled
// in, and false if st holds no index. For an index recorded by an earlier
// release only the sketch settings and LSH parameters are known; its
// feature options are the defaults.
func Stored(ctx context.Context, st store.Store) (Config, bool, error) {
	raw, ok, err := st.Meta(ctx, configMeta, nil)
	if err != nil || !ok {
		return Config{}, false, err
	}
	r, err := decodeStored(raw)
	if err != nil {
		return Config{}, false, err
	}
	c := r.cfg
	c.EnsureDefaults()
	return c, true, nil
}

// Config returns the index configuration (defaults filled in).
func (x *Index) Config() Config { return x.cfg }

// Header returns the header every document's sketch must carry.
func (x *Index) Header() sketch.Header { return x.hdr }

// Scheme returns the LSH scheme keys are made with.
func (x *Index) Scheme() *lsh.Scheme { return x.scheme }

// NewSketcher returns a Sketcher of the index's sketch configuration: its
// documents' sketches are comparable with the index's. One per goroutine.
func (x *Index) NewSketcher() (*sample.Sketcher, error) {
	s, err := sample.NewSketcher(x.cfg.Sketch)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return s, nil
}

// NewDoc returns the document named name as s (made by a Sketcher of the
// index's configuration) describes it: its fingerprint, its sketch (Size
// the exact size), and, when features is true, its feature set for exact
// verification — the sorted ids, or for weighted samplers the weighted
// features sorted by id. When features is false a short document of a
// set sampler keeps its ids anyway, in short form (Doc.Compact, 4 bytes
// each), when that takes no more bytes than its sketch's samples
// (Cheap): its matches are then verified exactly at no cost in space. It
// copies what it keeps: s may be reused.
func (x *Index) NewDoc(name string, s *sample.Sketched, features bool) *Doc {
	d := &Doc{Name: name, Fingerprint: s.Fingerprint, HasFingerprint: true,
		Sketch: sketch.Sketch{Header: x.hdr, Values: slices.Clone(s.Values), Size: s.Size}}
	if d.Sketch.Values == nil {
		d.Sketch.Values = []uint64{}
	}
	if !features {
		if x.hdr.Algorithm.IsWeighted() || !Cheap(len(s.Features), &d.Sketch) {
			return d
		}
		d.Compact = true
	}
	if x.hdr.Algorithm.IsWeighted() {
		d.Weighted = slices.Clone(s.Features)
		slices.SortFunc(d.Weighted, func(a, b feature.Feature) int { return cmp.Compare(a.ID, b.ID) })
		if d.Weighted == nil {
			d.Weighted = []feature.Feature{}
		}
		return d
	}
	d.Features = make([]uint64, len(s.Features))
	for i, f := range s.Features {
		d.Features[i] = f.ID
	}
	tp := sortBufs.Get().(*[]uint64)
	if cap(*tp) < len(d.Features) {
		*tp = make([]uint64, len(d.Features))
	}
	sortIDs(d.Features, (*tp)[:len(d.Features)])
	sortBufs.Put(tp)
	if d.Compact {
		for i := range d.Features {
			d.Features[i] &= topHalf
		}
	}
	return d
}

// Cheap reports whether n feature ids in short form (Doc.Compact: 4
// bytes each) take no more bytes than the samples of sketch s (len(Values)
// × Bits/8): the bound under which an index of sketches keeps a
// document's ids too (NewDoc, Doc.TrimFeatures). At 128 samples of 64
// bits that is up to 256 ids, a document of about 260 words with 5-word
// shingles.
func Cheap(n int, s *sketch.Sketch) bool {
	return 4*n <= len(s.Values)*int(s.Header.Bits)/8
}

// TrimFeatures drops d's feature set, as an index of sketches stores a
// document, unless the set is Cheap: then it is marked Compact (stored
// in short form; d.Features itself is not changed). Weighted sets are
// always dropped.
func (d *Doc) TrimFeatures() {
	d.Weighted = nil
	if d.Features == nil || !Cheap(len(d.Features), &d.Sketch) {
		d.Features, d.Compact = nil, false
		return
	}
	d.Compact = true
}

// sortBufs holds scratch for sortIDs.
var sortBufs = sync.Pool{New: func() any { return new([]uint64) }}

// sortIDs sorts feature ids, using tmp (as long as a) as scratch. Feature
// ids are hashes, so their top byte spreads them evenly: one counting pass
// on it puts each id into its bucket, which leaves tmp sorted but within
// buckets. With a few ids a bucket, one insertion pass over the whole of
// tmp finishes it (each id moves within its bucket only); a large input,
// or a skewed one, has each crowded bucket sorted by slices.Sort. For a
// 300-word document's 296 ids that is about a third of slices.Sort's time
// (BenchmarkSortIDs).
func sortIDs(a, tmp []uint64) {
	if len(a) < 64 || len(a) > math.MaxUint32 {
		slices.Sort(a)
		return
	}
	var start [257]uint32
	for _, v := range a {
		start[v>>56+1]++
	}
	crowded := false
	for i := 1; i <= 256; i++ {
		crowded = crowded || start[i] > 16
		start[i] += start[i-1]
	}
	for _, v := range a {
		b := v >> 56
		tmp[start[b]] = v
		start[b]++ // ends at the bucket's end
	}
	if !crowded {
		insertionSort(tmp)
	} else {
		from := uint32(0)
		for _, to := range start[:256] {
			if bucket := tmp[from:to]; len(bucket) > 16 {
				slices.Sort(bucket)
			} else {
				insertionSort(bucket)
			}
			from = to
		}
	}
	copy(a, tmp)
}

func insertionSort(a []uint64) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for ; j > 0 && a[j-1] > v; j-- {
			a[j] = a[j-1]
		}
		a[j] = v
	}
}

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

// fpTag keys fingerprint postings apart from LSH keys in the store's one
// posting space (the key a fingerprint is posted under is a hash of the
// tag and the fingerprint; the LSH keys are hashes too).
const fpTag = 0x6670726e74 // "fprnt"

func fpKey(fp uint64) uint64 { return rng.Hash(fpTag, fp) }

// Keys appends the lookup keys of s to dst: its LSH keys. An empty sketch
// (a document without features) has none; it matches nothing.
func (x *Index) Keys(dst []uint64, s *sketch.Sketch) ([]uint64, error) {
	if err := x.hdr.Check(s.Header); err != nil {
		return dst, fmt.Errorf("index: %w", err)
	}
	if len(s.Values) == 0 {
		return dst, nil
	}
	return x.scheme.Keys(dst, s.Values)
}

// postingsOf appends every posting key of the document v describes (its
// LSH keys, then its fingerprint's) to dst.
func (x *Index) postingsOf(dst []uint64, d *Doc) ([]uint64, error) {
	dst, err := x.Keys(dst, &d.Sketch)
	if err != nil {
		return dst, err
	}
	if d.HasFingerprint {
		dst = append(dst, fpKey(d.Fingerprint))
	}
	return dst, nil
}

// lookupDocs is store.LookupDocs with its store errors saying what was
// being read; fn's errors pass unchanged.
func (x *Index) lookupDocs(ctx context.Context, what string, ids []uint64, fn func(i int, rec []byte, ok bool) error) error {
	var ferr error
	err := x.st.LookupDocs(ctx, ids, func(i int, rec []byte, ok bool) error {
		ferr = fn(i, rec, ok)
		return ferr
	})
	if ferr != nil {
		return ferr
	}
	if err != nil {
		return fmt.Errorf("index: %s: %w", what, err)
	}
	return nil
}
