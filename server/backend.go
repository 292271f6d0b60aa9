package server

// This file is the server's only contact with the index: the Backend
// interface the handlers call, and IndexBackend, its implementation over
// package index. When the index API changes, this file alone changes.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// Backend is what the server asks of a near-duplicate index. Methods are
// called concurrently. An error wrapping ErrInput is the client's fault
// (reported as 400); any other error is the backend's (500, counted as a
// store error).
type Backend interface {
	// Add sketches docs and, in order, finds each one's near-duplicates
	// (in the index and among the earlier documents of docs), then stores
	// them — all, or with ifNew only those without near-duplicates — in
	// one durable commit before returning. Results are in docs order.
	Add(ctx context.Context, docs []api.Document, ifNew bool) ([]api.AddResult, error)
	// Query returns the near-duplicates of each document in the index.
	Query(ctx context.Context, docs []api.Document) ([]api.QueryResult, error)
	// Header is the sketch header the index's documents carry; client
	// sketches must have it.
	Header() sketch.Header
	// QuerySketch returns the near-duplicates of a sketch with Header().
	QuerySketch(ctx context.Context, s *sketch.Sketch) ([]api.Match, error)
	// Get returns a stored document's information.
	Get(ctx context.Context, id string) (*api.DocumentInfo, bool, error)
	// Remove deletes a document and reports whether it existed.
	Remove(ctx context.Context, id string) (bool, error)
	// Collapse collapses a ranked list of ids (book 6.1).
	Collapse(ctx context.Context, ids []string) (*api.CollapseResponse, error)
	// Stats describes the index and this process's work.
	Stats(ctx context.Context) (*api.Stats, error)
	// Ready reports whether the backend can serve (its store answers).
	Ready(ctx context.Context) error
}

// ErrInput marks errors caused by a request's content.
var ErrInput = errors.New("bad input")

// IndexOptions configure OpenIndex. Zero fields take, for an index the
// store already holds, its recorded configuration (a non-zero field that
// contradicts it is an *index.ConfigError), and otherwise index.Config's
// defaults.
type IndexOptions struct {
	// Features configure feature extraction from text. The default is
	// feature.Options{} (5-word shingles, lower case).
	Features feature.Options
	// Sampler is the sketch algorithm; slot-wise (OPH, MinHash, ...; the
	// weighted CWS and ICWS). The default is OPH.
	Sampler sketch.Algorithm
	// K is the number of samples per sketch. The default is 128.
	K int
	// Seed keys the sampler and the LSH and collapse hashes. Default 0.
	Seed uint64
	// LSH is the supershingle scheme; nil adopts the stored one, or for a
	// new index chooses one for Threshold (index.ChooseLSH, as dedup does).
	LSH *lsh.Params
	// Threshold is the similarity of a match. The default is the recorded
	// one, or 0.8.
	Threshold float64
	// StoreName names the store in Stats ("pebble", "redis"...).
	StoreName string
	// NoFeatures stores sketches only, not feature sets: records are
	// smaller, and matches (and collapse pairs) are verified by the sketch
	// estimate within the index's slack instead of exactly. The default
	// stores feature sets.
	NoFeatures bool
	// CollapseUnverified serves collapse from the in-memory table alone
	// (the Bing design: 6 × 16 bits, parameters leaning to precision, some
	// pairs below the threshold collapse). The default verifies every
	// pair the table proposes against the stored documents, exactly as a
	// query verifies a candidate, with a 16-byte table leaning to recall:
	// every collapsed pair is then a verified pair at the threshold.
	CollapseUnverified bool
}

// IndexBackend is the Backend over package index, with a sketcher for text
// and a collapse table (lsh.CollapseTable) in this process's memory,
// filled as documents are added here and, for ids added by other
// processes, read from the store when a collapse first meets them. A
// document replaced by another process keeps its old collapse signature
// here until this process restarts. Safe for concurrent use; adds are
// serialized so that "find the near-duplicates, then add" is atomic within
// the process (not across processes sharing a store).
type IndexBackend struct {
	st       store.Store
	x        *index.Index
	hdr      sketch.Header
	ct       *lsh.CollapseTable
	name     string
	skPool   sync.Pool // *sample.Sketcher
	addMu    sync.Mutex
	added    atomic.Int64
	removed  atomic.Int64
	queried  atomic.Int64
	features bool
	verify   bool
}

var _ Backend = (*IndexBackend)(nil)

