package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
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
	// BulkBytes is the memory a bulk (NewBulk) buffers before it sorts
	// its writes into a run on disk. The default is 64 MiB: runs of about
	// 0.93 million postings (a posting takes 24 bytes in the buffer being
	// filled, in the one a spill sorts in the background and in that
	// sort's scratch buffer).
	BulkBytes int64
	// ReadOnly opens the store without allowing writes.
	ReadOnly bool
	// Logger receives Pebble's informational messages. The default drops
	// them (errors are returned to callers anyway).
	Logger pebble.Logger
	// Repair opens a store whose write-ahead log or MANIFEST is damaged
	// (which OpenPebble otherwise refuses with ErrCorrupt), keeping what
	// precedes the damage and dropping the rest, as Pebble's recovery does
	// after a torn write. It is for `neardup index check --repair`, which
	// then verifies what is left; tables that only the lost part of a
	// MANIFEST named are deleted by Pebble as obsolete.
	Repair bool
	// FS is the filesystem the store's files live on. The default is the
	// operating system's (vfs.Default); tests inject faults with Pebble's
	// vfs/errorfs wrapped around it. The lock file (neardup.pid) is always
	// taken on the operating system's filesystem.
	FS vfs.FS
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
//
// A directory is owned by one open store at a time: OpenPebble takes an
// exclusive lock (neardup.pid, holding the owner's pid) before anything
// else, and a second opener, in this process or another, fails with
// ErrInUse. Storage faults (a full disk, an I/O error, a failed sync,
// Pebble failing in the background) are returned as a *FaultError, within
// a second of the fault, by the operation that meets them and by every one
// after (ErrFailed); nothing panics out of the store. What was committed
// before a fault is there when the store is reopened after the cause is
// gone. A corrupt file is reported as an error wrapping ErrCorrupt that
// names it.
type Pebble struct {
	db        *pebble.DB
	po        *pebble.Options // as opened, with Pebble's defaults filled in
	fs        vfs.FS          // po.FS: the filesystem, wrapped by faultFS
	bulkBytes int64
	dir       string
	readOnly  bool
	h         *health
	lock      *fileLock
	closed    atomic.Bool
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
	_ Bulker    = (*Pebble)(nil)
)

// OpenPebble opens or creates the store in dir (creating dir if needed).
// It locks the directory first: if another open store holds it, in this
// process or another, it fails at once with an error wrapping ErrInUse
// that names the directory and the owner's pid. A directory that is
// neither empty nor a store is refused with ErrNotStore and left
// untouched; one holding a store of another format (or another Pebble
// database) with ErrFormat. Faults while opening are *FaultError.
func OpenPebble(dir string, o *PebbleOptions) (_ *Pebble, err error) {
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
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.BulkBytes <= 0 {
		opts.BulkBytes = 64 << 20
	}
	if err := prepareDir(dir, opts.ReadOnly, opts.FS); err != nil {
		return nil, err
	}
	lock, err := lockFile(filepath.Join(dir, storeLockName))
	if err != nil {
		return nil, inUse("store", dir, err)
	}
	keepLock := false // set while Pebble may still hold the directory
	defer func() {
		if err != nil && !keepLock {
			lock.unlock()
		}
	}()
	if !opts.ReadOnly {
		removeBulkLeftovers(dir)
	}
	h := newHealth(dir)
	defer h.recoverFault("open", &err)
	if !opts.Repair {
		if err := checkFiles(opts.FS, dir); err != nil {
			return nil, h.describe("open", err)
		}
	}
	po := &pebble.Options{
		FS:                          &faultFS{FS: opts.FS, h: h},
		EventListener:               h.listener(),
		Comparer:                    comparer,
		CacheSize:                   opts.CacheBytes + 2*int64(opts.MemTableBytes),
		MemTableSize:                opts.MemTableBytes,
		MemTableStopWritesThreshold: 4,
		L0CompactionThreshold:       4,
		L0StopWritesThreshold:       24,
		LBaseMaxBytes:               256 << 20,
		ReadOnly:                    opts.ReadOnly,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      pebbleLogger{h: h, user: opts.Logger},
		Cleaner:                     deleteCleaner{},
	}
	// bloom's filter, written a cache-sized region at a time
	// (pebble_filter.go).
	filter := newBlockedFilter(opts.BloomBitsPerKey)
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = filter
		po.Levels[i].BlockSize = opts.BlockBytes
	}
	po.TargetFileSizes[0] = 16 << 20
	po.EnsureDefaults()
	if opts.Repair && !opts.ReadOnly {
		dropBadOptions(dir, po)
	}
	db, err, abandoned := openDB(dir, po, h)
	if abandoned {
		keepLock = true // Pebble's Open is stuck holding the directory
	}
	if err != nil {
		return nil, err
	}
	s := &Pebble{db: db, po: po, fs: po.FS, bulkBytes: opts.BulkBytes, dir: dir, readOnly: opts.ReadOnly, h: h, lock: lock}
	s.cond.L = &s.mu
	keepLock = true // s.closeDB releases it when Pebble is closed
	if err := h.err(); err != nil {
		s.closeDB()
		return nil, err
	}
	v, ok, err := s.Meta(context.Background(), formatName, nil)
	switch {
	case err != nil:
		s.closeDB()
		return nil, err
	case ok && string(v) != formatVersion:
		s.closeDB()
		return nil, fmt.Errorf("%w: %s holds format %q, want %q", ErrFormat, dir, v, formatVersion)
	case !ok && !opts.ReadOnly:
		// A new store. Pebble writes its first log in the old chunk
		// format, without the sync offsets that tell damage from a torn
		// write (see walcheck.go); the flush after the format record
		// starts the next log, in the new format.
		b := s.NewBatch()
		b.PutMeta(formatName, []byte(formatVersion))
		err := b.Commit(context.Background())
		b.Close()
		if err == nil {
			err, _ = s.run(context.Background(), "open", s.db.Flush)
		}
		if err != nil {
			s.closeDB()
			return nil, err
		}
	}
	return s, nil
}

