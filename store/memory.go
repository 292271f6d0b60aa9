package store

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// Memory is a Store held in maps: for tests, small jobs, and as the
// reference the conformance suite checks others against. Nothing survives
// Close. The zero value is not usable; make one with NewMemory. Safe for
// concurrent use (a read–write mutex: commits are exclusive, reads shared).
// Costs: Postings O(list length), AddPosting commit O(list length) worst
// case (sorted insert), Docs O(n log n) to order ids.
type Memory struct {
	mu       sync.RWMutex
	closed   bool
	postings map[uint64][]uint64 // sorted, unique
	docs     map[uint64][]byte
	meta     map[string][]byte
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{postings: map[uint64][]uint64{}, docs: map[uint64][]byte{}, meta: map[string][]byte{}}
}

// Postings implements Store.
func (s *Memory) Postings(_ context.Context, key uint64, dst []uint64) ([]uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return dst, ErrClosed
	}
	return append(dst, s.postings[key]...), nil
}

// Doc implements Store.
func (s *Memory) Doc(_ context.Context, id uint64, dst []byte) ([]byte, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return dst, false, ErrClosed
	}
	rec, ok := s.docs[id]
	return append(dst, rec...), ok, nil
}

// LookupPostings implements Store.
func (s *Memory) LookupPostings(ctx context.Context, keys []uint64, fn func(i int, ids []uint64) error) error {
	var ids []uint64
	for i, k := range keys {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var err error
		if ids, err = s.Postings(ctx, k, ids[:0]); err != nil {
			return err
		}
		if err := fn(i, ids); err != nil {
			return err
		}
	}
	return nil
}

// LookupDocs implements Store.
func (s *Memory) LookupDocs(ctx context.Context, ids []uint64, fn func(i int, rec []byte, ok bool) error) error {
	return lookupDocs(ctx, ids, s.Doc, fn)
}

// ScanPostings implements Store. It snapshots the postings first, so fn
// may commit to the store.
func (s *Memory) ScanPostings(ctx context.Context, fn func(key, id uint64) error) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	keys := slices.Sorted(maps.Keys(s.postings))
	lists := make([][]uint64, len(keys))
	for i, k := range keys {
		lists[i] = slices.Clone(s.postings[k])
	}
	s.mu.RUnlock()
	for i, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, id := range lists[i] {
			if err := fn(k, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// Capabilities implements Store: ordered and atomic, neither durable nor
// shared.
func (s *Memory) Capabilities() Capabilities { return Capabilities{Atomic: true, Ordered: true} }

// ScanDocs implements Store. It snapshots the ids first and reads each
// record as it goes, so fn may commit to the store.
func (s *Memory) ScanDocs(ctx context.Context, fn func(id uint64, rec []byte) error) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	ids := slices.Sorted(maps.Keys(s.docs))
	s.mu.RUnlock()
	var buf []byte
	for _, id := range ids {
		var ok bool
		var err error
		if err = ctx.Err(); err != nil {
			return err
		}
		buf, ok, err = s.Doc(ctx, id, buf[:0])
		if err != nil {
			return err
		}
		if !ok {
			continue // deleted since the snapshot
		}
		if err := fn(id, buf); err != nil {
			return err
		}
	}
	return nil
}

// Meta implements Store.
func (s *Memory) Meta(_ context.Context, name string, dst []byte) ([]byte, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return dst, false, ErrClosed
	}
	v, ok := s.meta[name]
	return append(dst, v...), ok, nil
}

// Close implements Store.
func (s *Memory) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	s.postings, s.docs, s.meta = nil, nil, nil
	return nil
}

// NewBatch implements Store.
func (s *Memory) NewBatch() Batch { return &memBatch{s: s} }

// memBatch records its writes and applies them under the store's lock at
// Commit.
type memBatch struct {
	Writes
	s      *Memory
	closed bool
}

func (b *memBatch) Close() { b.Writes, b.closed = Writes{}, true }

func (b *memBatch) Commit(ctx context.Context) error {
	if b.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for i := range b.Len() {
		op := b.Op(i)
		switch op.Kind {
		case OpAddPosting:
			l := s.postings[op.Key]
			if i, found := slices.BinarySearch(l, op.ID); !found {
				s.postings[op.Key] = slices.Insert(l, i, op.ID)
			}
		case OpRemovePosting:
			l := s.postings[op.Key]
			if i, found := slices.BinarySearch(l, op.ID); found {
				l = slices.Delete(l, i, i+1)
				if len(l) == 0 {
					delete(s.postings, op.Key)
				} else {
					s.postings[op.Key] = l
				}
			}
		case OpPutDoc:
			s.docs[op.ID] = slices.Clone(op.Value)
		case OpDeleteDoc:
			delete(s.docs, op.ID)
		case OpPutMeta:
			s.meta[op.Name] = slices.Clone(op.Value)
		case OpDeleteMeta:
			delete(s.meta, op.Name)
		}
	}
	b.Reset()
	return nil
}
