package server

// This file is the server's only contact with the index: the Backend
// interface the handlers call, and IndexBackend, its implementation over
// package index. When the index API changes, this file alone changes.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

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
	// Backup writes a consistent copy of the index into dir (a new
	// directory on this machine) while serving; an error wrapping
	// ErrUnsupported when the store cannot.
	Backup(ctx context.Context, dir string) error
}

// ErrInput marks errors caused by a request's content.
var ErrInput = errors.New("bad input")

// ErrUnsupported marks a request the backend's store cannot serve (a
// backup of a Redis index), reported as 501.
var ErrUnsupported = errors.New("not supported by this store")

// ErrBackup marks a backup that failed while the index did not: the
// backup's directory could not be written (a full or failing disk).
// Reported as 507 for a full disk, 500 otherwise; the index serves on.
var ErrBackup = errors.New("backup failed, the index is unharmed")

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
	// NoFeatures stores sketches only, not feature sets (but for short
	// documents, whose ids in short form take no more bytes than the
	// sketch: index.NewDoc): records are smaller, and matches (and
	// collapse pairs) with longer documents are verified by the sketch
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
	// CollapseLSH, when not nil, is the collapse table's scheme instead
	// of the chosen one (index.CollapseOptions.LSH): lsh.Bing() for the
	// book's 6 × 16 bits, 4 of 6.
	CollapseLSH *lsh.Params
	// StorePostings reads every candidate lookup's postings from the
	// store. The default loads them into memory when the index opens
	// (index.LoadPostings: about 16 bytes per posting) and serves lookups
	// from there: for a store of this process alone (Pebble, memory) kept
	// current by this process's writes, for a shared one (Redis) by
	// reading the store's journal of every process's writes before each
	// lookup. A shared store whose journal does not hold the index's whole
	// history (an index created before journals) is read as before.
	StorePostings bool
}

// IndexBackend is the Backend over package index, with a sketcher for text
// and the index's Collapser (its table in this process's memory, filled as
// documents are added here and, for ids added by other processes, read
// from the store when a collapse first meets them). Each request costs a
// fixed number of store round trips, whatever its number of documents
// (index.QueryMany, index.Add, index.Collapser.Collapse). Safe for concurrent use; adds are
// serialized so that "find the near-duplicates, then add" is atomic within
// the process (not across processes sharing a store).
type IndexBackend struct {
	st       store.Store
	x        *index.Index
	hdr      sketch.Header
	col      *index.Collapser
	name     string
	skPool   sync.Pool  // *sketchScratch
	addMu    sync.Mutex // held by the request committing a group of adds
	queueMu  sync.Mutex // guards queue
	queue    []*addRequest
	added    atomic.Int64
	removed  atomic.Int64
	queried  atomic.Int64
	features bool
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
	col, err := x.NewCollapser(index.CollapseOptions{Unverified: o.CollapseUnverified, LSH: o.CollapseLSH})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	// After the collapser: replaying a shared store's journal also fills
	// its table with every process's signatures.
	if !o.StorePostings {
		if _, err := x.LoadPostings(ctx); err != nil && !st.Capabilities().Shared {
			return nil, fmt.Errorf("server: %w", err)
		}
		// A shared store without a journal of the whole index keeps
		// serving lookups from the store.
	}
	b := &IndexBackend{st: st, x: x, hdr: x.Header(), col: col, name: o.StoreName, features: !o.NoFeatures}
	b.skPool.Put(&sketchScratch{s: sk})
	b.skPool.New = func() any {
		s, err := x.NewSketcher()
		if err != nil {
			panic(err) // one was made above
		}
		return &sketchScratch{s: s}
	}
	return b, nil
}

// sketchText makes the index document of a text.
func (b *IndexBackend) sketchText(d api.Document) *index.Doc {
	sc := b.skPool.Get().(*sketchScratch)
	sc.text = append(sc.text[:0], d.Text...)
	sc.s.Sketch(&sc.sk, sc.text, d.HTML)
	doc := b.x.NewDoc(d.ID, &sc.sk, b.features) // copies what it keeps
	if cap(sc.text) > maxPooled {
		sc.text = nil // a rare large text is not kept for the next one
	}
	b.skPool.Put(sc)
	return doc
}

// sketchScratch is a sketcher with the buffers it reuses from one text to
// the next.
type sketchScratch struct {
	s    *sample.Sketcher
	sk   sample.Sketched
	text []byte
}

func toAPI(dst []api.Match, ms []index.Match) []api.Match {
	for _, m := range ms {
		dst = append(dst, api.Match{ID: m.Name, Similarity: m.Similarity(), Estimate: m.Estimate.J, StdErr: m.Estimate.StdErr, Exact: m.Exact >= 0})
	}
	return dst
}