// checkFiles checks the current MANIFEST and the newest write-ahead log
// for damage that Pebble would take for a torn write (recordcheck.go).
func checkFiles(fs vfs.FS, dir string) error {
	desc, err := pebble.Peek(dir, fs)
	if err != nil {
		return err
	}
	if !desc.Exists {
		return nil
	}
	if err := checkManifest(fs, dir, desc.ManifestFilename); err != nil {
		return err
	}
	return checkLogTail(fs, dir)
}

// openGrace is how long OpenPebble still waits for Pebble's Open to
// return its own error once the store has failed.
const openGrace = 100 * time.Millisecond

// openDB runs pebble.Open on a goroutine of its own, so that a write fault
// in a background job Open waits for (the flush of a replayed log failing
// to write its table or the MANIFEST, which Pebble retries for ever) is
// returned, rather than waited for for ever: then Open is abandoned, and
// the directory stays locked by this process.
func openDB(dir string, po *pebble.Options, h *health) (_ *pebble.DB, _ error, abandoned bool) {
	if !po.ReadOnly && !po.DisableAutomaticCompactions && hasLog(po.FS, dir) {
		// Pebble's Open flushes the replayed logs, and the end of that
		// flush can start a compaction; if Open then fails (creating the
		// new log on a full disk), its error path closes the table cache
		// under the running compaction, which panics in Pebble's own
		// goroutine (a divide by zero), where no recover reaches. So the
		// logs are replayed by an Open that starts no compactions and is
		// closed at once; the store is then opened with an empty log.
		replay := po.Clone()
		replay.DisableAutomaticCompactions = true
		db, err, abandoned := openOnce(dir, replay, h)
		if err != nil || abandoned {
			return nil, err, abandoned
		}
		if err := db.Close(); err != nil {
			return nil, h.describe("open", err), false
		}
	}
	return openOnce(dir, po, h)
}

// hasLog reports whether dir holds a write-ahead log with anything in it.
func hasLog(fs vfs.FS, dir string) bool {
	names, err := fs.List(dir)
	if err != nil {
		return true // let Open find and report what is wrong
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		if fi, err := fs.Stat(fs.PathJoin(dir, name)); err != nil || fi.Size() > 0 {
			return true
		}
	}
	return false
}

