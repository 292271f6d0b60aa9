package index

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/neardup/neardup/store"
)

// AddResult counts what Add did with its documents: Added + Replaced +
// Duplicates is the number of documents given.
type AddResult struct {
	// Added is the number of ids that were not in the index.
	Added int
	// Replaced is the number of ids whose earlier document was replaced.
	Replaced int
	// Duplicates is the number of documents superseded by a later one with
	// the same name in the same call (the last one wins).
	Duplicates int
}

// Add stores docs and posts them under their keys (LSH keys, and the
// fingerprint for documents that have one) in one atomic, durable batch.
// A name already in the index is replaced: every posting of its earlier
// document that the new one does not make again is removed, its
// fingerprint's included. When a name occurs several times in docs the
// last occurrence wins and the others are counted as Duplicates; nothing
// of them is stored. Nothing is written when Add fails.
//
// Cost: one multi-key record lookup (store.LookupDocs) for the earlier
// documents, then one batch of about NumKeys+2 writes per document. From
// BulkDocs documents on, the batch is a store bulk (store.NewBulk: sorted
// and ingested as finished tables instead of one write-ahead-log record
// per posting); to add more documents than fit in memory at once, use a
// Bulk. Add fails with ErrBulkOpen while a Bulk of the index is open.
func (x *Index) Add(ctx context.Context, docs ...*Doc) (AddResult, error) {
	if len(docs) == 0 {
		return AddResult{}, nil
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if x.bulkOpen {
		return AddResult{}, ErrBulkOpen
	}
	var b store.Batch
	if len(docs) >= bulkDocs {
		b = store.NewBulk(x.st)
	} else {
		b = x.st.NewBatch()
	}
	defer b.Close()
	b, rec := x.record(b)
	res, fps, err := x.stage(ctx, b, docs, appendIDs(nil, docs), nil)
	if err != nil {
		return AddResult{}, err
	}
	if err := x.fps.add(ctx, x, b, fps); err != nil {
		return AddResult{}, err
	}
	x.noteAdded(b, docs)
	if err := b.Commit(ctx); err != nil {
		x.fps.failed()
		return AddResult{}, fmt.Errorf("index: adding %d documents: %w", res.Added+res.Replaced, err)
	}
	x.fps.committed()
	x.committed(rec)
	if c := x.collapser.Load(); c != nil {
		c.putAll(docs)
	}
	return res, nil
}

// appendIDs appends the ids of docs' names to dst.
func appendIDs(dst []uint64, docs []*Doc) []uint64 {
	for _, d := range docs {
		dst = append(dst, ID(d.Name))
	}
	return dst
}

// strictlyIncreasing reports whether every id is larger than the one
// before it.
func strictlyIncreasing(ids []uint64) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}

// stage puts the writes of adding docs, whose ids are docIDs, into b (see
// Add) and returns what they do and the fingerprints to add to the
// filter. seen, if not nil, is called with the id of every document
// staged. Called with x.wmu held. On error b holds some of the writes and
// must be discarded.
func (x *Index) stage(ctx context.Context, b store.Batch, docs []*Doc, docIDs []uint64, seen func(id uint64)) (AddResult, []uint64, error) {
	var res AddResult
	// ids holds each id once, in the order of its first occurrence, and
	// at[j] the position in docs of the last occurrence of ids[j], which
	// wins. Ids in strictly increasing order (a sorted Bulk's) are all
	// distinct: then ids is docIDs and at is not needed.
	ids, at := docIDs, []int(nil)
	if !strictlyIncreasing(docIDs) {
		last := make(map[uint64]int, len(docs))
		ids = make([]uint64, 0, len(docs))
		for i, d := range docs {
			id := docIDs[i]
			if j, ok := last[id]; ok {
				if docs[j].Name != d.Name {
					return AddResult{}, nil, fmt.Errorf("%w: %q and %q", ErrCollision, docs[j].Name, d.Name)
				}
				res.Duplicates++
			} else {
				ids = append(ids, id)
			}
			last[id] = i
		}
		at = make([]int, len(ids))
		for j, id := range ids {
			at[j] = last[id]
		}
	}
	doc := func(j int) *Doc {
		if at == nil {
			return docs[j]
		}
		return docs[at[j]]
	}
	var fps []uint64
	for j := range ids {
		if d := doc(j); d.HasFingerprint {
			fps = append(fps, d.Fingerprint)
		}
	}
	// The keys are made document by document as the records are read:
	// nothing reaches the store before Commit, so an error on the last
	// document still leaves the store untouched.
	var rec []byte
	var old Doc
	var keys, oldKeys []uint64
	err := x.lookupDocs(ctx, "reading the records to replace", ids, func(i int, prev []byte, ok bool) error {
		d := doc(i)
		var err error
		if keys, err = x.postingsOf(keys[:0], d); err != nil {
			return fmt.Errorf("index: %q: %w", d.Name, err)
		}
		if ok {
			if err := decodeDoc(prev, &old); err != nil {
				return fmt.Errorf("index: the record of %q, to be replaced: %w (Check with repair drops it)", d.Name, err)
			}
			if old.Name != d.Name {
				return fmt.Errorf("%w: %q and %q", ErrCollision, old.Name, d.Name)
			}
			if oldKeys, err = x.postingsOf(oldKeys[:0], &old); err != nil {
				return fmt.Errorf("index: the record of %q, to be replaced: %w", d.Name, err)
			}
			for _, k := range oldKeys {
				if !slices.Contains(keys, k) {
					b.RemovePosting(k, ids[i])
				}
			}
			res.Replaced++
		} else {
			res.Added++
		}
		for _, k := range keys {
			b.AddPosting(k, ids[i])
		}
		if rec, err = AppendDoc(rec[:0], d); err != nil {
			return fmt.Errorf("index: %q: %w", d.Name, err)
		}
		b.PutDoc(ids[i], rec)
		if seen != nil {
			seen(ids[i])
		}
		return nil
	})
	if err != nil {
		return AddResult{}, nil, err
	}
	return res, fps, nil
}

