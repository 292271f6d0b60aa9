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
// cache sized net of the memtables Pebble charges to it, one key per posting
// so adds and removes are blind writes, prefix Bloom filters on every level
// consulted by prefix seeks on reused iterators), and Redis or Redis Cluster
// (subpackage redis: sets, hashes, pipelined batches; shared by many
// servers). Writes go through a Batch whose
// Commit is atomic and, for persistent stores, durable when it returns: an
// acknowledged batch survives a kill -9 (nothing acknowledged is lost). The
// lookup keys are lsh keys (Manasse, "On the Efficient Determination of Most
// Near Neighbors" (the book) 3.1, 6.1: one posting table per m-of-b
// combination, folded into one key space by hashing the combination index
// into the key).
//
// This package is not an index: it knows nothing of sketches, similarity or
// verification (package index does), and it does not interpret records.
// The storetest subpackage holds the conformance suite every implementation
// must pass.
package store

import "context"

// Store maps lookup keys to sets of document ids, ids to document records,
// and names to metadata values. Implementations are safe for concurrent use
// by many goroutines; a write is visible to readers once its batch's Commit
// has returned. Slices returned by lookups are appended to the caller's dst
// and owned by the caller. Every method that may wait on I/O takes a
// context: a network store gives up when it is done, an embedded one checks
// it between steps of long operations (scans, multi-key lookups).
//
// What a store guarantees beyond that is stated by Capabilities, so that
// callers never assume an ordering or a durability a store does not give.
type Store interface {
	// Postings appends to dst the ids posted under key, each once (in
	// increasing order when Capabilities().Ordered). A key never written
	// yields no ids and no error.
	Postings(ctx context.Context, key uint64, dst []uint64) ([]uint64, error)
	// LookupPostings calls fn(i, ids) with the ids posted under keys[i],
	// for every i in increasing order, as Postings would return them; ids
	// is valid only during the call. It is one round trip for a network
	// store and one iterator for an embedded one. An error from fn stops
	// the lookup and is returned.
	LookupPostings(ctx context.Context, keys []uint64, fn func(i int, ids []uint64) error) error
	// Doc appends the record stored under id to dst and reports whether it
	// exists.
	Doc(ctx context.Context, id uint64, dst []byte) ([]byte, bool, error)
	// LookupDocs calls fn(i, rec, ok) with the record of ids[i] (ok false
	// when there is none), for every i in increasing order; rec is valid
	// only during the call. An error from fn stops the lookup and is
	// returned.
	LookupDocs(ctx context.Context, ids []uint64, fn func(i int, rec []byte, ok bool) error) error
	// ScanDocs calls fn for every document (in increasing id order when
	// Capabilities().Ordered). rec is valid only during the call. fn may
	// read the store and commit batches; the scan sees the documents
	// committed before ScanDocs was called, and may or may not see later
	// ones. An error from fn stops the scan and is returned.
	ScanDocs(ctx context.Context, fn func(id uint64, rec []byte) error) error
	// ScanPostings calls fn for every posting (key, id), in increasing
	// (key, id) order when Capabilities().Ordered, with the same
	// visibility rules as ScanDocs. It serves checks and repairs (every
	// posting must point at a document that posts it), not queries.
	ScanPostings(ctx context.Context, fn func(key, id uint64) error) error
	// Meta appends the metadata value stored under name to dst and reports
	// whether it exists (for example the configuration an index was built
	// with).
	Meta(ctx context.Context, name string, dst []byte) ([]byte, bool, error)
	// NewBatch returns an empty batch of writes.
	NewBatch() Batch
	// Capabilities describes what the store guarantees.
	Capabilities() Capabilities
	// Close releases the store. Committed batches are already durable when
	// Capabilities().Durable.
	Close() error
}

// Capabilities are the guarantees of a Store beyond the interface's
// contract. The zero value promises nothing beyond it.
type Capabilities struct {
	// Durable: a batch whose Commit returned survives a crash of the
	// process (kill -9) and, for a local store, of the machine.
	Durable bool
	// Atomic: a batch is applied all or nothing, also across a crash.
	Atomic bool
	// Ordered: Postings and LookupPostings yield ids in increasing order,
	// ScanDocs goes in increasing id order and ScanPostings in increasing
	// (key, id) order.
	Ordered bool
	// Shared: several processes may use the store at once and see each
	// other's commits (a server such as Redis). An unshared store is
	// locked by the process that opened it.
	Shared bool
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
	// DeleteMeta removes the metadata value under name.
	DeleteMeta(name string)
	// Len returns the number of writes collected since the last Commit.
	Len() int
	// Commit applies the writes (atomically when Capabilities().Atomic:
	// all or none are ever visible, also after a crash) and returns once
	// they are durable (when Capabilities().Durable). The batch is then
	// empty and may be reused. A failed Commit leaves the batch's writes
	// unapplied or, for a non-atomic store, partly applied; the caller
	// reports the error and does not acknowledge them.
	Commit(ctx context.Context) error
	// Close discards uncommitted writes and releases the batch.
	Close()
}

// Compacter is implemented by stores that benefit from a full compaction
// after a bulk build (Pebble: all postings end in one level, a lookup is
// one prefix seek whose Bloom filter answers misses, and removed postings
// are dropped). Call it through Compact.
type Compacter interface {
	Compact(ctx context.Context) error
}