// openOnce is one pebble.Open, run as openDB describes.
func openOnce(dir string, po *pebble.Options, h *health) (_ *pebble.DB, _ error, abandoned bool) {
	type opened struct {
		db  *pebble.DB
		err error
	}
	done := make(chan opened, 1)
	go func() {
		var o opened
		defer func() { done <- o }()
		defer h.recoverFault("open", &o.err)
		if o.db, o.err = pebble.Open(dir, po); o.err != nil {
			o.err = openError(dir, po.FS, h, o.err)
		}
	}()
	var o opened
	select {
	case o = <-done:
	case <-h.failed:
		if f := h.fault.Load(); f.Corrupt {
			// A background job read a corrupt table. Open does not wait
			// on such jobs, and abandoning it would leave them running
			// while Pebble's error path closes what they use.
			o = <-done
			break
		}
		t := time.NewTimer(openGrace)
		defer t.Stop()
		select {
		case o = <-done:
		case <-t.C:
			h.abandon()
			return nil, h.err(), true
		}
	}
	return o.db, o.err, false
}

// openError describes an error of pebble.Open. One that is neither an I/O
// error nor marked as corruption by Pebble means that the files disagree
// with each other (the MANIFEST names a table that is not there, or lost
// the edits that removed it): the MANIFEST is the file to name.
func openError(dir string, fs vfs.FS, h *health, err error) error {
	f := h.describe("open", err)
	var errno syscall.Errno
	if f.Corrupt || errors.As(f.Err, &errno) {
		return namedCorruption(dir, fs, f)
	}
	f = &FaultError{Dir: f.Dir, Op: f.Op, File: f.File, Err: f.Err, Corrupt: true}
	if desc, perr := pebble.Peek(dir, fs); perr == nil && desc.ManifestFilename != "" {
		f.File = filepath.Base(desc.ManifestFilename)
	}
	return f
}

// namedCorruption fills in the file of a corruption that Pebble reported
// without one: a malformed OPTIONS file is the only such fault at open.
func namedCorruption(dir string, fs vfs.FS, f *FaultError) *FaultError {
	if !f.Corrupt || f.File != "" {
		return f
	}
	if desc, err := pebble.Peek(dir, fs); err == nil && desc.OptionsFilename != "" {
		if text, err := os.ReadFile(desc.OptionsFilename); err == nil {
			var po pebble.Options
			po.EnsureDefaults()
			po.Comparer = comparer
			if err := po.CheckCompatibility(dir, string(text)); err != nil && pebble.IsCorruptionError(err) {
				f.File = filepath.Base(desc.OptionsFilename)
			}
		}
	}
	return f
}

// deleteCleaner deletes obsolete files, as Pebble's default cleaner does,
// and also turns off the recycling of write-ahead logs: Pebble keeps up to
// MemTableStopWritesThreshold+1 old logs for reuse unless its cleaner
// needs the contents of the files it cleans, which the embedded
// ArchiveCleaner declares (the only way to say so from outside Pebble;
// its Clean and String are shadowed by DeleteCleaner's, one level up). A
// recycled log saves a file-metadata update on its first syncs; it also
// keeps each old log's blocks on disk, which for a small store is most of
// its size (issue 13).
type deleteCleaner struct {
	pebble.DeleteCleaner
	noRecycle
}

type noRecycle struct{ pebble.ArchiveCleaner }

// prepareDir creates dir if it does not exist (unless readOnly), and
// refuses a directory that is neither empty nor a store (ErrNotStore) or
// that holds a Pebble database of another format (ErrFormat). It writes
// nothing into an existing directory.
func prepareDir(dir string, readOnly bool, fs vfs.FS) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist) && !readOnly:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("store: create %s: %w", dir, err)
		}
		return nil
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("store %s does not exist: %w", dir, err)
	case err != nil:
		return fmt.Errorf("store: open %s: %w", dir, err)
	}
	ours := false
	n := 0
	for _, e := range entries {
		switch name := e.Name(); {
		case name == storeLockName:
			ours = true
		case name == dirLockName || strings.HasPrefix(name, bulkDirPrefix):
		default:
			n++
		}
	}
	if n == 0 {
		return nil // empty (or a store whose creation was interrupted)
	}
	desc, err := pebble.Peek(dir, fs)
	if err != nil {
		return (&health{dir: dir}).describe("open", err)
	}
	if !desc.Exists {
		if ours {
			return nil // being created by its owner, who holds the lock
		}
		return fmt.Errorf("%w: %s is not empty and holds no neardup store (%d entries); give an empty or new directory", ErrNotStore, dir, n)
	}
	return checkComparer(dir, desc)
}

