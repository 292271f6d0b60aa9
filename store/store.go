// Package store provides the persistent side of the near-duplicate index:
// posting lists from 64-bit lookup keys to document ids, document records by
// id, and small named metadata values, behind one Store interface with an
// in-memory implementation and an embedded, crash-safe Pebble one.
//
// The interface is deliberately plain key/value plus set semantics, so any
// store that can do "add id to the set under key", "get the set under key",
// "put/get a record by id" and "apply a group of those atomically" can back
// it: Memory (tests, small jobs), Pebble (the default, a directory on disk;
// github.com/cockroachdb/pebble/v2 configured for this workload: a block
// cache sized net of the memtables Pebble charges to it, one key per
// posting so adds and removes are blind writes, prefix Bloom filters on
// every level consulted by prefix seeks on reused iterators), and a Redis
// backend later (SADD / SMEMBERS, SET / GET, MULTI/EXEC). Writes go
// through a Batch whose Commit is atomic and, for persistent stores,
// durable when it returns: an acknowledged batch survives a kill -9
// (DESIGN.md "nothing lost"). The lookup keys are lsh keys (book 3.1, 6.1:
// one posting table per m-of-b combination, folded into one key space by
// hashing the combination index into the key).
//
// This package is not an index: it knows nothing of sketches, similarity or
// verification (package index does), and it does not interpret records.
// The storetest subpackage holds the conformance suite every implementation
// must pass.
package store

import "errors"

// Errors returned by stores.
var (
	// ErrClosed is returned by operations on a closed store or batch.
	ErrClosed = errors.New("store: closed")
	// ErrFormat is returned when a directory holds a store of another format.
	ErrFormat = errors.New("store: incompatible format")
	// ErrCorrupt marks a value that does not decode.
	ErrCorrupt = errors.New("store: corrupt value")
)

// Store maps lookup keys to sets of document ids, ids to document records,
// and names to metadata values. Implementations are safe for concurrent use
// by many goroutines; a write is visible to readers once its batch's Commit
// has returned. Slices returned by lookups are appended to the caller's dst
// and owned by the caller.
type Store interface {
	// Postings appends to dst the ids posted under key, in increasing order,
	// each once. A key never written yields no ids and no error.
	Postings(key uint64, dst []uint64) ([]uint64, error)
	// Doc appends the record stored under id to dst and reports whether it
	// exists.
	Doc(id uint64, dst []byte) ([]byte, bool, error)
	// Docs calls fn for every document in increasing id order. rec is valid
	// only during the call. fn may read the store and commit batches; the
	// iteration sees the documents committed before Docs was called, and
	// may or may not see later ones. An error from fn stops the iteration
	// and is returned.
	Docs(fn func(id uint64, rec []byte) error) error
	// Meta appends the metadata value stored under name to dst and reports
	// whether it exists (for example the sketch header and lsh parameters
	// an index was built with).
	Meta(name string, dst []byte) ([]byte, bool, error)
	// NewBatch returns an empty batch of writes.
	NewBatch() Batch
	// Close releases the store. Committed batches are already durable.
	Close() error
}

// Batch collects writes to apply atomically. Within a batch, later writes
// to the same posting, document or name win. A Batch is not safe for
// concurrent use; use one per goroutine. Its methods copy their arguments.
type Batch interface {
	// AddPosting adds id to the set under key (a no-op if present).
	AddPosting(key, id uint64)
	// RemovePosting removes id from the set under key (a no-op if absent).
	RemovePosting(key, id uint64)
	// PutDoc stores rec as the record of id, replacing any previous one.
	PutDoc(id uint64, rec []byte)
	// DeleteDoc removes the record of id.
	DeleteDoc(id uint64)
	// PutMeta stores a metadata value under name.
	PutMeta(name string, value []byte)
	// Len returns the number of writes collected since the last Commit.
	Len() int
	// Commit applies the writes atomically (all or none are ever visible,
	// also after a crash) and returns once they are durable. The batch is
	// then empty and may be reused.
	Commit() error
	// Close discards uncommitted writes and releases the batch.
	Close()
}

// Compacter is implemented by stores that benefit from a full compaction
// after a bulk build (Pebble: all postings end in one level, a lookup is
// one prefix seek whose Bloom filter answers misses, and removed postings
// are dropped). Call it through Compact.
type Compacter interface {
	Compact() error
}

// Compact compacts s if it implements Compacter, and does nothing
// otherwise.
func Compact(s Store) error {
	if c, ok := s.(Compacter); ok {
		return c.Compact()
	}
	return nil
}
