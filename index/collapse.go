package index

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/lsh"
)

// Collapsing near-duplicates out of a ranked result list (the Bing design,
// book 6.1): each document keeps a signature of B supershingles of 16 bits
// (lsh.CollapseTable, in memory, beside the store), and a list of ids — the
// results of some search engine, best first — is reduced to its
// best-ranked member per group of documents whose signatures agree on at
// least M of B values. By default each pair the table proposes is also
// verified against the stored documents with Verify, so every collapsed
// pair is a near-duplicate at the index's threshold and the table's
// parameters lean to recall.

// CollapseOptions configure Index.NewCollapser.
type CollapseOptions struct {
	// BudgetBytes bounds the signature bytes per document (B × 2), 2..16.
	// The default is 10 when verifying (5 supershingles of 16 bits, leaning
	// to recall: with the table's 4-byte id tag, at most 16 bytes per
	// document in memory) and 12 (Bing's 6 × 16 bits) when Unverified.
	BudgetBytes int
	// Unverified collapses on the table's word alone, as Bing did: no
	// store read once the ids are in the table, parameters chosen to lean
	// to precision, and some pairs below the threshold collapse. The
	// default verifies every proposed pair (one multi-key record lookup
	// per Collapse).
	Unverified bool
	// LSH, when not nil, is the table's scheme instead of the chosen one:
	// lsh.Bing() is the book's (6.1: six supershingles of five samples,
	// 16-bit values, at least 4 of 6 agreeing). Its R×B samples must not
	// exceed the index's k, its B must be at most lsh.MaxCollapseBands,
	// and KeyBits (0: 16) at most lsh.MaxCollapseKeyBits; Seed is the
	// index's. BudgetBytes is then ignored.
	LSH *lsh.Params
}

// Collapsed is a dropped result of Collapse and the kept result it
// collapsed into.
type Collapsed struct {
	ID, Into string
}

// CollapseResult is what Collapse returns.
type CollapseResult struct {
	// Kept lists the results kept, in rank order (unknown ones included).
	Kept []string
	// Collapsed lists each dropped result, in rank order, with the kept
	// result it collapsed into (ranked before it).
	Collapsed []Collapsed
	// Unknown lists the ids the index holds no document for (or one too
	// short for a signature); they are kept and compared with nothing.
	Unknown []string
}

// Collapser collapses ranked lists of document names with a collapse
// table the index keeps up to date: once made, every Add and Remove of its
// Index puts or removes the signatures of the documents it writes. On a
// journaled shared store (store.Journaled) whose postings the index keeps
// in memory (LoadPostings), the signatures of every process's adds travel
// in the journal: loading it fills the table, and each Collapse first
// reads the journal's tail. Ids the table has not seen otherwise
// (documents stored before the Collapser was made, or written by a
// process with other table parameters) are read from the store the first
// time a Collapse meets them, in one multi-key record lookup; Load reads
// them all at once. A document replaced by another process keeps its old
// signature here until it is read again (verification always reads the
// current records). Safe for concurrent use.
type Collapser struct {
	x      *Index
	t      *lsh.CollapseTable
	verify bool

	// While a Load runs, the index's writes to the table mark their ids
	// touched, and Load leaves touched ids alone: its scan may have read
	// an older record than the one the write committed.
	loading atomic.Int32
	mu      sync.Mutex // guards touched
	touched map[uint64]struct{}
}