// dropBadOptions deletes the newest OPTIONS file when it does not parse
// (Repair): Pebble writes a fresh one on every open, and reads the newest
// only to check that the store was made with compatible options.
func dropBadOptions(dir string, po *pebble.Options) {
	desc, err := pebble.Peek(dir, po.FS)
	if err != nil || desc.OptionsFilename == "" {
		return
	}
	text, err := os.ReadFile(desc.OptionsFilename)
	if err != nil {
		return
	}
	if err := po.CheckCompatibility(dir, string(text)); err != nil && pebble.IsCorruptionError(err) {
		os.Remove(desc.OptionsFilename)
	}
}

// checkComparer refuses a directory whose Pebble database was created with
// another comparer (format 1 stores used Pebble's default), which Pebble
// would otherwise report as a bare open error.
func checkComparer(dir string, desc *pebble.DBDesc) error {
	if desc.OptionsFilename == "" {
		return nil
	}
	text, err := os.ReadFile(desc.OptionsFilename)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", dir, err)
	}
	for line := range strings.Lines(string(text)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "comparer="); ok && name != comparerName {
			return fmt.Errorf("%w: %s holds a Pebble database ordered by %q, want %q (format %q; %s)", ErrFormat, dir, name, comparerName, formatVersion, filepath.Base(desc.OptionsFilename))
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
	l, _, err := s.iterIf(true)
	return l, err
}

// iterIf is iter, but when no idle iterator is current and create is false
// it makes none and returns ok false (and nothing to return with putIter).
func (s *Pebble) iterIf(create bool) (_ *lookupIter, ok bool, _ error) {
	gen := s.gen.Load()
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return nil, false, ErrClosed
	}
	s.out++
	for n := len(s.free); n > 0; n = len(s.free) {
		l := s.free[n-1]
		s.free = s.free[:n-1]
		if l.gen == gen {
			s.mu.Unlock()
			return l, true, nil
		}
		l.it.Close() // stale: made before a commit
	}
	s.mu.Unlock()
	if !create {
		s.putIter(nil)
		return nil, false, nil
	}
	it, err := s.db.NewIter(&iterOptions)
	if err != nil {
		s.putIter(nil)
		return nil, false, err
	}
	return &lookupIter{it: it, gen: gen}, true, nil
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

// usable returns ErrClosed for a closed store and the fault of a failed
// one.
func (s *Pebble) usable() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.h.err()
}

// readErr describes an error from a Pebble read: a corrupt file, an I/O
// error or a fault. A failed read does not fail the store.
func (s *Pebble) readErr(err error) error {
	if err == nil {
		return nil
	}
	var fe *FaultError
	if errors.As(err, &fe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return s.h.describe("read", err)
}

// Postings implements Store.
func (s *Pebble) Postings(_ context.Context, key uint64, dst []uint64) (_ []uint64, err error) {
	if err := s.usable(); err != nil {
		return dst, err
	}
	defer s.h.recoverFault("read", &err)
	l, err := s.iter()
	if err != nil {
		return dst, s.readErr(err)
	}
	dst, err = s.postings(l, key, dst)
	s.putIter(l)
	return dst, err
}

// LookupPostings implements Store: one iterator serves every key.
func (s *Pebble) LookupPostings(ctx context.Context, keys []uint64, fn func(i int, ids []uint64) error) (err error) {
	if err := s.usable(); err != nil {
		return err
	}
	defer s.h.recoverFault("read", &err)
	l, err := s.iter()
	if err != nil {
		return s.readErr(err)
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
			return dst, s.h.describe("read", fmt.Errorf("%w: posting key %x", ErrCorrupt, k))
		}
		dst = append(dst, binary.BigEndian.Uint64(k[postingPrefixLen:]))
	}
	if err := it.Error(); err != nil {
		return dst, s.readErr(fmt.Errorf("postings %016x: %w", key, err))
	}
	return dst, nil
}

func (s *Pebble) get(key []byte, dst []byte) (_ []byte, _ bool, err error) {
	if err := s.usable(); err != nil {
		return dst, false, err
	}
	defer s.h.recoverFault("read", &err)
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, s.readErr(fmt.Errorf("get %q: %w", key, err))
	}
	dst = append(dst, v...)
	return dst, true, s.readErr(closer.Close())
}

// Doc implements Store.
func (s *Pebble) Doc(_ context.Context, id uint64, dst []byte) ([]byte, bool, error) {
	var kb [9]byte
	return s.get(docKey(&kb, id), dst)
}

