package index

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
)

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

// Comparison is the similarity of two documents, explained.
type Comparison struct {
	// Estimate is the sketch estimate of the (weighted) Jaccard similarity
	// and its standard error.
	Estimate sketch.Estimate
	// Exact is the exact Jaccard of the two feature sets (weighted for the
	// weighted samplers), or -1 when either side has none.
	Exact float64
	// Keys is the number of lookup keys the two share (0 when the
	// comparison did not come from a lookup or a join).
	Keys int
}

// Similarity returns the exact Jaccard when known, else the estimate.
func (c Comparison) Similarity() float64 {
	if c.Exact >= 0 {
		return c.Exact
	}
	return c.Estimate.J
}

// Verify compares two documents and reports whether they are
// near-duplicates at the index's threshold: the one verification of the
// index, used by Query, by the batch path (VerifyPairs) and by dedup. The
// similarity is the exact Jaccard of the feature sets when both documents
// have them (Doc.Features, or Doc.Weighted for weighted samplers: Σmin/Σmax),
// else the sketch estimate, accepted within Config.Slack standard errors
// (Accept). Cost: O(k) for the estimate plus O(|A|+|B|) for exact sets; no
// allocation. It fails only when the sketches' headers differ.
func (x *Index) Verify(a, b *Doc) (Comparison, bool, error) {
	est, err := sketch.Jaccard(&a.Sketch, &b.Sketch)
	if err != nil {
		return Comparison{}, false, fmt.Errorf("index: %q and %q: %w", a.Name, b.Name, err)
	}
	c := Comparison{Estimate: est, Exact: -1}
	switch {
	case a.Features != nil && b.Features != nil:
		c.Exact = exactJaccard(a, b)
	case a.Weighted != nil && b.Weighted != nil:
		c.Exact = weighted.JaccardSorted(a.Weighted, b.Weighted)
	}
	return c, x.Accept(c), nil
}

// Accept reports whether a comparison makes a match under the index's
// threshold and slack (the package-level Accept with k = Sketch.K).
func (x *Index) Accept(c Comparison) bool {
	return Accept(x.cfg.Threshold, x.cfg.Slack, x.cfg.Sketch.K, c.Similarity(), c.Exact >= 0)
}

// Match is a verified near-duplicate found by Query.
type Match struct {
	// ID is the internal id (ID(Name)).
	ID uint64
	// Name is the stored document's name.
	Name string
	Comparison
}

// Candidate is a document sharing at least one lookup key with a query.
type Candidate struct {
	ID   uint64
	Keys int // number of shared keys
}

// Candidates appends the unverified candidates of s (ids sharing a key with
// it), in increasing id order, to dst: one multi-key posting lookup (in
// memory after LoadPostings).
func (x *Index) Candidates(ctx context.Context, dst []Candidate, s *sketch.Sketch) ([]Candidate, error) {
	keys, err := x.Keys(make([]uint64, 0, x.scheme.NumKeys()), s)
	if err != nil || len(keys) == 0 {
		return dst, err
	}
	var ids []uint64
	err = x.lookupPostings(ctx, keys, func(_ int, got []uint64) error {
		ids = append(ids, got...)
		return nil
	})
	if err != nil {
		return dst, fmt.Errorf("index: candidate lookup: %w", err)
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

// Query returns the stored documents near q (its sketch, and its features
// when it has them), most similar first (ties by name), appended to dst:
// the candidates of q (one multi-key posting lookup), their records (one
// multi-key record lookup), each verified by Verify. A document stored
// under exclude (the query's own name, for a self-query) is skipped; pass
// "" to exclude nothing.
func (x *Index) Query(ctx context.Context, dst []Match, q *Doc, exclude string) ([]Match, error) {
	var skip func(uint64) bool
	if exclude != "" {
		excl := ID(exclude)
		skip = func(id uint64) bool { return id == excl }
	}
	var d stored
	dst, _, _, err := x.query(ctx, dst, nil, nil, &d, q, skip)
	return dst, err
}

// query appends the matches of q to dst, using cands, ids and d as
// scratch, and returns them with the candidates' ids it verified.
func (x *Index) query(ctx context.Context, dst []Match, cands []Candidate, ids []uint64, d *stored, q *Doc, skip func(uint64) bool) ([]Match, []Candidate, []uint64, error) {
	cands, err := x.Candidates(ctx, cands, &q.Sketch)
	if err != nil || len(cands) == 0 {
		return dst, cands, ids, err
	}
	for _, c := range cands {
		if skip == nil || !skip(c.ID) {
			ids = append(ids, c.ID)
		}
	}
	start := len(dst)
	k := 0 // position in cands
	err = x.lookupDocs(ctx, "reading candidates", ids, func(i int, rec []byte, ok bool) error {
		for cands[k].ID != ids[i] {
			k++
		}
		if !ok {
			return nil // removed between the posting read and now
		}
		if err := d.load(rec); err != nil {
			return fmt.Errorf("index: the record of id %016x: %w", ids[i], err)
		}
		c, ok, err := x.verifyStored(q, d)
		if err != nil {
			return err
		}
		if ok {
			c.Keys = cands[k].Keys
			dst = append(dst, Match{ID: ids[i], Name: d.name(), Comparison: c})
		}
		return nil
	})
	if err != nil {
		return dst[:start], cands, ids, err
	}
	res := dst[start:]
	sort.Slice(res, func(i, j int) bool {
		si, sj := res[i].Similarity(), res[j].Similarity()
		if si != sj {
			return si > sj
		}
		return res[i].Name < res[j].Name
	})
	return dst, cands, ids, nil
}

// QueryBatch queries many documents in parallel: for each qs[i] it finds
// the stored documents near it as Query does, leaving out the candidates
// skip reports (skip may be nil; it is called from several goroutines at
// once), and calls fn(i, matches, candidates) with the matches, most
// similar first, and the number of candidates verified; matches is valid
// only during the call. fn is called from one goroutine at a time, in no
// particular order of i. It stops at the first error of the store or fn.
// BatchOptions.Progress counts queries.
func (x *Index) QueryBatch(ctx context.Context, qs []*Doc, skip func(id uint64) bool, o BatchOptions, fn func(i int, matches []Match, candidates int) error) error {
	o.ensureDefaults()
	var mu sync.Mutex // guards firstErr, done, fn and Progress
	var firstErr error
	var done int64
	parallel(len(qs), o.Workers, func(lo, hi int) {
		var cands []Candidate
		var ids []uint64
		var ms []Match
		var d stored
		for i := lo; i < hi; i++ {
			mu.Lock()
			stop := firstErr != nil
			mu.Unlock()
			if stop {
				return
			}
			var err error
			ms, cands, ids, err = x.query(ctx, ms[:0], cands[:0], ids[:0], &d, qs[i], skip)
			mu.Lock()
			if err == nil {
				err = fn(i, ms, len(ids))
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
		mu.Lock()
		done += int64(hi - lo)
		if o.Progress != nil {
			o.Progress(done, int64(len(qs)))
		}
		mu.Unlock()
	})
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