// NewCollapser makes the index's collapser, choosing the table's
// parameters for the index's threshold with lsh.ChooseCollapse (the
// parameter chooser and its S-curve): false negatives weighted 0.9 when
// verifying, false positives 0.8 when not; or with o.LSH's scheme. The index keeps it filled from
// then on; a second call replaces the first collapser.
func (x *Index) NewCollapser(o CollapseOptions) (*Collapser, error) {
	co := lsh.CollapseOptions{Threshold: math.Min(x.cfg.Threshold, 0.99), MaxSamples: x.cfg.Sketch.K, Seed: x.cfg.Sketch.Seed,
		BudgetBytes: o.BudgetBytes, FPWeight: 0.1, FNWeight: 0.9}
	if o.Unverified {
		co.FPWeight, co.FNWeight = 0.8, 0.2
		if co.BudgetBytes == 0 {
			co.BudgetBytes = 12
		}
	} else if co.BudgetBytes == 0 {
		co.BudgetBytes = 10
	}
	var p lsh.Params
	if o.LSH != nil {
		p = *o.LSH
		p.Seed = x.cfg.Sketch.Seed
		if p.KeyBits == 0 {
			p.KeyBits = lsh.MaxCollapseKeyBits
		}
		if p.K() > x.cfg.Sketch.K {
			return nil, fmt.Errorf("index: collapse: %w: scheme %v needs %d samples, the index's sketches have %d", lsh.ErrParams, p, p.K(), x.cfg.Sketch.K)
		}
	} else {
		ch, err := lsh.ChooseCollapse(co)
		if err != nil {
			return nil, fmt.Errorf("index: collapse: %w", err)
		}
		p = ch.Params
	}
	t, err := lsh.NewCollapseTable(p)
	if err != nil {
		return nil, fmt.Errorf("index: collapse: %w", err)
	}
	c := &Collapser{x: x, t: t, verify: !o.Unverified}
	x.collapser.Store(c)
	return c, nil
}

// collapserHook is the Index's link to its collapser (nil when none).
type collapserHook = atomic.Pointer[Collapser]

// put records d's signature (an Add of the index); a document too short
// for one becomes unknown.
func (c *Collapser) put(d *Doc) {
	id := ID(d.Name)
	if c.track(id) {
		defer c.mu.Unlock()
	}
	c.set(id, d.Sketch.Values)
}

// set puts the signature of the sketch values vs under id; values too few
// for a signature make id unknown.
func (c *Collapser) set(id uint64, vs []uint64) {
	if err := c.t.Put(id, vs); err != nil {
		c.t.Remove(id)
	}
}

// remove drops id's signature (a Remove of the index).
func (c *Collapser) remove(id uint64) {
	if c.track(id) {
		defer c.mu.Unlock()
	}
	c.t.Remove(id)
}

// putSignature records a signature read from a shared store's journal.
func (c *Collapser) putSignature(id uint64, sig []uint16) {
	if c.track(id) {
		defer c.mu.Unlock()
	}
	c.t.PutSignature(id, sig)
}

// track prepares a write of the index to id's entry: while a Load runs it
// locks c.mu, marks id touched and returns true (the caller unlocks after
// the write). A Load that starts after the check scans the store after the
// write committed, so it reads the write's record.
func (c *Collapser) track(id uint64) bool {
	if c.loading.Load() == 0 {
		return false
	}
	c.mu.Lock()
	if c.touched != nil {
		c.touched[id] = struct{}{}
	}
	return true
}

// putAll puts the documents an Add stored: of each name, its last
// occurrence in docs.
func (c *Collapser) putAll(docs []*Doc) {
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[d.Name] = i
	}
	for i, d := range docs {
		if last[d.Name] == i {
			c.put(d)
		}
	}
}

// Table returns the collapse table (its Params, Len and Bytes).
func (c *Collapser) Table() *lsh.CollapseTable { return c.t }

// Verified reports whether Collapse verifies the pairs the table proposes.
func (c *Collapser) Verified() bool { return c.verify }