// LookupDocs implements Store, and fn sees each record where Pebble holds
// it, uncopied. An iterator that sees every commit serves all the ids when
// one is idle or there are enough ids to pay for a new one (its prefix
// seeks consult the Bloom filters of every level, L6's too, so an absent
// record costs no data block); a few ids otherwise take a Get each. An
// iterator sees only the commits made before it: a server that adds as it
// answers queries would make a new one for almost every request, and a new
// iterator's first seek into each level costs more than a Get (bench/serve,
// 1M documents, 10% adds, 2 clients of 16 documents a request: 18,335
// queries/s with an iterator per request, 27,778 with Gets).
func (s *Pebble) LookupDocs(ctx context.Context, ids []uint64, fn func(i int, rec []byte, ok bool) error) (err error) {
	if err := s.usable(); err != nil {
		return err
	}
	defer s.h.recoverFault("read", &err)
	l, ok, err := s.iterIf(len(ids) >= iterDocs)
	if err != nil {
		return s.readErr(err)
	}
	if ok {
		defer s.putIter(l)
		return s.seekDocs(ctx, l, ids, fn)
	}
	var kb [9]byte
	for i, id := range ids {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		v, closer, err := s.db.Get(docKey(&kb, id))
		if errors.Is(err, pebble.ErrNotFound) {
			if err := fn(i, nil, false); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return s.readErr(fmt.Errorf("document %016x: %w", id, err))
		}
		ferr := fn(i, v, true)
		if err := closer.Close(); err != nil && ferr == nil {
			return s.readErr(err)
		}
		if ferr != nil {
			return ferr
		}
	}
	return nil
}

// iterDocs is the number of ids from which LookupDocs makes an iterator
// rather than take a Get per id.
const iterDocs = 64

// seekDocs is LookupDocs over l: a prefix seek per id.
func (s *Pebble) seekDocs(ctx context.Context, l *lookupIter, ids []uint64, fn func(i int, rec []byte, ok bool) error) (err error) {
	it := l.it
	for i, id := range ids {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := l.key[:9]
		k[0] = kindDoc
		binary.BigEndian.PutUint64(k[1:], id)
		var rec []byte
		ok := it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k)
		if ok {
			if rec, err = it.ValueAndErr(); err != nil {
				return s.readErr(fmt.Errorf("document %016x: %w", id, err))
			}
		} else if err := it.Error(); err != nil {
			return s.readErr(fmt.Errorf("document %016x: %w", id, err))
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

// scan calls fn for every key of one kind, with its value if keyLen is 9
// (a document). A key whose length is not keyLen is corrupt (keyLen < 0:
// no check).
func (s *Pebble) scan(ctx context.Context, kind byte, keyLen int, fn func(k, v []byte) error) (err error) {
	if err := s.usable(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer s.h.recoverFault("read", &err)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kind}, UpperBound: []byte{kind + 1}})
	if err != nil {
		return s.readErr(err)
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = s.readErr(cerr)
		}
	}()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := it.Key()
		if keyLen >= 0 && len(k) != keyLen {
			return s.h.describe("read", fmt.Errorf("%w: key %x has %d bytes, want %d", ErrCorrupt, k, len(k), keyLen))
		}
		var v []byte
		if keyLen == 9 {
			if v, err = it.ValueAndErr(); err != nil {
				return s.readErr(err)
			}
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return s.readErr(it.Error())
}

// ScanPostings implements Store.
func (s *Pebble) ScanPostings(ctx context.Context, fn func(key, id uint64) error) error {
	return s.scan(ctx, kindPosting, postingKeyLen, func(k, _ []byte) error {
		return fn(binary.BigEndian.Uint64(k[1:]), binary.BigEndian.Uint64(k[postingPrefixLen:]))
	})
}

// ScanDocs implements Store.
func (s *Pebble) ScanDocs(ctx context.Context, fn func(id uint64, rec []byte) error) error {
	return s.scan(ctx, kindDoc, 9, func(k, v []byte) error {
		return fn(binary.BigEndian.Uint64(k[1:]), v)
	})
}

