package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Key layout (format 2). One byte of kind, then:
//
//	'p' key(8) id(8)       → one posting, empty value (all big-endian)
//	'd' id(8)              → document record
//	'm' name               → metadata value
//
// A posting is a key of its own: AddPosting is a blind Set, RemovePosting a
// Delete, and a lookup is a prefix seek (SeekPrefixGE on 'p' key) followed
// by Next while the prefix holds, which yields the ids already in
// increasing order. The comparer is bytewise but its Split cuts a posting
// key after the 9-byte prefix, so the Bloom filters are built on prefixes
// and answer a lookup of an absent key without reading a data block, on
// every level including L6 (IterOptions.UseL6Filters: Pebble's Get never
// consults L6 filters, and after Compact all data is in L6). Format 1 kept
// a posting list per key as merge operands read with Get; see
// BenchmarkLookup for the comparison that chose this layout.
const (
	kindPosting = 'p'
	kindDoc     = 'd'
	kindMeta    = 'm'

	postingPrefixLen = 9
	postingKeyLen    = 17

	formatName    = "neardup.store.format"
	formatVersion = "pebble-2"
	comparerName  = "neardup.store.bytewise-prefix9.v2"
)

// comparer orders keys bytewise, like Pebble's default, and splits a
// posting key into its 9-byte prefix ('p' and the lookup key) and the id
// suffix; other keys are all prefix. Because the prefix of a posting key
// has a fixed length, ordering by (prefix, suffix) is the same as ordering
// bytewise, as Pebble requires.
var comparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = func(k []byte) int {
		if len(k) > postingPrefixLen && k[0] == kindPosting {
			return postingPrefixLen
		}
		return len(k)
	}
	c.Name = comparerName
	return &c
}()

// PebbleOptions configure OpenPebble. The zero value gives the defaults.
type PebbleOptions struct {
	// CacheBytes is the block cache space for table blocks. The default is
	// 256 MiB: after Compact, postings take about 19 bytes each in blocks
	// (1M: 19 MB, 10M: 188 MB), and a lookup that misses the cache costs
	// a read and a decompression of a block (BenchmarkLookup at 10M
	// postings, warm: 1.8 µs of CPU per lookup at 256 MiB, 4.9 µs at 128
	// MiB). Pebble charges its memtables to the block cache (the mutable
	// one and one kept for recycling, each MemTableBytes), so the cache is
	// created with CacheBytes + 2×MemTableBytes: otherwise two memtables of
	// 64 MiB would leave a 128 MiB cache no room for a single block, and
	// every lookup would read and decompress blocks from the file.
	CacheBytes int64
	// MemTableBytes is the memtable size. The default is 64 MiB.
	MemTableBytes uint64
	// BloomBitsPerKey sets the Bloom filter on every level (L0 included),
	// built on the 9-byte prefix of posting keys, so that a lookup of an
	// absent key reads no data block (lookups consult L6 filters too).
	// The default is 10 (about 1% false positives).
	BloomBitsPerKey int
	// BlockBytes is the target size of a table's data blocks (before
	// compression). The default is 16 KiB. A lookup that misses the block
	// cache reads and decompresses one block, so smaller blocks make such
	// lookups cheaper at the cost of a larger index.
	BlockBytes int
	// ReadOnly opens the store without allowing writes.
	ReadOnly bool
	// Logger receives Pebble's informational messages. The default drops
	// them (errors are returned to callers anyway).
	Logger pebble.Logger
}

// Pebble is the embedded persistent Store: a Pebble database in a
// directory. Safe for concurrent use. Commit syncs the write-ahead log, so
// batches are durable when it returns; throughput comes from large batches
// (thousands of postings each), not from many small commits. Costs: a
// posting lookup is a prefix seek on a reused iterator (about 1 µs of CPU
// with a warm cache after Compact, BenchmarkLookup), plus one Next per id
// returned; AddPosting and RemovePosting are blind writes. Close waits for
// posting lookups in flight; other calls must not race with Close. The
// zero value is not usable.
type Pebble struct {
	db     *pebble.DB
	closed atomic.Bool
	// gen counts commits. An iterator sees the database as of its
	// creation, so a pooled one is reused only while gen is unchanged.
	gen atomic.Uint64

	mu       sync.Mutex
	cond     sync.Cond // signalled when out drops to zero after Close
	free     []*lookupIter
	out      int // iterators checked out by lookups in flight
	shutting bool
}