// Load puts the signature of every stored document in the table (one scan
// of the records) and returns how many it holds. It may run while the
// index serves: a document added, replaced or removed during the scan
// keeps what that write put in the table, never the scan's older record.
func (c *Collapser) Load(ctx context.Context) (int, error) {
	c.mu.Lock()
	if c.loading.Add(1) == 1 {
		c.touched = map[uint64]struct{}{}
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.loading.Add(-1) == 0 {
			c.touched = nil
		}
		c.mu.Unlock()
	}()
	var d Doc
	err := c.x.st.ScanDocs(ctx, func(id uint64, rec []byte) error {
		if err := decodeDoc(rec, &d); err != nil {
			return fmt.Errorf("index: the record of id %016x: %w", id, err)
		}
		c.mu.Lock()
		if _, ok := c.touched[id]; !ok {
			c.set(id, d.Sketch.Values)
		}
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("index: loading the collapse table: %w", err)
	}
	return c.t.Len(), nil
}

// Collapse reduces a ranked list of document names (best first) to the
// best-ranked member of each near-duplicate group, and says for each
// dropped name which kept name it collapsed into (lsh.CollapseTable's
// rules: a dropped result never represents another; a name listed twice
// collapses into its first place). Store cost: at most one multi-key
// record lookup for the names the table has not seen and, when verifying,
// one for the documents of the pairs it proposes.
func (c *Collapser) Collapse(ctx context.Context, names []string) (CollapseResult, error) {
	if err := c.x.followJournal(ctx); err != nil {
		return CollapseResult{}, err
	}
	ids := make([]uint64, len(names))
	for i, n := range names {
		ids[i] = ID(n)
	}
	// The signatures are read once; those the table lacks come from the
	// store (each id once) and are read again after put.
	sigs, has := c.t.Signatures(nil, nil, ids)
	docs := map[uint64]*Doc{} // read from the store during this call
	var missing []uint64
	var mn []string
	var listed map[uint64]bool
	for i, ok := range has {
		if !ok && !listed[ids[i]] {
			if listed == nil {
				listed = map[uint64]bool{}
			}
			listed[ids[i]] = true
			missing, mn = append(missing, ids[i]), append(mn, names[i])
		}
	}
	if len(missing) > 0 {
		err := c.x.GetMany(ctx, mn, func(k int, d *Doc, ok bool) error {
			if ok {
				c.put(d)
				docs[missing[k]] = d
			}
			return nil
		})
		if err != nil {
			return CollapseResult{}, err
		}
		b := c.t.Params().B
		for i, ok := range has {
			if !ok {
				_, has[i] = c.t.Get(sigs[i*b:i*b], ids[i]) // in place
			}
		}
	}
	var verify func(i, j int) (bool, error)
	if c.verify {
		if err := c.readProposed(ctx, names, ids, sigs, has, docs); err != nil {
			return CollapseResult{}, err
		}
		verify = func(i, j int) (bool, error) {
			a, b := docs[ids[i]], docs[ids[j]]
			if a == nil || b == nil {
				return false, nil // removed meanwhile
			}
			_, ok, err := c.x.Verify(a, b)
			return ok, err
		}
	}
	into, err := c.t.CollapseSignatures(make([]int, 0, len(ids)), ids, sigs, has, verify)
	if err != nil {
		return CollapseResult{}, err
	}
	res := CollapseResult{Kept: []string{}, Collapsed: []Collapsed{}, Unknown: []string{}}
	for i, j := range into {
		switch {
		case j == lsh.Unknown:
			res.Kept = append(res.Kept, names[i])
			res.Unknown = append(res.Unknown, names[i])
		case j == i:
			res.Kept = append(res.Kept, names[i])
		default:
			res.Collapsed = append(res.Collapsed, Collapsed{ID: names[i], Into: names[j]})
		}
	}
	return res, nil
}

// readProposed reads, in one multi-key record lookup, the documents of
// every pair of distinct ids whose signatures match (a superset of the
// pairs CollapseSignatures verifies) that docs does not hold yet.
func (c *Collapser) readProposed(ctx context.Context, names []string, ids []uint64, sigs []uint16, has []bool, docs map[uint64]*Doc) error {
	need := map[uint64]int{}
	c.t.MatchingPairs(sigs, has, func(i, j int) {
		if ids[i] == ids[j] {
			return
		}
		for _, k := range [2]int{i, j} {
			if _, ok := docs[ids[k]]; !ok {
				need[ids[k]] = k
			}
		}
	})
	if len(need) == 0 {
		return nil
	}
	rn := make([]string, 0, len(need))
	rid := make([]uint64, 0, len(need))
	for id, k := range need {
		rn, rid = append(rn, names[k]), append(rid, id)
	}
	return c.x.GetMany(ctx, rn, func(k int, d *Doc, ok bool) error {
		docs[rid[k]] = d // nil when removed
		return nil
	})
}