// run calls fn, which waits on Pebble (a commit, a flush, a compaction, an
// ingestion), on a goroutine of its own, and returns its error, unless the
// store fails or ctx is done first: then it returns that error at once and
// reports that fn was abandoned (it may still complete later, or never,
// if Pebble is stuck in a write stall behind a failing flush). A panic in
// fn, and any error it returns, are the store's fault.
func (s *Pebble) run(ctx context.Context, op string, fn func() error) (err error, abandoned bool) {
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer s.h.recoverFault(op, &err)
		if err = fn(); err != nil {
			err = s.h.failWith(op, err)
		}
	}()
	select {
	case err := <-done:
		return err, false
	case <-s.h.failed:
	case <-ctx.Done():
	}
	select {
	case err := <-done: // finished too: its own result is the truth
		return err, false
	default:
	}
	if err := s.h.err(); err != nil {
		return err, true
	}
	return ctx.Err(), true
}

// Compact implements Compacter: it flushes the memtable and compacts the
// whole key space into the last level, dropping removed postings and
// replaced records, so each lookup reads one table whose Bloom filter
// answers misses. Call it after a bulk build; it takes about as long as
// writing the data again. It stops early (the compaction goes on in the
// background until Close) when ctx is done or the store fails.
func (s *Pebble) Compact(ctx context.Context) error {
	if err := s.usable(); err != nil {
		return err
	}
	s.dropIters() // they would pin the tables being replaced
	err, _ := s.run(ctx, "compact", func() error {
		if err := s.db.Flush(); err != nil {
			return err
		}
		return s.db.Compact(ctx, []byte{0}, []byte{0xff}, true)
	})
	return err
}

// closeWait bounds how long Close waits for Pebble once the store has
// failed: a commit stuck in a write stall behind a failing flush holds
// Pebble's commit lock for ever, and Pebble's Close waits for it.
const closeWait = time.Second

// Close implements Store. It waits for posting lookups in flight, flushes
// the memtable (so that the write-ahead log holds nothing live and the
// store reopens without replaying it), closes Pebble and releases the
// directory's lock. On a failed store it returns the fault, within about a
// second; the lock is then kept until the process exits if Pebble could
// not be closed, so the directory is never opened twice.
func (s *Pebble) Close() (err error) {
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
	if s.h.err() == nil && !s.readOnly {
		err, _ = s.run(context.Background(), "close", s.db.Flush)
	}
	return s.closeDB(err)
}

// closeDB closes Pebble (waiting at most closeWait once the store has
// failed) and releases the lock; first is an error met before.
func (s *Pebble) closeDB(first ...error) error {
	s.h.startClosing()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if s.h.err() != nil {
		ctx, cancel = context.WithTimeout(ctx, closeWait)
		defer cancel()
	}
	closeErr, abandoned := s.runClose(ctx)
	if !abandoned {
		s.lock.unlock()
	}
	for _, e := range first {
		if e != nil {
			return e
		}
	}
	if err := s.h.err(); err != nil {
		return err
	}
	return closeErr
}

// runClose is run for Pebble's Close, which may also be abandoned, but
// only for the deadline: a store failing during Close still gets its
// second.
func (s *Pebble) runClose(ctx context.Context) (error, bool) {
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer s.h.recoverFault("close", &err)
		if err = s.db.Close(); err != nil && s.h.err() == nil {
			err = s.h.describe("close", err)
		}
	}()
	select {
	case err := <-done:
		return err, false
	case <-s.h.failed:
	case <-ctx.Done():
		s.h.abandon()
		return s.h.err(), true
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case err := <-done:
		return err, false
	case <-t.C:
	case <-s.h.parked: // Pebble waits for a goroutine that never returns
	}
	s.h.abandon()
	return s.h.err(), true
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

// Commit implements Batch. It returns once the write-ahead log is synced,
// or at once with the store's fault when the store fails first (a full
// disk, a failed sync), or with ctx's error when ctx is done first: a
// commit abandoned that way may still be applied later, all or nothing,
// but is never acknowledged. After a failed Commit the batch is empty.
func (b *pebbleBatch) Commit(ctx context.Context) error {
	s := b.s
	if b.b == nil || s.closed.Load() {
		return ErrClosed
	}
	if err := s.h.err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.n == 0 {
		return nil
	}
	pb := b.b
	err, abandoned := s.run(ctx, "commit", func() error { return pb.Commit(pebble.Sync) })
	if err != nil {
		if !abandoned {
			pb.Close()
		}
		b.b = s.db.NewBatch() // Pebble refuses to reuse a batch whose commit failed
		b.n = 0
		return err
	}
	s.gen.Add(1)  // idle iterators no longer see everything:
	s.dropIters() // close them now rather than let them pin old memtables
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

// bulkDirPrefix names the temporary directories bulks keep their sorted
// runs and tables in, inside the store's directory (so that ingestion can
// hard-link the tables instead of copying them).
const bulkDirPrefix = "neardup-bulk-"

// removeBulkLeftovers removes what bulks of a process killed in the middle
// of a build left behind; they were never acknowledged.
func removeBulkLeftovers(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), bulkDirPrefix) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// Checkpointer is implemented by stores that can copy themselves, while
// in use, into a directory that opens as a store of its own (Pebble).
type Checkpointer interface {
	// Checkpoint writes a consistent copy of the store as it stands at
	// the call (every batch committed before it, none after) into dir,
	// which must not exist. Writes may go on meanwhile.
	Checkpoint(ctx context.Context, dir string) error
}