// lookupIter is an iterator for posting lookups with the buffer its seek
// key is built in (a seek key escapes, so a stack buffer would be an
// allocation per lookup).
type lookupIter struct {
	it  *pebble.Iterator
	gen uint64 // Pebble.gen when it was made
	key [postingKeyLen]byte
}

// maxFreeIters bounds the idle iterators kept for reuse; each pins the
// memtables and tables of the state it was created on.
const maxFreeIters = 16

var (
	_ Store     = (*Pebble)(nil)
	_ Compacter = (*Pebble)(nil)
)

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)           {}
func (quietLogger) Errorf(string, ...any)          {}
func (quietLogger) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

// OpenPebble opens or creates the store in dir. A directory holding a
// store of another format (or another Pebble database) is refused with
// ErrFormat.
func OpenPebble(dir string, o *PebbleOptions) (*Pebble, error) {
	var opts PebbleOptions
	if o != nil {
		opts = *o
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 256 << 20
	}
	if opts.MemTableBytes == 0 {
		opts.MemTableBytes = 64 << 20
	}
	if opts.BloomBitsPerKey <= 0 {
		opts.BloomBitsPerKey = 10
	}
	if opts.BlockBytes <= 0 {
		opts.BlockBytes = 16 << 10
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger{}
	}
	if err := checkComparer(dir); err != nil {
		return nil, err
	}
	po := &pebble.Options{
		Comparer:                    comparer,
		CacheSize:                   opts.CacheBytes + 2*int64(opts.MemTableBytes),
		MemTableSize:                opts.MemTableBytes,
		MemTableStopWritesThreshold: 4,
		L0CompactionThreshold:       4,
		L0StopWritesThreshold:       24,
		LBaseMaxBytes:               256 << 20,
		ReadOnly:                    opts.ReadOnly,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      opts.Logger,
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(opts.BloomBitsPerKey)
		po.Levels[i].BlockSize = opts.BlockBytes
	}
	po.TargetFileSizes[0] = 16 << 20
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	s := &Pebble{db: db}
	s.cond.L = &s.mu
	v, ok, err := s.Meta(context.Background(), formatName, nil)
	switch {
	case err != nil:
		db.Close()
		return nil, err
	case ok && string(v) != formatVersion:
		db.Close()
		return nil, fmt.Errorf("%w: %s holds format %q, want %q", ErrFormat, dir, v, formatVersion)
	case !ok && !opts.ReadOnly:
		b := s.NewBatch()
		b.PutMeta(formatName, []byte(formatVersion))
		if err := b.Commit(context.Background()); err != nil {
			db.Close()
			return nil, err
		}
		b.Close()
	}
	return s, nil
}

// checkComparer refuses a directory whose Pebble database was created with
// another comparer (format 1 stores used Pebble's default), which Pebble
// would otherwise report as a bare open error.
func checkComparer(dir string) error {
	desc, err := pebble.Peek(dir, vfs.Default)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && (!desc.Exists || desc.OptionsFilename == "")) {
		return nil // a new store
	}
	if err != nil {
		return fmt.Errorf("store: open %s: %w", dir, err)
	}
	text, err := os.ReadFile(desc.OptionsFilename)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", dir, err)
	}
	for line := range strings.Lines(string(text)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "comparer="); ok && name != comparerName {
			return fmt.Errorf("%w: %s holds a Pebble database ordered by %q, want %q (format %q)", ErrFormat, dir, name, comparerName, formatVersion)
		}
	}
	return nil
}

func postingKey(buf *[postingKeyLen]byte, key, id uint64) []byte {
	buf[0] = kindPosting
	binary.BigEndian.PutUint64(buf[1:], key)
	binary.BigEndian.PutUint64(buf[postingPrefixLen:], id)
	return buf[:]
}

func docKey(buf *[9]byte, id uint64) []byte {
	buf[0] = kindDoc
	binary.BigEndian.PutUint64(buf[1:], id)
	return buf[:]
}

func metaKey(name string) []byte { return append([]byte{kindMeta}, name...) }

// iterOptions are those of every lookup iterator: Bloom filters on L6 too.
var iterOptions = pebble.IterOptions{UseL6Filters: true}

