package index

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

// CheckReport is what Check found (and, with repair, fixed).
type CheckReport struct {
	// Docs and Postings are the records and postings read.
	Docs, Postings int64
	// Identities is the number of records with an identity fingerprint
	// (the exact-fingerprint table: each is posted under its key, which
	// the postings check, and held by the recorded Bloom filter, which
	// Check tests); Legacy the number with only the public 64-bit
	// fingerprint of a release before identity keys, which identifies
	// nothing (Index.Upgraded). Neither is a problem.
	Identities, Legacy int64
	// Corrupt is the number of records that do not decode (or are stored
	// under an id that is not their name's). Repair deletes them: Lost
	// counts the documents so lost.
	Corrupt, Lost int64
	// Stale is the number of postings whose id has no record that makes
	// them (a document replaced or removed without them, or lost). Repair
	// removes them.
	Stale int64
	// Missing is the number of postings a record makes that the store
	// lacks. Repair adds them.
	Missing int64
	// Metadata is the number of unreadable or obsolete metadata values
	// (the fingerprint filter, the filter of earlier releases). Repair
	// deletes them; the filter is then rebuilt from the records.
	Metadata int64
	// Repaired reports that the problems above were fixed.
	Repaired bool
	// Problems describes the first problems found, one line each.
	Problems []string
}

// OK reports whether the index had no problem.
func (r *CheckReport) OK() bool {
	return r.Corrupt == 0 && r.Stale == 0 && r.Missing == 0 && r.Metadata == 0
}

const maxProblems = 20