// LoadCollapse fills the collapse table with the signature of every stored
// document (index.Collapser.Load: one scan of the records) and returns how
// many it holds. Until it has run, the table holds what this process added
// and what a shared store's journal carried, and a collapse reads the
// records of the other ids it meets; a server runs it in the background at
// start, while it serves (the writes made meanwhile win over the scan).
func (b *IndexBackend) LoadCollapse(ctx context.Context) (int, error) {
	return b.col.Load(ctx)
}

// Header implements Backend.
func (b *IndexBackend) Header() sketch.Header { return b.hdr }

// Add implements Backend. The stored near-duplicates of the whole batch
// are found with one index.QueryMany (two store round trips), the earlier
// documents of the batch through a second index over an in-memory store,
// so they are verified exactly like stored ones; a document matching a
// stored document that an earlier one of the batch replaces sees the new
// version only. The accepted documents are then written by one index.Add.
//
// Concurrent Adds are committed together (group commit): each request
// queues its sketched documents, and whichever request holds the add lock
// next takes every queued one and processes them as one sequence, in
// arrival order, with one index.Add — one durable commit for all of them,
// where serial Adds would pay one each. The results are those of running
// the requests one after the other: a later request's documents see the
// earlier ones' as stored. Should the group fail on one request's input
// (an id collision), its requests are run again one by one, so that only
// the faulty one fails.
func (b *IndexBackend) Add(ctx context.Context, docs []api.Document, ifNew bool) ([]api.AddResult, error) {
	req := &addRequest{docs: make([]*index.Doc, len(docs)), ifNew: ifNew}
	for i, d := range docs {
		req.docs[i] = b.sketchText(d)
	}
	b.queueMu.Lock()
	b.queue = append(b.queue, req)
	b.queueMu.Unlock()
	b.addMu.Lock()
	defer b.addMu.Unlock()
	// Either an earlier holder of addMu took req and finished it before
	// letting go, or req is still queued and is taken here.
	b.queueMu.Lock()
	group := b.queue
	b.queue = nil
	b.queueMu.Unlock()
	if len(group) > 0 {
		b.addGroup(ctx, group)
	}
	return req.res, req.err
}

// addRequest is one Add waiting for its group's commit.
type addRequest struct {
	docs  []*index.Doc
	ifNew bool
	res   []api.AddResult
	err   error
}

// maxGroupDocs bounds the documents of one group commit.
const maxGroupDocs = 4096

// addGroup runs queued requests with b.addMu held: as one sequence when
// it can, else one by one. Each request gets its results or its error.
func (b *IndexBackend) addGroup(ctx context.Context, group []*addRequest) {
	if len(group) == 1 {
		r := group[0]
		r.res, r.err = b.addDocs(ctx, r.docs, func(int) bool { return r.ifNew })
		return
	}
	// The group's work is the leader's, done for the others too: it is
	// not cut short when the leader's own client goes away.
	ctx = context.WithoutCancel(ctx)
	for len(group) > 0 {
		n, docs := 0, 0
		for n < len(group) && (n == 0 || docs+len(group[n].docs) <= maxGroupDocs) {
			docs += len(group[n].docs)
			n++
		}
		part := group[:n]
		group = group[n:]
		var all []*index.Doc
		var owner []int // request of each document
		for i, r := range part {
			all = append(all, r.docs...)
			for range r.docs {
				owner = append(owner, i)
			}
		}
		res, err := b.addDocs(ctx, all, func(i int) bool { return part[owner[i]].ifNew })
		if err != nil && errors.Is(err, ErrInput) && len(part) > 1 {
			for _, r := range part {
				b.addGroup(ctx, []*addRequest{r})
			}
			continue
		}
		at := 0
		for _, r := range part {
			if err != nil {
				r.err = err
			} else {
				r.res = res[at : at+len(r.docs) : at+len(r.docs)]
			}
			at += len(r.docs)
		}
	}
}