// iter returns an iterator that sees every batch committed before the
// call, reusing an idle one when no commit happened since it was made.
// Return it with putIter.
func (s *Pebble) iter() (*lookupIter, error) {
	gen := s.gen.Load()
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.out++
	for n := len(s.free); n > 0; n = len(s.free) {
		l := s.free[n-1]
		s.free = s.free[:n-1]
		if l.gen == gen {
			s.mu.Unlock()
			return l, nil
		}
		l.it.Close() // stale: made before a commit
	}
	s.mu.Unlock()
	it, err := s.db.NewIter(&iterOptions)
	if err != nil {
		s.putIter(nil)
		return nil, err
	}
	return &lookupIter{it: it, gen: gen}, nil
}

// putIter returns an iterator taken with iter (nil if none was made), and
// keeps it for reuse if it is still current.
func (s *Pebble) putIter(l *lookupIter) {
	s.mu.Lock()
	s.out--
	keep := l != nil && !s.shutting && len(s.free) < maxFreeIters && l.gen == s.gen.Load()
	if keep {
		s.free = append(s.free, l)
	}
	if s.shutting && s.out == 0 {
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	if l != nil && !keep {
		l.it.Close()
	}
}

// dropIters closes the idle iterators, so that the memtables and tables
// they pin can be released.
func (s *Pebble) dropIters() {
	s.mu.Lock()
	free := s.free
	s.free = nil
	s.mu.Unlock()
	closeAll(free)
}

func closeAll(ls []*lookupIter) {
	for _, l := range ls {
		l.it.Close()
	}
}

// Postings implements Store.
func (s *Pebble) Postings(_ context.Context, key uint64, dst []uint64) ([]uint64, error) {
	if s.closed.Load() {
		return dst, ErrClosed
	}
	l, err := s.iter()
	if err != nil {
		return dst, err
	}
	dst, err = s.postings(l, key, dst)
	s.putIter(l)
	return dst, err
}

// LookupPostings implements Store: one iterator serves every key.
func (s *Pebble) LookupPostings(ctx context.Context, keys []uint64, fn func(i int, ids []uint64) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	l, err := s.iter()
	if err != nil {
		return err
	}
	defer s.putIter(l)
	var ids []uint64
	for i, k := range keys {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if ids, err = s.postings(l, k, ids[:0]); err != nil {
			return err
		}
		if err := fn(i, ids); err != nil {
			return err
		}
	}
	return nil
}

// postings appends the ids under key, read with l's iterator.
func (s *Pebble) postings(l *lookupIter, key uint64, dst []uint64) ([]uint64, error) {
	it := l.it
	prefix := postingKey(&l.key, key, 0)[:postingPrefixLen]
	for ok := it.SeekPrefixGE(prefix); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != postingKeyLen {
			return dst, fmt.Errorf("%w: posting key %x", ErrCorrupt, k)
		}
		dst = append(dst, binary.BigEndian.Uint64(k[postingPrefixLen:]))
	}
	if err := it.Error(); err != nil {
		return dst, fmt.Errorf("store: postings %016x: %w", key, err)
	}
	return dst, nil
}

func (s *Pebble) get(key []byte, dst []byte) ([]byte, bool, error) {
	if s.closed.Load() {
		return dst, false, ErrClosed
	}
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, fmt.Errorf("store: get %q: %w", key, err)
	}
	dst = append(dst, v...)
	return dst, true, closer.Close()
}

// Doc implements Store.
func (s *Pebble) Doc(_ context.Context, id uint64, dst []byte) ([]byte, bool, error) {
	var kb [9]byte
	return s.get(docKey(&kb, id), dst)
}

// LookupDocs implements Store.
func (s *Pebble) LookupDocs(ctx context.Context, ids []uint64, fn func(i int, rec []byte, ok bool) error) error {
	var rec []byte
	for i, id := range ids {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var ok bool
		var err error
		if rec, ok, err = s.Doc(ctx, id, rec[:0]); err != nil {
			return err
		}
		if err := fn(i, rec, ok); err != nil {
			return err
		}
	}
	return nil
}

// Meta implements Store.
func (s *Pebble) Meta(_ context.Context, name string, dst []byte) ([]byte, bool, error) {
	return s.get(metaKey(name), dst)
}

