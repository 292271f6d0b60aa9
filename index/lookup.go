package index

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// This file holds the request-sized read paths: a whole request of queries
// or names costs a fixed number of store round trips (one multi-key
// posting lookup, one multi-key record lookup), however many documents it
// carries — what a service over a network store (Redis) needs, where a
// round trip costs more than the work.

// QueryMany finds the stored documents near each of qs as Query does, with
// two store round trips for the whole batch: one multi-key posting lookup
// (store.LookupPostings, or the in-memory postings after LoadPostings:
// then no round trip, or one read of a shared store's journal) for the
// keys of every query, then one multi-key
// record lookup (store.LookupDocs) for the union of their candidates, each
// record read once and verified in place against every query that shares
// it (no feature set decoded for a version 3 record). skip(i, id) leaves id
// out of qs[i]'s candidates (skip may be nil). fn(i, matches) is called
// for every i in increasing order with qs[i]'s matches, most similar first
// (ties by name); matches is valid only during the call. An error from fn
// stops QueryMany and is returned.
func (x *Index) QueryMany(ctx context.Context, qs []*Doc, skip func(i int, id uint64) bool, fn func(i int, matches []Match) error) error {
	// The keys of every query, back to back; owner[k] is the query of key k.
	var keys []uint64
	var owner []int32
	for i, q := range qs {
		n := len(keys)
		var err error
		if keys, err = x.Keys(keys, &q.Sketch); err != nil {
			return fmt.Errorf("index: query %d (%q): %w", i, q.Name, err)
		}
		for range len(keys) - n {
			owner = append(owner, int32(i))
		}
	}
	// (query, id) pairs, one per shared key.
	sc := queryScratchPool.Get().(*queryScratch)
	defer queryScratchPool.Put(sc)
	hits := sc.hits[:0]
	if len(keys) > 0 {
		err := x.lookupPostings(ctx, keys, func(k int, ids []uint64) error {
			q := owner[k]
			for _, id := range ids {
				if skip == nil || !skip(int(q), id) {
					hits = append(hits, queryHit{id: id, q: q, keys: 1})
				}
			}
			return nil
		})
		if err != nil {
			sc.hits = hits
			return fmt.Errorf("index: candidate lookup: %w", err)
		}
	}
	// By (id, query), one entry per pair with the number of keys it
	// shares: the record of each candidate is read and prepared once, and
	// verified against every query that has it (no record is kept beyond
	// its callback).
	slices.SortFunc(hits, func(a, b queryHit) int {
		if a.id != b.id {
			if a.id < b.id {
				return -1
			}
			return 1
		}
		return int(a.q - b.q)
	})
	pairs := hits[:0]
	for _, h := range hits {
		if n := len(pairs); n > 0 && pairs[n-1].id == h.id && pairs[n-1].q == h.q {
			pairs[n-1].keys++
			continue
		}
		pairs = append(pairs, h)
	}
	sc.hits = hits
	ids := sc.ids[:0]
	for _, p := range pairs {
		if n := len(ids); n == 0 || ids[n-1] != p.id {
			ids = append(ids, p.id)
		}
	}
	sc.ids = ids
	found := sc.found[:0]
	if len(ids) > 0 {
		p := 0 // position in pairs
		err := x.lookupDocs(ctx, "reading candidates", ids, func(i int, rec []byte, ok bool) error {
			for pairs[p].id != ids[i] {
				p++
			}
			if !ok {
				return nil // removed between the posting read and now
			}
			if err := sc.rec.load(rec); err != nil {
				return fmt.Errorf("index: the record of id %016x: %w", ids[i], err)
			}
			name := ""
			for ; p < len(pairs) && pairs[p].id == ids[i]; p++ {
				c, ok, err := x.verifyStored(qs[pairs[p].q], &sc.rec)
				if err != nil {
					return err
				}
				if ok {
					if name == "" {
						name = sc.rec.name()
					}
					c.Keys = int(pairs[p].keys)
					found = append(found, queryMatch{q: pairs[p].q, m: Match{ID: ids[i], Name: name, Comparison: c}})
				}
			}
			return nil
		})
		sc.found = found
		if err != nil {
			return err
		}
	}
	// Each query's matches, most similar first, ties by name.
	slices.SortFunc(found, func(a, b queryMatch) int {
		if a.q != b.q {
			return int(a.q - b.q)
		}
		sa, sb := a.m.Similarity(), b.m.Similarity()
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return strings.Compare(a.m.Name, b.m.Name)
	})
	ms := sc.ms[:0]
	f := 0
	for i := range qs {
		ms = ms[:0]
		for ; f < len(found) && int(found[f].q) == i; f++ {
			ms = append(ms, found[f].m)
		}
		if err := fn(i, ms); err != nil {
			sc.ms = ms
			return err
		}
	}
	clear(found) // drop the names
	clear(ms)
	sc.ms = ms
	return nil
}

// queryHit is a candidate id of a query; keys counts the lookup keys they
// share once the hits are merged.
type queryHit struct {
	id   uint64
	q    int32
	keys int32
}

// queryMatch is a verified match of query q.
type queryMatch struct {
	q int32
	m Match
}

// queryScratch is QueryMany's reused memory.
type queryScratch struct {
	hits  []queryHit
	ids   []uint64
	found []queryMatch
	ms    []Match
	rec   stored
}

var queryScratchPool = sync.Pool{New: func() any { return new(queryScratch) }}

// GetMany reads the stored documents named names in one multi-key record
// lookup and calls fn(i, d, ok) for every i in increasing order: d is the
// document named names[i] (the caller may keep it), ok false when there is
// none. An error from fn stops GetMany and is returned.
func (x *Index) GetMany(ctx context.Context, names []string, fn func(i int, d *Doc, ok bool) error) error {
	if len(names) == 0 {
		return nil
	}
	ids := make([]uint64, len(names))
	for i, n := range names {
		ids[i] = ID(n)
	}
	return x.lookupDocs(ctx, "reading documents", ids, func(i int, rec []byte, ok bool) error {
		if !ok {
			return fn(i, nil, false)
		}
		d := new(Doc)
		if err := decodeDoc(rec, d); err != nil {
			return fmt.Errorf("index: the record of %q: %w", names[i], err)
		}
		if d.Name != names[i] {
			return fn(i, nil, false) // another name with the same id (ErrCollision's case)
		}
		return fn(i, d, true)
	})
}