var _ Checkpointer = (*Pebble)(nil)

// Checkpoint implements Checkpointer with Pebble's checkpoint: the
// tables are hard-linked where dir is on the same file system (copied
// otherwise), the MANIFEST and the write-ahead log copied up to the
// checkpoint's sequence number, after a flush of the log. The copy opens
// with OpenPebble, and RestorePebble makes a working store of it. dir's
// parent must exist.
//
// The copy is written into a sibling directory (dir + ".partial-" and a
// number) and renamed to dir once complete and synced, so dir exists only
// as a whole backup. A failure while writing the copy (a full or failing
// backup disk) is the backup's alone: it is returned, the partial copy
// removed (or, if even that fails, left under its partial name, which the
// error gives), and the store goes on serving. Only a failure of the
// store's own files (the log flush) fails the store.
func (s *Pebble) Checkpoint(ctx context.Context, dir string) error {
	if err := s.usable(); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("store: checkpoint: %s already exists", dir)
	}
	// The log's flush is the store's own write: its failure is the
	// store's fault (and Pebble's, which cannot go on after it).
	if err, _ := s.run(ctx, "checkpoint", func() error { return s.db.LogData(nil, pebble.Sync) }); err != nil {
		return err
	}
	partial := fmt.Sprintf("%s.partial-%d", dir, time.Now().UnixNano())
	var cpErr error
	err, _ := s.run(ctx, "checkpoint", func() error {
		cpErr = s.db.Checkpoint(partial)
		if cpErr == nil && ctx.Err() != nil {
			cpErr = ctx.Err() // the caller is gone: no backup appears after it was told it failed
		}
		if cpErr == nil {
			cpErr = s.fs.Rename(partial, dir)
		}
		if cpErr == nil {
			cpErr = syncParent(s.fs, dir)
			if cpErr != nil {
				s.fs.RemoveAll(dir) // not durably there: no backup
			}
		}
		if cpErr != nil && s.fs.RemoveAll(partial) != nil && exists(s.fs, partial) {
			cpErr = fmt.Errorf("%w (the partial copy %s could not be removed: remove it)", cpErr, partial)
		}
		return nil
	})
	if err != nil {
		return err // the store failed meanwhile, or ctx ended
	}
	if cpErr != nil {
		return fmt.Errorf("store: checkpoint into %s: %w", dir, cpErr)
	}
	return nil
}

// exists reports whether path is there (as far as fs can tell).
func exists(fs vfs.FS, path string) bool {
	_, err := fs.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// syncParent syncs the directory holding path, so that a new entry in it
// survives a crash.
func syncParent(fs vfs.FS, path string) error {
	d, err := fs.OpenDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// RestorePebble copies the store checkpointed in backup (Checkpoint) into
// dir, which must not exist or be empty, then opens the copy to check
// that it is a store and closes it. backup itself is only read, so it
// stays a backup. A failed restore removes what it wrote.
func RestorePebble(backup, dir string) (err error) {
	desc, err := pebble.Peek(backup, vfs.Default)
	if err != nil {
		return fmt.Errorf("store: restore: %s: %w", backup, err)
	}
	if !desc.Exists {
		return fmt.Errorf("%w: %s holds no store to restore", ErrNotStore, backup)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("store: restore: %s is not empty", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: restore: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("store: restore: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	entries, err := os.ReadDir(backup)
	if err != nil {
		return fmt.Errorf("store: restore: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == storeLockName || e.Name() == dirLockName {
			continue
		}
		if err := copyFile(filepath.Join(backup, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("store: restore: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("store: restore: %w", err)
	}
	st, err := OpenPebble(dir, nil)
	if err != nil {
		return err
	}
	return st.Close()
}

// copyFile copies src to a new file dst and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