// OpenIndex opens (or creates) the index in st for serving. It does not
// take ownership of st.
func OpenIndex(st store.Store, o IndexOptions) (*IndexBackend, error) {
	ctx := context.Background()
	cfg := index.Config{Sketch: sample.Config{Algorithm: o.Sampler, K: o.K, Seed: o.Seed, Features: o.Features}, Threshold: o.Threshold}
	if o.LSH != nil {
		cfg.LSH = *o.LSH
	}
	x, err := index.Open(ctx, st, cfg)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	sk, err := x.NewSketcher()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	c := x.Config()
	co := lsh.CollapseOptions{Threshold: min(c.Threshold, 0.99), MaxSamples: c.Sketch.K, Seed: c.Sketch.Seed, BudgetBytes: 16, FPWeight: 0.1, FNWeight: 0.9}
	if o.CollapseUnverified {
		co.BudgetBytes, co.FPWeight, co.FNWeight = 12, 0.8, 0.2
	}
	cc, err := lsh.ChooseCollapse(co)
	if err != nil {
		return nil, fmt.Errorf("server: collapse: %w", err)
	}
	ct, err := lsh.NewCollapseTable(cc.Params)
	if err != nil {
		return nil, fmt.Errorf("server: collapse: %w", err)
	}
	b := &IndexBackend{st: st, x: x, hdr: x.Header(), ct: ct, name: o.StoreName, features: !o.NoFeatures, verify: !o.CollapseUnverified}
	b.skPool.Put(sk)
	b.skPool.New = func() any {
		s, err := x.NewSketcher()
		if err != nil {
			panic(err) // one was made above
		}
		return s
	}
	return b, nil
}

// sketchText makes the index document of a text.
func (b *IndexBackend) sketchText(d api.Document) *index.Doc {
	s := b.skPool.Get().(*sample.Sketcher)
	var sk sample.Sketched
	s.Sketch(&sk, []byte(d.Text), false)
	b.skPool.Put(s)
	return b.x.NewDoc(d.ID, &sk, b.features)
}

func toAPI(dst []api.Match, ms []index.Match) []api.Match {
	for _, m := range ms {
		dst = append(dst, api.Match{ID: m.Name, Similarity: m.Similarity(), Estimate: m.Estimate.J, StdErr: m.Estimate.StdErr, Exact: m.Exact >= 0})
	}
	return dst
}

// Header implements Backend.
func (b *IndexBackend) Header() sketch.Header { return b.hdr }

// Add implements Backend. Earlier documents of the batch are found through
// a second index over an in-memory store, so they are verified exactly
// like stored ones; a document matching a stored document that an earlier
// one of the batch replaces sees the new version only.
func (b *IndexBackend) Add(ctx context.Context, docs []api.Document, ifNew bool) ([]api.AddResult, error) {
	sk := make([]*index.Doc, len(docs))
	for i, d := range docs {
		sk[i] = b.sketchText(d)
	}
	b.addMu.Lock()
	defer b.addMu.Unlock()
	pending, err := index.Open(ctx, store.NewMemory(), b.x.Config())
	if err != nil {
		return nil, err
	}
	res := make([]api.AddResult, len(docs))
	var stored, batch []index.Match
	accepted := map[string]int{} // name -> index in sk of the last accepted version
	for i, d := range sk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		stored, err = b.x.Query(ctx, stored[:0], d, d.Name)
		if err != nil {
			return nil, err
		}
		batch, err = pending.Query(ctx, batch[:0], d, d.Name)
		if err != nil {
			return nil, err
		}
		ms := batch
		for _, m := range stored {
			if _, replaced := accepted[m.Name]; !replaced {
				ms = append(ms, m)
			}
		}
		sort.SliceStable(ms, func(i, j int) bool {
			si, sj := ms[i].Similarity(), ms[j].Similarity()
			if si != sj {
				return si > sj
			}
			return ms[i].Name < ms[j].Name
		})
		res[i] = api.AddResult{ID: d.Name, Matches: toAPI([]api.Match{}, ms)}
		if ifNew && len(ms) > 0 {
			continue
		}
		if _, err := pending.Add(ctx, d); err != nil {
			return nil, fmt.Errorf("%w: documents[%d]: %w", ErrInput, i, err)
		}
		accepted[d.Name] = i
		res[i].Added = true
	}
	// One version per name (the last).
	var commit []*index.Doc
	for i, d := range sk {
		if j, ok := accepted[d.Name]; ok && j == i {
			commit = append(commit, d)
		}
	}
	if _, err := b.x.Add(ctx, commit...); err != nil {
		return nil, err
	}
	for _, d := range commit {
		if err := b.ct.Put(index.ID(d.Name), d.Sketch.Values); err != nil {
			b.ct.Remove(index.ID(d.Name)) // too short to collapse: unknown
		}
	}
	b.added.Add(int64(len(commit)))
	return res, nil
}

// Query implements Backend.
func (b *IndexBackend) Query(ctx context.Context, docs []api.Document) ([]api.QueryResult, error) {
	res := make([]api.QueryResult, len(docs))
	var ms []index.Match
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		doc := b.sketchText(d)
		var err error
		ms, err = b.x.Query(ctx, ms[:0], doc, "")
		if err != nil {
			return nil, err
		}
		res[i] = api.QueryResult{ID: d.ID, Matches: toAPI([]api.Match{}, ms)}
	}
	b.queried.Add(int64(len(docs)))
	return res, nil
}