// Capabilities implements Store: durable (Commit syncs the WAL), atomic,
// ordered, and locked by one process.
func (s *Pebble) Capabilities() Capabilities {
	return Capabilities{Durable: true, Atomic: true, Ordered: true}
}

// ScanPostings implements Store.
func (s *Pebble) ScanPostings(ctx context.Context, fn func(key, id uint64) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kindPosting}, UpperBound: []byte{kindPosting + 1}})
	if err != nil {
		return fmt.Errorf("store: postings: %w", err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				it.Close()
				return err
			}
		}
		n++
		k := it.Key()
		if len(k) != postingKeyLen {
			it.Close()
			return fmt.Errorf("%w: posting key %x", ErrCorrupt, k)
		}
		if err := fn(binary.BigEndian.Uint64(k[1:]), binary.BigEndian.Uint64(k[postingPrefixLen:])); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("store: postings: %w", err)
	}
	return nil
}

// ScanDocs implements Store.
func (s *Pebble) ScanDocs(ctx context.Context, fn func(id uint64, rec []byte) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kindDoc}, UpperBound: []byte{kindDoc + 1}})
	if err != nil {
		return fmt.Errorf("store: docs: %w", err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				it.Close()
				return err
			}
		}
		n++
		k := it.Key()
		if len(k) != 9 {
			it.Close()
			return fmt.Errorf("%w: document key %x", ErrCorrupt, k)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("store: docs: %w", err)
		}
		if err := fn(binary.BigEndian.Uint64(k[1:]), v); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// Compact implements Compacter: it flushes the memtable and compacts the
// whole key space into the last level, dropping removed postings and
// replaced records, so each lookup reads one table whose Bloom filter
// answers misses. Call it after a bulk build; it takes about as long as
// writing the data again.
func (s *Pebble) Compact(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	s.dropIters() // they would pin the tables being replaced
	if err := s.db.Flush(); err != nil {
		return fmt.Errorf("store: flush: %w", err)
	}
	if err := s.db.Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		return fmt.Errorf("store: compact: %w", err)
	}
	return nil
}

// Close implements Store. It waits for posting lookups in flight.
func (s *Pebble) Close() error {
	if s.closed.Swap(true) {
		return ErrClosed
	}
	s.mu.Lock()
	s.shutting = true
	for s.out > 0 {
		s.cond.Wait()
	}
	free := s.free
	s.free = nil
	s.mu.Unlock()
	closeAll(free)
	return s.db.Close()
}

// NewBatch implements Store.
func (s *Pebble) NewBatch() Batch { return &pebbleBatch{s: s, b: s.db.NewBatch()} }

type pebbleBatch struct {
	s  *Pebble
	b  *pebble.Batch
	n  int
	kb [postingKeyLen]byte
	db [9]byte
}

// Batch writes only fail on closed batches, so their errors are dropped.

func (b *pebbleBatch) AddPosting(key, id uint64) {
	b.b.Set(postingKey(&b.kb, key, id), nil, nil)
	b.n++
}
func (b *pebbleBatch) RemovePosting(key, id uint64) {
	b.b.Delete(postingKey(&b.kb, key, id), nil)
	b.n++
}
func (b *pebbleBatch) PutDoc(id uint64, rec []byte) {
	b.b.Set(docKey(&b.db, id), rec, nil)
	b.n++
}
func (b *pebbleBatch) DeleteDoc(id uint64) {
	b.b.Delete(docKey(&b.db, id), nil)
	b.n++
}
func (b *pebbleBatch) PutMeta(name string, value []byte) {
	b.b.Set(metaKey(name), value, nil)
	b.n++
}
func (b *pebbleBatch) DeleteMeta(name string) {
	b.b.Delete(metaKey(name), nil)
	b.n++
}
func (b *pebbleBatch) Len() int { return b.n }

func (b *pebbleBatch) Commit(ctx context.Context) error {
	if b.b == nil || b.s.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	b.s.gen.Add(1)  // idle iterators no longer see everything:
	b.s.dropIters() // close them now rather than let them pin old memtables
	b.b.Reset()
	b.n = 0
	return nil
}

func (b *pebbleBatch) Close() {
	if b.b != nil {
		b.b.Close()
		b.b = nil
	}
}

// Metrics returns Pebble's metrics report (levels, cache hit rates, filter
// utility), for diagnosing performance.
func (s *Pebble) Metrics() string { return s.db.Metrics().String() }