func (r *CheckReport) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// Check walks the whole store and verifies the index: every record
// decodes, is stored under its name's id and has the index's sketch
// header; every posting (LSH key or fingerprint) points at a record that
// makes it; every posting a record makes is there; the fingerprint filter
// decodes. With repair it deletes the records it cannot read (and counts
// the documents lost), removes stale postings, adds missing ones and drops
// bad metadata, committing as it goes. Check holds off Add, Remove and
// Flush while it runs. Memory: 8 bytes and one bit per posting the records
// make; cost: one scan of the records and one of the postings (and, to add
// missing postings, a second scan of the records).
func (x *Index) Check(ctx context.Context, repair bool) (CheckReport, error) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	var r CheckReport
	w := &repairer{x: x, st: x.st, on: repair}
	defer w.close()

	// Records: each must decode; collect the postings they make.
	var expected []uint64 // posting hashes
	var idKeys []uint64   // the identity fingerprints' keys
	var d Doc
	var keys []uint64
	err := x.st.ScanDocs(ctx, func(id uint64, rec []byte) error {
		r.Docs++
		bad := func(why error) error {
			r.Corrupt++
			r.problem("record %016x: %v", id, why)
			if repair {
				r.Lost++
				return w.do(ctx, func(b store.Batch) { b.DeleteDoc(id) })
			}
			return nil
		}
		if err := decodeDoc(rec, &d); err != nil {
			return bad(err)
		}
		if ID(d.Name) != id {
			return bad(fmt.Errorf("%w: name %q is not this id's", ErrCorrupt, d.Name))
		}
		var err error
		if keys, err = x.postingsOf(keys[:0], &d); err != nil {
			return bad(err)
		}
		for _, k := range keys {
			expected = append(expected, postingHash(k, id))
		}
		if d.HasFingerprint {
			r.Identities++
			idKeys = append(idKeys, idKey(d.Fingerprint))
		}
		if d.hasLegacy {
			r.Legacy++
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("index: check: scanning records: %w", err)
	}
	slices.Sort(expected)
	expected = slices.Compact(expected)
	found := make([]bool, len(expected))

	// Postings: each must be made by its record.
	err = x.st.ScanPostings(ctx, func(key, id uint64) error {
		r.Postings++
		if i, ok := slices.BinarySearch(expected, postingHash(key, id)); ok {
			found[i] = true
			return nil
		}
		r.Stale++
		r.problem("posting %016x -> %016x: no record makes it", key, id)
		return w.do(ctx, func(b store.Batch) { b.RemovePosting(key, id) })
	})
	if err != nil {
		return r, fmt.Errorf("index: check: scanning postings: %w", err)
	}
	for _, f := range found {
		if !f {
			r.Missing++
		}
	}
	if r.Missing > 0 {
		r.problem("%d postings of stored records are missing", r.Missing)
		if repair {
			if err := x.addMissing(ctx, w, expected, found); err != nil {
				return r, err
			}
		}
	}
	if err := x.checkMeta(ctx, &r, w, idKeys); err != nil {
		return r, err
	}
	if err := w.flush(ctx); err != nil {
		return r, err
	}
	r.Repaired = repair && !r.OK()
	if r.Repaired {
		// The filter in memory may predate the repair: reload it.
		x.fps.reset()
	}
	return r, nil
}

// postingHash identifies a posting in Check's set (a collision, 2^-64 per
// pair of postings, could hide one stale posting).
func postingHash(key, id uint64) uint64 { return rng.Hash2(0x636865636b, key, id) } // "check"

// addMissing rescans the records and adds the postings not found.
func (x *Index) addMissing(ctx context.Context, w *repairer, expected []uint64, found []bool) error {
	var d Doc
	var keys []uint64
	err := x.st.ScanDocs(ctx, func(id uint64, rec []byte) error {
		if decodeDoc(rec, &d) != nil || ID(d.Name) != id {
			return nil
		}
		var err error
		if keys, err = x.postingsOf(keys[:0], &d); err != nil {
			return nil
		}
		for _, k := range keys {
			if i, ok := slices.BinarySearch(expected, postingHash(k, id)); ok && !found[i] {
				found[i] = true
				if err := w.do(ctx, func(b store.Batch) { b.AddPosting(k, id) }); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: check: adding missing postings: %w", err)
	}
	return nil
}

// checkMeta checks the fingerprint filter — it decodes and, unless the
// marker says it is being rebuilt, holds every identity's key (idKeys) —
// and the metadata of earlier releases.
func (x *Index) checkMeta(ctx context.Context, r *CheckReport, w *repairer, idKeys []uint64) error {
	_, dirty, err := x.st.Meta(ctx, dirtyMeta, nil)
	if err != nil {
		return fmt.Errorf("index: check: %w", err)
	}
	if raw, ok, err := x.st.Meta(ctx, filterMeta, nil); err != nil {
		return fmt.Errorf("index: check: %w", err)
	} else if ok {
		var f filter
		head, chunked, err := parseChunkHead(raw)
		switch {
		case err != nil:
		case chunked && dirty:
			// Chunks being rewritten by a Flush that did not finish:
			// stale, and rebuilt on opening; nothing to read.
		default:
			if raw, err = readFilterValue(ctx, x.st, raw); err == nil {
				err = f.decode(raw)
			} else if !errors.Is(err, ErrCorrupt) {
				return fmt.Errorf("index: check: %w", err)
			}
		}
		if err == nil && !dirty {
			missed := 0
			for _, k := range idKeys {
				if !f.bf.test(k) {
					missed++
				}
			}
			if missed > 0 {
				err = fmt.Errorf("misses %d of the %d identity fingerprints (a lookup would miss an identical document)", missed, len(idKeys))
			}
		}
		if err != nil {
			r.Metadata++
			r.problem("%s: %v", filterMeta, err)
			if err := w.do(ctx, func(b store.Batch) {
				b.DeleteMeta(filterMeta)
				for i := range head.chunks {
					b.DeleteMeta(filterChunkName(i))
				}
				b.PutMeta(dirtyMeta, []byte{1})
			}); err != nil {
				return err
			}
		}
	}
	if _, ok, err := x.st.Meta(ctx, legacyFilterMeta, nil); err != nil {
		return fmt.Errorf("index: check: %w", err)
	} else if ok {
		r.Metadata++
		r.problem("%s: the fingerprint filter of an earlier release (its postings are not trusted)", legacyFilterMeta)
		return w.do(ctx, func(b store.Batch) { b.DeleteMeta(legacyFilterMeta) })
	}
	return nil
}

// repairer batches repairs when on, and does nothing otherwise.
type repairer struct {
	x  *Index
	st store.Store
	on bool
	b  store.Batch
}

func (w *repairer) do(ctx context.Context, fn func(store.Batch)) error {
	if !w.on {
		return nil
	}
	if w.b == nil {
		w.b = w.st.NewBatch()
		w.x.dropPostings() // repairs do not reach the in-memory postings
	}
	fn(w.b)
	if w.b.Len() >= 4096 {
		return w.flush(ctx)
	}
	return nil
}

func (w *repairer) flush(ctx context.Context) error {
	if w.b == nil || w.b.Len() == 0 {
		return nil
	}
	if err := w.b.Commit(ctx); err != nil {
		return fmt.Errorf("index: check: repairing: %w", err)
	}
	return nil
}

func (w *repairer) close() {
	if w.b != nil {
		w.b.Close()
	}
}