// Remove deletes the named documents and all their postings in one atomic
// batch, and returns how many existed. Names not in the index are ignored.
func (x *Index) Remove(ctx context.Context, names ...string) (int, error) {
	seen := make(map[uint64]bool, len(names))
	ids := make([]uint64, 0, len(names))
	for _, name := range names {
		if id := ID(name); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if x.bulkOpen {
		return 0, ErrBulkOpen
	}
	b, rec := x.record(x.st.NewBatch())
	defer b.Close()
	var d Doc
	var keys []uint64
	n := 0
	err := x.lookupDocs(ctx, "reading the records to remove", ids, func(i int, rec []byte, ok bool) error {
		if !ok {
			return nil
		}
		if err := decodeDoc(rec, &d); err != nil {
			return fmt.Errorf("index: the record of id %016x, to be removed: %w (Check with repair drops it)", ids[i], err)
		}
		var err error
		if keys, err = x.postingsOf(keys[:0], &d); err != nil {
			return fmt.Errorf("index: the record of %q, to be removed: %w", d.Name, err)
		}
		for _, k := range keys {
			b.RemovePosting(k, ids[i])
		}
		b.DeleteDoc(ids[i])
		n++
		return nil
	})
	if err != nil {
		return 0, err
	}
	x.noteRemoved(b, ids)
	if err := b.Commit(ctx); err != nil {
		return 0, fmt.Errorf("index: removing %d documents: %w", n, err)
	}
	x.committed(rec)
	if c := x.collapser.Load(); c != nil {
		for _, id := range ids {
			c.remove(id)
		}
	}
	return n, nil
}

// Get returns the stored document with the given name.
func (x *Index) Get(ctx context.Context, name string) (*Doc, bool, error) {
	rec, ok, err := x.st.Doc(ctx, ID(name), nil)
	if err != nil || !ok {
		return nil, false, err
	}
	d := new(Doc)
	if err := decodeDoc(rec, d); err != nil {
		return nil, false, fmt.Errorf("index: the record of %q: %w", name, err)
	}
	if d.Name != name {
		return nil, false, nil // another name with the same id (ErrCollision's case)
	}
	return d, true, nil
}

// Flush records the fingerprint filter in the store, so that the next Open
// reads it instead of rebuilding it from the records. Call it after a run
// of Adds (dedup does at its end, a server at shutdown); an index that is
// not flushed stays correct, and its next user rebuilds the filter (one
// scan of the records).
func (x *Index) Flush(ctx context.Context) error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	return x.fps.flush(ctx, x)
}

// ErrNoBackup is returned by Backup for a store that cannot copy itself
// while in use (Redis: its own persistence, RDB snapshots or the AOF,
// is the backup).
var ErrNoBackup = errors.New("index: this store cannot be backed up by neardup (a Redis index is backed up by Redis's own persistence: BGSAVE's RDB file or the AOF)")

// Backup writes a consistent copy of the index into dir, which must not
// exist, while the index is in use: the store's checkpoint
// (store.Checkpointer; Pebble hard-links its tables, so it takes about
// the time of a flush, not of a copy). The index's writes wait for it;
// lookups do not. The fingerprint filter is recorded first (as Flush),
// so the copy opens without a scan. Open the copy with store.OpenPebble
// or make a working store of it with store.RestorePebble.
func (x *Index) Backup(ctx context.Context, dir string) error {
	cp, ok := x.st.(store.Checkpointer)
	if !ok {
		return ErrNoBackup
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if x.bulkOpen {
		return ErrBulkOpen
	}
	if err := x.fps.flush(ctx, x); err != nil {
		return err
	}
	if err := cp.Checkpoint(ctx, dir); err != nil {
		return fmt.Errorf("index: backup: %w", err)
	}
	return nil
}
