package index

import (
	"context"
	"fmt"
	"slices"
	"sort"
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
// record decoded once however many queries share it. skip(i, id) leaves id
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
	type hit struct {
		q  int32
		id uint64
	}
	var hits []hit
	if len(keys) > 0 {
		err := x.lookupPostings(ctx, keys, func(k int, ids []uint64) error {
			q := owner[k]
			for _, id := range ids {
				if skip == nil || !skip(int(q), id) {
					hits = append(hits, hit{q, id})
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("index: candidate lookup: %w", err)
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.q != b.q {
			return int(a.q - b.q)
		}
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	// The union of the candidates, each read and decoded once.
	ids := make([]uint64, 0, len(hits))
	for _, h := range hits {
		ids = append(ids, h.id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	docs := make([]Doc, len(ids))
	found := make([]bool, len(ids))
	if len(ids) > 0 {
		err := x.lookupDocs(ctx, "reading candidates", ids, func(i int, rec []byte, ok bool) error {
			if !ok {
				return nil // removed between the posting read and now
			}
			if err := decodeDoc(rec, &docs[i]); err != nil {
				return fmt.Errorf("index: the record of id %016x: %w", ids[i], err)
			}
			found[i] = true
			return nil
		})
		if err != nil {
			return err
		}
	}
	var ms []Match
	h := 0
	for i, q := range qs {
		ms = ms[:0]
		for h < len(hits) && int(hits[h].q) == i {
			e := h
			for e < len(hits) && hits[e] == hits[h] {
				e++
			}
			j, _ := slices.BinarySearch(ids, hits[h].id)
			if found[j] {
				c, ok, err := x.Verify(q, &docs[j])
				if err != nil {
					return err
				}
				if ok {
					c.Keys = e - h
					ms = append(ms, Match{ID: ids[j], Name: docs[j].Name, Comparison: c})
				}
			}
			h = e
		}
		sort.Slice(ms, func(a, b int) bool {
			sa, sb := ms[a].Similarity(), ms[b].Similarity()
			if sa != sb {
				return sa > sb
			}
			return ms[a].Name < ms[b].Name
		})
		if err := fn(i, ms); err != nil {
			return err
		}
	}
	return nil
}

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