// addDocs finds the near-duplicates of docs and adds them as Add says,
// ifNew(i) telling whether docs[i] is added only when new. Called with
// b.addMu held.
func (b *IndexBackend) addDocs(ctx context.Context, sk []*index.Doc, ifNew func(i int) bool) ([]api.AddResult, error) {
	self := make([]uint64, len(sk))
	for i, d := range sk {
		self[i] = index.ID(d.Name)
	}
	stored := make([][]index.Match, len(sk))
	err := b.x.QueryMany(ctx, sk, func(i int, id uint64) bool { return id == self[i] }, func(i int, ms []index.Match) error {
		stored[i] = slices.Clone(ms)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var pending *index.Index // the accepted documents of the batch
	if len(sk) > 1 {
		if pending, err = index.Open(ctx, store.NewMemory(), b.x.Config()); err != nil {
			return nil, err
		}
	}
	res := make([]api.AddResult, len(sk))
	var batch []index.Match
	accepted := map[string]int{} // name -> index in sk of the last accepted version
	for i, d := range sk {
		if pending != nil && len(accepted) > 0 {
			if batch, err = pending.Query(ctx, batch[:0], d, d.Name); err != nil {
				return nil, err
			}
		}
		ms := batch[:0:0]
		ms = append(ms, batch...)
		for _, m := range stored[i] {
			if _, replaced := accepted[m.Name]; !replaced {
				ms = append(ms, m)
			}
		}
		batch = batch[:0]
		sort.SliceStable(ms, func(i, j int) bool {
			si, sj := ms[i].Similarity(), ms[j].Similarity()
			if si != sj {
				return si > sj
			}
			return ms[i].Name < ms[j].Name
		})
		res[i] = api.AddResult{ID: d.Name, Matches: toAPI([]api.Match{}, ms)}
		if ifNew(i) && len(ms) > 0 {
			continue
		}
		if pending != nil {
			if _, err := pending.Add(ctx, d); err != nil {
				return nil, fmt.Errorf("%w: documents[%d]: %w", ErrInput, i, err)
			}
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
		if errors.Is(err, index.ErrCollision) {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		return nil, err
	}
	b.added.Add(int64(len(commit)))
	return res, nil
}

// Query implements Backend: one index.QueryMany for the whole request.
func (b *IndexBackend) Query(ctx context.Context, docs []api.Document) ([]api.QueryResult, error) {
	qs := make([]*index.Doc, len(docs))
	for i, d := range docs {
		qs[i] = b.sketchText(d)
	}
	res := make([]api.QueryResult, len(docs))
	err := b.x.QueryMany(ctx, qs, nil, func(i int, ms []index.Match) error {
		res[i] = api.QueryResult{ID: docs[i].ID, Matches: toAPI([]api.Match{}, ms)}
		return nil
	})
	if err != nil {
		return nil, err
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
	b.removed.Add(int64(n))
	return n > 0, nil
}

// Collapse implements Backend with index.Collapser.
func (b *IndexBackend) Collapse(ctx context.Context, ids []string) (*api.CollapseResponse, error) {
	r, err := b.col.Collapse(ctx, ids)
	if err != nil {
		return nil, err
	}
	res := &api.CollapseResponse{Kept: r.Kept, Collapsed: make([]api.Collapsed, len(r.Collapsed)), Unknown: r.Unknown}
	for i, c := range r.Collapsed {
		res.Collapsed[i] = api.Collapsed{ID: c.ID, Into: c.Into}
	}
	return res, nil
}

// Stats implements Backend.
func (b *IndexBackend) Stats(ctx context.Context) (*api.Stats, error) {
	cfg := b.x.Config()
	caps := b.st.Capabilities()
	js, err := b.x.FollowState(ctx)
	if err != nil {
		return nil, err
	}
	var j *api.Journal
	if js.Following {
		j = &api.Journal{Entries: js.Entries, Bytes: js.Bytes, Rebuilds: js.Rebuilds}
	}
	return &api.Stats{
		Journal:           j,
		Sketch:            b.hdr.String(),
		LSH:               cfg.LSH.String(),
		Collapse:          collapseName(b.col.Table().Params(), b.col.Verified()),
		Threshold:         cfg.Threshold,
		Store:             b.name,
		Durable:           caps.Durable,
		Atomic:            caps.Atomic,
		Shared:            caps.Shared,
		Added:             b.added.Load(),
		Removed:           b.removed.Load(),
		Queried:           b.queried.Load(),
		CollapseDocuments: b.col.Table().Len(),
		CollapseBytes:     b.col.Table().Bytes(),
	}, nil
}

// Backup implements Backend (index.Backup). A dir that exists, or whose
// parent does not, is the client's fault.
func (b *IndexBackend) Backup(ctx context.Context, dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%w: %s already exists", ErrInput, dir)
	}
	if st, err := os.Stat(filepath.Dir(dir)); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: the parent of %s is not a directory", ErrInput, dir)
	}
	err := b.x.Backup(ctx, dir)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, index.ErrNoBackup):
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	case errors.Is(err, store.ErrFailed), ctx.Err() != nil:
		return err
	}
	return fmt.Errorf("%w: %w", ErrBackup, err)
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

// Flush records the index's fingerprint filter in the store (index.Flush),
// so that the next process opens it without a scan, and leaves a shared
// store's journal (index.ReleasePostings). Call it at shutdown, after the
// last request.
func (b *IndexBackend) Flush(ctx context.Context) error {
	if err := b.x.Flush(ctx); err != nil {
		return err
	}
	return b.x.ReleasePostings(ctx)
}

// Follow reads a shared store's journal every interval until ctx ends
// (index.FollowJournal), so that an idle server keeps its place in the
// journal and the journal stays trimmed; it does nothing for a store of
// this process alone. Errors are passed to report (nil: dropped) and
// retried at the next tick.
func (b *IndexBackend) Follow(ctx context.Context, interval time.Duration, report func(error)) {
	if !b.st.Capabilities().Shared {
		return
	}
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			if err := b.x.FollowJournal(ctx); err != nil && ctx.Err() == nil && report != nil {
				report(err)
			}
		}
	}
}