// Compact compacts s if it implements Compacter, and does nothing
// otherwise.
func Compact(ctx context.Context, s Store) error {
	if c, ok := s.(Compacter); ok {
		return c.Compact(ctx)
	}
	return nil
}

// Bulker is implemented by stores that apply a large set of writes faster
// in one piece than through batches of ordinary size (Pebble: sorted in
// memory and in runs on disk, then written as finished tables and
// ingested, instead of one write-ahead-log record and memtable insert per
// posting that compactions rewrite again). Reach it through NewBulk.
type Bulker interface {
	// NewBulk returns an empty bulk: a Batch with a Batch's semantics
	// (Commit applies every write atomically, later writes win, durable
	// when Commit returns if the store is Durable), meant for many
	// writes (a whole build, millions of postings) rather than a few.
	NewBulk() Batch
}

// NewBulk returns a batch for a large set of writes: s.NewBulk() if s
// implements Bulker, and s.NewBatch() otherwise. Small online additions
// should use NewBatch, which keeps the write-ahead-log path.
func NewBulk(s Store) Batch {
	if b, ok := s.(Bulker); ok {
		return b.NewBulk()
	}
	return s.NewBatch()
}

// SortedBulker is implemented by stores whose bulk writes records faster
// when they come in increasing id order (Pebble: straight into finished
// tables, with no buffer, sort or run on disk). Reach it through
// NewSortedBulk.
type SortedBulker interface {
	// NewSortedBulk returns an empty bulk (as Bulker's) whose PutDoc and
	// DeleteDoc calls must come in strictly increasing id order between
	// two Commits; a call out of order fails the bulk (its Commit returns
	// the error and applies nothing). Other writes come in any order.
	NewSortedBulk() Batch
}

// NewSortedBulk returns NewBulk's batch for writes whose records come in
// strictly increasing id order (see SortedBulker): s.NewSortedBulk() if s
// implements SortedBulker, else NewBulk(s).
func NewSortedBulk(s Store) Batch {
	if b, ok := s.(SortedBulker); ok {
		return b.NewSortedBulk()
	}
	return NewBulk(s)
}

// Journaled is implemented by shared stores that log the posting writes of
// every committed batch, in commit order (store/redis: a Redis stream
// written in the batch's own MULTI/EXEC), with notes the batch's writer
// adds (JournalBatch). A process that keeps the postings in memory
// (index.LoadPostings) follows the journal: it joins it (FollowJournal),
// then scans the postings, then reads the journal from its position and
// before each lookup reads the tail, so it sees what the other processes
// commit. The journal is bounded: each follower records how far it has
// read (AckJournal, a heartbeat), and the entries every live follower has
// read are trimmed; a follower silent for longer than the store's expiry
// stops counting, and when it comes back its position may be gone
// (ErrJournalTrimmed): it rebuilds from the postings themselves.
type Journaled interface {
	// FollowJournal registers reader (a name unique to the process) as a
	// follower at the journal's current end and returns that position.
	// The state of the postings scanned after FollowJournal returns,
	// with the journal read from the position applied over it, is the
	// store's current state (a write both scanned and read is applied
	// twice, which adds and removes of postings bear).
	FollowJournal(ctx context.Context, reader string) (string, error)
	// ReadJournal calls fn with every posting write (note nil; add true
	// for AddPosting, false for RemovePosting) and every note (note not
	// nil, key and id 0) of the batches committed after position after
	// (a position returned by FollowJournal or ReadJournal, or "" for the
	// start of what the journal holds), in commit order, and returns the
	// position of the last batch read (after itself when there is none).
	// What it returns is complete only for a follower whose registration
	// holds (AckJournal). note is valid only during the call. An error
	// from fn stops the read and is returned; the writes of a batch are
	// then partly delivered.
	ReadJournal(ctx context.Context, after string, fn func(key, id uint64, add bool, note []byte) error) (string, error)
	// AckJournal records that reader has applied everything up to pos
	// and is alive (a heartbeat), and trims the entries every live
	// follower has read. It fails with ErrJournalTrimmed when reader was
	// no longer registered (dropped as expired: entries after pos may be
	// gone; the reader rebuilds). A follower calls it, before reading,
	// well within the expiry (every second or so).
	AckJournal(ctx context.Context, reader, pos string) error
	// LeaveJournal unregisters reader, so it no longer holds entries.
	LeaveJournal(ctx context.Context, reader string) error
	// JournalSize reports the journal's entries and the bytes it takes
	// in the store (-1 when the store does not say).
	JournalSize(ctx context.Context) (entries, bytes int64, err error)
}

// JournalBatch is implemented by the batches of a Journaled store.
type JournalBatch interface {
	Batch
	// Note adds an opaque note to the batch's journal entry, delivered to
	// readers after the batch's posting writes (package index logs the
	// collapse signatures of the documents a batch adds).
	Note(note []byte)
}

// lookupDocs serves LookupDocs with one Doc per id, for stores whose point
// reads cost no round trip; it checks ctx every 64 ids.
func lookupDocs(ctx context.Context, ids []uint64, doc func(context.Context, uint64, []byte) ([]byte, bool, error), fn func(i int, rec []byte, ok bool) error) error {
	var rec []byte
	for i, id := range ids {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var ok bool
		var err error
		if rec, ok, err = doc(ctx, id, rec[:0]); err != nil {
			return err
		}
		if err := fn(i, rec, ok); err != nil {
			return err
		}
	}
	return nil
}