// QuerySketch implements Backend.
func (b *IndexBackend) QuerySketch(ctx context.Context, s *sketch.Sketch) ([]api.Match, error) {
	if err := b.hdr.Check(s.Header); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	ms, err := b.x.Query(ctx, nil, &index.Doc{Sketch: *s}, "")
	if err != nil {
		return nil, err
	}
	b.queried.Add(1)
	return toAPI([]api.Match{}, ms), nil
}

// Get implements Backend.
func (b *IndexBackend) Get(ctx context.Context, id string) (*api.DocumentInfo, bool, error) {
	d, ok, err := b.x.Get(ctx, id)
	if err != nil || !ok {
		return nil, false, err
	}
	enc, err := d.Sketch.MarshalBinary()
	if err != nil {
		return nil, false, err
	}
	info := &api.DocumentInfo{ID: d.Name, Samples: len(d.Sketch.Values), Features: -1, Sketch: enc}
	if d.Features != nil {
		info.Features = len(d.Features)
	}
	return info, true, nil
}

// Remove implements Backend.
func (b *IndexBackend) Remove(ctx context.Context, id string) (bool, error) {
	b.addMu.Lock()
	defer b.addMu.Unlock()
	n, err := b.x.Remove(ctx, id)
	if err != nil {
		return false, err
	}
	b.ct.Remove(index.ID(id))
	b.removed.Add(int64(n))
	return n > 0, nil
}

// Collapse implements Backend: ids the collapse table has not seen are
// read from the store first.
func (b *IndexBackend) Collapse(ctx context.Context, ids []string) (*api.CollapseResponse, error) {
	hashed := make([]uint64, len(ids))
	byID := make(map[uint64]string, len(ids))
	for i, name := range ids {
		hashed[i] = index.ID(name)
		byID[hashed[i]] = name
	}
	if err := b.fill(ctx, b.ct.Missing(nil, hashed), byID); err != nil {
		return nil, err
	}
	var verify func(i, j int) (bool, error)
	if b.verify {
		docs := map[int]*index.Doc{}
		load := func(i int) (*index.Doc, error) {
			if d, ok := docs[i]; ok {
				return d, nil
			}
			d, _, err := b.x.Get(ctx, ids[i])
			docs[i] = d // nil when removed meanwhile
			return d, err
		}
		verify = func(i, j int) (bool, error) {
			di, err := load(i)
			if err != nil || di == nil {
				return false, err
			}
			dj, err := load(j)
			if err != nil || dj == nil {
				return false, err
			}
			_, ok, err := b.x.Verify(di, dj)
			return ok, err
		}
	}
	into, err := b.ct.CollapseFunc(nil, hashed, verify)
	if err != nil {
		return nil, err
	}
	res := &api.CollapseResponse{Kept: []string{}, Collapsed: []api.Collapsed{}, Unknown: []string{}}
	for i, j := range into {
		switch {
		case j == lsh.Unknown:
			res.Kept = append(res.Kept, ids[i])
			res.Unknown = append(res.Unknown, ids[i])
		case j == i:
			res.Kept = append(res.Kept, ids[i])
		default:
			res.Collapsed = append(res.Collapsed, api.Collapsed{ID: ids[i], Into: ids[j]})
		}
	}
	return res, nil
}

// fill reads the documents of missing ids from the store (8 at a time) and
// puts their signatures in the collapse table; a removed or too short
// document stays unknown.
func (b *IndexBackend) fill(ctx context.Context, missing []uint64, byID map[uint64]string) error {
	const workers = 8
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	next := make(chan uint64)
	for range min(workers, len(missing)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				d, ok, err := b.x.Get(ctx, byID[id])
				if err == nil {
					err = ctx.Err()
				}
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					continue
				}
				if ok {
					b.ct.Put(id, d.Sketch.Values)
				}
			}
		}()
	}
	for _, id := range missing {
		next <- id
	}
	close(next)
	wg.Wait()
	return first
}

// Stats implements Backend.
func (b *IndexBackend) Stats(ctx context.Context) (*api.Stats, error) {
	cfg := b.x.Config()
	caps := b.st.Capabilities()
	return &api.Stats{
		Sketch:            b.hdr.String(),
		LSH:               cfg.LSH.String(),
		Collapse:          collapseName(b.ct.Params(), b.verify),
		Threshold:         cfg.Threshold,
		Store:             b.name,
		Durable:           caps.Durable,
		Atomic:            caps.Atomic,
		Shared:            caps.Shared,
		Added:             b.added.Load(),
		Removed:           b.removed.Load(),
		Queried:           b.queried.Load(),
		CollapseDocuments: b.ct.Len(),
		CollapseBytes:     b.ct.Bytes(),
	}, nil
}

// Ready implements Backend: one metadata read from the store.
func (b *IndexBackend) Ready(ctx context.Context) error {
	_, _, err := b.st.Meta(ctx, "neardup.index.config", nil)
	return err
}

func collapseName(p lsh.Params, verified bool) string {
	if verified {
		return p.String() + " verified"
	}
	return p.String()
}
