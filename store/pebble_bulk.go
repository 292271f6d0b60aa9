package store

// Bulk builds by table ingestion (issue 14).
//
// A batch puts every posting through the write-ahead log and the
// memtable, and compactions then rewrite it level after level: for a
// large build that is most of the work. A bulk instead keeps its writes
// in memory, sorts them when the memory budget is reached and writes them
// to a sorted run file, and at Commit merges the runs (later writes win),
// writes the result as finished tables with Pebble's sstable writer, and
// hands them to DB.Ingest, which links them into the LSM in one atomic,
// synced MANIFEST edit. Ingested tables take the newest sequence number,
// so a bulk overwrites what the store held exactly as a batch committed at
// the same moment would, removals included (they become tombstones).
//
// Postings, nearly all of a build, take a path of their own: they are
// buffered as fixed-width (key, id) pairs, sorted by a radix sort, spilled
// as fixed-width runs and merged by comparing integers. Their key space is
// cut into parts at quantiles of the first sorted buffer, and at Commit
// the parts are merged and written as tables by one goroutine per
// processor, each taking the next part when done with one: the parts'
// tables overlap none of the others, so they are ingested together as
// before.
//
// The merge removes each run file as soon as it has read it: a run's
// postings are a file per part, and its values are cut into segments of
// a sixteenth of the buffer. The runs' space thus goes as the tables'
// comes, and the bulk's directory peaks near the larger of the two plus
// a segment per run, instead of their sum: a dedup of 1M 200-word
// documents, whose runs are about the size of the index, peaked at 1.94
// times the index's final size, and now at 1.07.

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/objstorage"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// bulkTableBytes is the size at which a bulk starts a new table (tests
// lower it).
var bulkTableBytes uint64 = 64 << 20

// bulkWriters is the number of goroutines that write a bulk's parts at
// Commit.
func bulkWriters() int { return min(runtime.GOMAXPROCS(0), 8) }

// bulkParts is the number of parts a bulk cuts its postings' key space
// into (tests set it): four per writer, so that a writer whose parts went
// faster than another's takes over more of them, and the writers finish
// within about a part of each other. With one part per writer, one of two
// still wrote alone for the last 0.5-0.7 s of the 1M-document dedup's
// Commit of about 2.5 s.
var bulkParts = func() int { return 4 * bulkWriters() }

const (
	// bulkPostingBytes is what a buffered posting costs in memory: its
	// place in the buffer being filled, and in the one a spill in flight
	// sorts and the sort's scratch buffer.
	bulkPostingBytes = 3 * 24
	// bulkEntryOverhead is what a buffered record or metadata value costs
	// besides its bytes.
	bulkEntryOverhead = 40
	// runPostingBytes is the size of a posting in a run file: key and id
	// (big-endian) and the op byte (0 delete, 1 set).
	runPostingBytes = 17
)

var bulkDirSeq atomic.Uint64

var _ objstorage.Writable = (*tableFile)(nil)

// NewBulk implements Bulker: the bulk buffers up to PebbleOptions.BulkBytes
// of writes in memory, then spills sorted runs into a directory inside the
// store's (removed at Commit, Close, or the next OpenPebble after a
// crash; Commit removes each run file once it has merged it, so the
// directory holds little more than the larger of the runs and the
// tables). Commit costs a sort of what is buffered, a merge of the runs,
// and one write of the result as tables (on as many goroutines as
// GOMAXPROCS, up to 8); it is durable and atomic when it returns. Like a
// batch, a bulk is not safe for concurrent use.
func (s *Pebble) NewBulk() Batch { return &pebbleBulk{s: s} }

// NewSortedBulk implements SortedBulker: the bulk's records (PutDoc,
// DeleteDoc), which must come in strictly increasing id order, go
// straight into tables of their own as they come, instead of through the
// buffer, its sort and the runs on disk; the other writes are buffered as
// NewBulk's are. The record tables hold no other kind of key, so they
// overlap none of the merged tables, and Commit ingests them all at once.
func (s *Pebble) NewSortedBulk() Batch { return &pebbleBulk{s: s, sortedDocs: true} }

// bulkPosting is a buffered posting write. The buffer keeps the order of
// the writes, and its sort is stable, so of two writes of one posting the
// later stays later.
type bulkPosting struct {
	key, id uint64
	del     bool
}

type bulkValue struct {
	key   []byte // the store key ('d' id or 'm' name)
	value []byte
	seq   uint32
	del   bool
}

// bulkRun is a spilled buffer: a file of its sorted postings for each
// part ("" when the part has none; no files when the run has no
// postings), and the files its sorted values are cut into (none when it
// had no values).
//
// The files are removed as Commit's merge reads them: the postings of a
// part once the part's merge has read them, the values a segment at a
// time. So the runs' disk space goes as fast as the tables' comes, and
// the bulk's directory peaks near the larger of the two instead of their
// sum (twice the index's size when the runs are about its size, as a
// dedup's records make them).
type bulkRun struct {
	postings []string
	// starts holds the index of the first posting of each part (see
	// pebbleBulk.splits), then the number of postings.
	starts []int64
	values []string
}

type pebbleBulk struct {
	s        *Pebble
	postings []bulkPosting
	scratch  []bulkPosting // the radix sort's other buffer
	spare    []bulkPosting // the next buffer
	spilling chan error    // the spill in flight, if any
	values   []bulkValue
	seq      uint32
	bytes    int64 // memory held by the buffer
	n        int   // writes since the last Commit
	runs     []bulkRun
	dir      string       // the run directory, once made
	syncs    *tableSyncer // syncs the tables written in dir
	err      error        // the first error spilling a run or writing a record table
	closed   bool

	// idsOutOfOrder is set when a posting was written with a smaller id
	// than the one before it in the buffer (lastID).
	idsOutOfOrder bool
	lastID        uint64

	// splits cut the postings' key space into parts: part p holds the
	// keys from splits[p-1] (included) to splits[p] (excluded). They are
	// chosen once, from the first sorted buffer that holds postings, so
	// every run is cut at the same keys.
	splits       []uint64
	splitsChosen bool

	// The records of a sorted bulk (NewSortedBulk): their writer, the
	// last key written and how many.
	sortedDocs bool
	rw         *recordWriter
	dlast      [9]byte
	dn         int
}

func (b *pebbleBulk) next() uint32 {
	b.seq++
	b.n++
	return b.seq
}

func (b *pebbleBulk) AddPosting(key, id uint64) {
	b.n++
	b.idsOutOfOrder = b.idsOutOfOrder || id < b.lastID
	b.lastID = id
	b.postings = append(b.postings, bulkPosting{key: key, id: id})
	b.grew(bulkPostingBytes)
}

func (b *pebbleBulk) RemovePosting(key, id uint64) {
	b.n++
	b.idsOutOfOrder = b.idsOutOfOrder || id < b.lastID
	b.lastID = id
	b.postings = append(b.postings, bulkPosting{key: key, id: id, del: true})
	b.grew(bulkPostingBytes)
}

func (b *pebbleBulk) PutDoc(id uint64, rec []byte) {
	var kb [9]byte
	if b.sortedDocs {
		b.direct(docKey(&kb, id), rec, false)
		return
	}
	b.value(docKey(&kb, id), rec, false)
}

func (b *pebbleBulk) DeleteDoc(id uint64) {
	var kb [9]byte
	if b.sortedDocs {
		b.direct(docKey(&kb, id), nil, true)
		return
	}
	b.value(docKey(&kb, id), nil, true)
}

// direct hands a record of a sorted bulk to its record writer.
func (b *pebbleBulk) direct(key, value []byte, del bool) {
	b.n++
	if b.err != nil {
		return
	}
	if b.dn > 0 && bytes.Compare(key, b.dlast[:]) <= 0 {
		b.err = fmt.Errorf("store: sorted bulk: record %x written after %x (records must come in increasing id order)", key[1:], b.dlast[1:])
		return
	}
	if b.rw == nil {
		if _, err := b.runDir(); err != nil { // before the writer uses it
			b.err = err
			return
		}
		b.rw = newRecordWriter(b)
	}
	b.rw.add(key, value, del)
	copy(b.dlast[:], key)
	b.dn++
}

// newTable creates the bulk's table file NAME-n.sst in its directory and
// returns its path and a writer of it.
func (b *pebbleBulk) newTable(name string, n int) (string, *sstable.Writer, error) {
	dir, err := b.runDir()
	if err != nil {
		return "", nil, err
	}
	path := b.s.fs.PathJoin(dir, fmt.Sprintf("%s-%06d.sst", name, n))
	f, err := b.s.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", nil, err
	}
	return path, sstable.NewWriter(newTableFile(f), b.s.po.MakeWriterOptions(0, b.s.db.TableFormat())), nil
}

// tableFileBuffer is the buffer of a bulk's table file: the table's
// writer writes a block (16 KiB) and its 5-byte trailer at a time, and
// through Pebble's buffer of 4 KiB that took two system calls a block.
const tableFileBuffer = 1 << 20

// tableFile is the objstorage.Writable a bulk's table is written to: a
// buffered file that Finish flushes and closes without syncing it. The
// sync Ingest needs is left to the bulk's syncer once the table is
// finished (tableStream.finish), so that no writer stops to wait for the
// disk. Nor is the file written back as it is made (sync_file_range
// every BytesPerSync, as Pebble's own tables are): that call waits
// whenever the disk's queue is full, and so did the table's writer,
// while the syncer has the tables on disk as early.
type tableFile struct {
	f vfs.File
	w *bufio.Writer
}

func newTableFile(f vfs.File) *tableFile {
	return &tableFile{f: f, w: bufio.NewWriterSize(f, tableFileBuffer)}
}

// Write implements objstorage.Writable.
func (t *tableFile) Write(p []byte) error {
	_, err := t.w.Write(p)
	return err
}

// Finish implements objstorage.Writable.
func (t *tableFile) Finish() error {
	err := t.w.Flush()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort implements objstorage.Writable.
func (t *tableFile) Abort() { t.f.Close() }

// tableSyncer syncs finished tables on goroutines of its own (a sync
// waits for the disk, not a processor).
type tableSyncer struct {
	todo chan string
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error // the first sync that failed
}

func newTableSyncer(fs vfs.FS) *tableSyncer {
	t := &tableSyncer{todo: make(chan string, 64)}
	for range 2 {
		t.wg.Go(func() {
			for path := range t.todo {
				f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
				if err == nil {
					err = f.Sync()
					if cerr := f.Close(); err == nil {
						err = cerr
					}
				}
				if err != nil {
					t.mu.Lock()
					if t.err == nil {
						t.err = err
					}
					t.mu.Unlock()
				}
			}
		})
	}
	return t
}

// wait returns once the tables handed over are synced, with the first
// error; the syncer takes no more.
func (t *tableSyncer) wait() error {
	close(t.todo)
	t.wg.Wait()
	return t.err
}

func (b *pebbleBulk) PutMeta(name string, value []byte) { b.value(metaKey(name), value, false) }

func (b *pebbleBulk) DeleteMeta(name string) { b.value(metaKey(name), nil, true) }

func (b *pebbleBulk) value(key, value []byte, del bool) {
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	b.values = append(b.values, bulkValue{key: buf[:len(key):len(key)], value: buf[len(key):], seq: b.next(), del: del})
	b.grew(int64(len(buf)) + bulkEntryOverhead)
}

func (b *pebbleBulk) Len() int { return b.n }

// grew accounts for memory and spills a run when the budget is reached.
func (b *pebbleBulk) grew(n int64) {
	b.bytes += n
	if b.bytes >= b.s.bulkBytes && b.err == nil {
		b.err = b.spill()
	}
}

// sortBuffer sorts and deduplicates a buffer's postings ps (through
// scratch) and values vs, the last write to a key winning, and chooses
// the splits if no buffer had postings before. It returns the sorted
// postings, the other buffer and the sorted values.
func (b *pebbleBulk) sortBuffer(ps, scratch []bulkPosting, vs []bulkValue, idsInOrder bool) (sorted, spare []bulkPosting, values []bulkValue) {
	ps, scratch = sortPostings(ps, scratch, idsInOrder)
	ps = compactLast(ps, func(x, y bulkPosting) bool { return x.key == y.key && x.id == y.id })
	slices.SortFunc(vs, func(x, y bulkValue) int {
		if c := bytesCompare(x.key, y.key); c != 0 {
			return c
		}
		return cmp.Compare(x.seq, y.seq)
	})
	vs = compactLast(vs, func(x, y bulkValue) bool { return string(x.key) == string(y.key) })
	if !b.splitsChosen && len(ps) > 0 {
		b.splitsChosen = true
		n := bulkParts()
		for i := 1; i < n; i++ {
			k := ps[i*len(ps)/n].key
			if k > 0 && (len(b.splits) == 0 || k > b.splits[len(b.splits)-1]) {
				b.splits = append(b.splits, k)
			}
		}
	}
	return ps, scratch, vs
}

// starts returns the index in the sorted postings ps of each part's first
// posting, then their number.
func (b *pebbleBulk) starts(ps []bulkPosting) []int64 {
	st := make([]int64, 0, len(b.splits)+2)
	st = append(st, 0)
	for _, k := range b.splits {
		st = append(st, int64(sort.Search(len(ps), func(i int) bool { return ps[i].key >= k })))
	}
	return append(st, int64(len(ps)))
}

// sortPostings sorts ps by key, then id, stably, moving the postings
// between ps and scratch, and returns the sorted slice and the other
// buffer (to be passed as scratch next time). With idsInOrder (the ids
// were written in non-decreasing order, as a sorted bulk writes them) it
// sorts by key only, which a stable sort makes the same order.
//
// It is a radix sort in two steps, so that only one pass moves postings
// through main memory: a pass on the key's most significant byte
// distributes them into 256 buckets, then each bucket, small enough to
// stay in the processor's cache, is sorted on its other bytes from the
// least significant (sortBucket).
func sortPostings(ps, scratch []bulkPosting, idsInOrder bool) (sorted, spare []bulkPosting) {
	n := len(ps)
	if n < 2 {
		return ps, scratch
	}
	if cap(scratch) < n {
		scratch = make([]bulkPosting, n, cap(ps))
	}
	scratch = scratch[:n]
	var starts [257]int
	for i := range ps {
		starts[ps[i].key>>56+1]++
	}
	for v := 1; v <= 256; v++ {
		starts[v] += starts[v-1]
	}
	next := starts
	for _, p := range ps {
		v := p.key >> 56
		scratch[next[v]] = p
		next[v]++
	}
	var counts [15][256]int
	for v := range 256 {
		if lo, hi := starts[v], starts[v+1]; hi-lo > 1 {
			sortBucket(scratch[lo:hi], ps[lo:hi], idsInOrder, &counts)
		}
	}
	return scratch, ps
}

// sortBucket sorts b, whose postings share the key's most significant
// byte, by the key's other bytes and (unless idsInOrder) the id's, with a
// least significant digit radix sort through tmp (of b's length), a byte
// per pass; it skips a pass whose byte is the same in every posting. The
// result is in b.
func sortBucket(b, tmp []bulkPosting, idsInOrder bool, counts *[15][256]int) {
	*counts = [15][256]int{}
	// counts[d] counts the values of the sort key's byte d from the least
	// significant: the id's 8 bytes, then the key's 7 lower ones.
	for i := range b {
		id, key := b[i].id, b[i].key
		if !idsInOrder {
			for d := range 8 {
				counts[d][byte(id>>(8*d))]++
			}
		}
		for d := range 7 {
			counts[8+d][byte(key>>(8*d))]++
		}
	}
	n := len(b)
	src, dst := b, tmp
	first := 0
	if idsInOrder {
		first = 8
	}
	for d := first; d < 15; d++ {
		c := &counts[d]
		shift := uint(8 * (d % 8))
		x := src[0].id
		if d >= 8 {
			x = src[0].key
		}
		if c[byte(x>>shift)] == n {
			continue
		}
		sum := 0
		for v := range c {
			c[v], sum = sum, sum+c[v]
		}
		if d < 8 {
			for _, p := range src {
				v := byte(p.id >> shift)
				dst[c[v]] = p
				c[v]++
			}
		} else {
			for _, p := range src {
				v := byte(p.key >> shift)
				dst[c[v]] = p
				c[v]++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &b[0] {
		copy(b, src)
	}
}

// compactLast keeps the last of each run of equal neighbours.
func compactLast[T any](s []T, eq func(a, b T) bool) []T {
	out := s[:0]
	for i := range s {
		if i+1 < len(s) && eq(s[i], s[i+1]) {
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func bytesCompare(a, b []byte) int { return cmp.Compare(string(a), string(b)) }

func (b *pebbleBulk) reset() {
	b.postings, b.values = b.postings[:0], b.values[:0]
	b.idsOutOfOrder, b.lastID = false, 0
	b.seq, b.bytes = 0, 0
}

// runDir makes the bulk's directory inside the store's.
func (b *pebbleBulk) runDir() (string, error) {
	if b.dir != "" {
		return b.dir, nil
	}
	fs := b.s.fs
	dir := fs.PathJoin(b.s.dir, bulkDirPrefix+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(bulkDirSeq.Add(1), 10))
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b.dir, b.syncs = dir, newTableSyncer(fs)
	return dir, nil
}

// spill hands the buffer to a goroutine that sorts it and writes it as
// a run, after waiting for the previous one: the bulk's writer fills the
// next buffer meanwhile. Runs hold their postings as entries of
// runPostingBytes, their values as entries of uvarint(len(key)) key, op
// byte (0 delete, 1 set), uvarint(len(value)) value.
func (b *pebbleBulk) spill() error {
	if err := b.waitSpill(); err != nil {
		return err
	}
	dir, err := b.runDir()
	if err != nil {
		return err
	}
	ps, scratch, vs, inOrder := b.postings, b.scratch, b.values, !b.idsOutOfOrder
	b.postings, b.scratch, b.spare, b.values = b.spare[:0], nil, nil, nil
	b.reset()
	done := make(chan error, 1)
	b.spilling = done
	go func() { done <- b.writeRunOf(dir, ps, scratch, vs, inOrder) }()
	return nil
}

// waitSpill waits for the spill in flight, if any, and returns its error.
func (b *pebbleBulk) waitSpill() error {
	if b.spilling == nil {
		return nil
	}
	err := <-b.spilling
	b.spilling = nil
	return err
}

// writeRunOf sorts a buffer and writes it as the next run, in spill's
// goroutine; it leaves the buffer's two posting slices in b.spare and
// b.scratch, for the next buffer and the next sort.
func (b *pebbleBulk) writeRunOf(dir string, ps, scratch []bulkPosting, vs []bulkValue, idsInOrder bool) error {
	ps, scratch, vs = b.sortBuffer(ps, scratch, vs, idsInOrder)
	defer func() { b.spare, b.scratch = ps[:0], scratch }()
	fs := b.s.fs
	var run bulkRun
	if len(ps) > 0 {
		run.starts = b.starts(ps)
		run.postings = make([]string, len(run.starts)-1)
		for p := range run.postings {
			part := ps[run.starts[p]:run.starts[p+1]]
			if len(part) == 0 {
				continue
			}
			run.postings[p] = fs.PathJoin(dir, fmt.Sprintf("run-%06d-postings-%03d", len(b.runs), p))
			if err := b.writeRun(run.postings[p], func(w *bufio.Writer) error { return writePostings(w, part) }); err != nil {
				return err
			}
		}
	}
	if len(vs) > 0 {
		w := &segmentWriter{fs: fs, name: fs.PathJoin(dir, fmt.Sprintf("run-%06d-values", len(b.runs))), size: b.segmentBytes()}
		err := writeBuffered(w, func(bw *bufio.Writer) error { return writeValues(bw, vs) })
		run.values = w.names
		if err != nil {
			return err
		}
	}
	b.runs = append(b.runs, run)
	return nil
}

// writeRun creates the file name and writes it with write.
func (b *pebbleBulk) writeRun(name string, write func(w *bufio.Writer) error) error {
	f, err := b.s.fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	return writeBuffered(f, write)
}

// writeBuffered writes to f with write, through a buffer of 1 MiB, and
// closes f.
func writeBuffered(f io.WriteCloser, write func(w *bufio.Writer) error) error {
	w := bufio.NewWriterSize(f, 1<<20)
	err := write(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeRead closes f, the run file name, which has been read, and
// removes it: its space can go.
func removeRead(fs vfs.FS, f vfs.File, name string) error {
	err := f.Close()
	if rerr := fs.Remove(name); err == nil {
		err = rerr
	}
	return err
}

// bulkValueSegments is the number of files a full buffer's values are
// cut into. Commit's merge removes a run's segment once it has read it,
// so what the runs keep on disk beyond what the merge has yet to read is
// at most a segment per run: a sixteenth of the runs.
const bulkValueSegments = 16

// bulkMinSegment is the least size of a values segment (tests lower it).
var bulkMinSegment int64 = 1 << 20

// segmentBytes is the size of a run's values segments.
func (b *pebbleBulk) segmentBytes() int64 {
	return max(bulkMinSegment, b.s.bulkBytes/bulkValueSegments)
}

// segmentWriter writes a stream as files NAME-n of size bytes each (the
// last one shorter).
type segmentWriter struct {
	fs    vfs.FS
	name  string
	size  int64
	f     vfs.File
	n     int64 // bytes in f
	names []string
}

func (w *segmentWriter) Write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		if w.f == nil || w.n == w.size {
			if err := w.Close(); err != nil {
				return done, err
			}
			name := fmt.Sprintf("%s-%04d", w.name, len(w.names))
			f, err := w.fs.Create(name, vfs.WriteCategoryUnspecified)
			if err != nil {
				return done, err
			}
			w.f, w.n, w.names = f, 0, append(w.names, name)
		}
		k := int(min(int64(len(p)), w.size-w.n))
		n, err := w.f.Write(p[:k])
		done, w.n, p = done+n, w.n+int64(n), p[n:]
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Close closes the current file.
func (w *segmentWriter) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// segmentReader reads the files a segmentWriter wrote as one stream, and
// removes each file once it has read it to the end.
type segmentReader struct {
	fs    vfs.FS
	names []string
	f     vfs.File
}

func (r *segmentReader) Read(p []byte) (int, error) {
	for {
		if r.f == nil {
			if len(r.names) == 0 {
				return 0, io.EOF
			}
			f, err := r.fs.Open(r.names[0])
			if err != nil {
				return 0, err
			}
			r.f = f
		}
		n, err := r.f.Read(p)
		if n > 0 || len(p) == 0 {
			return n, nil // an error comes back with the next Read
		}
		if err != io.EOF {
			if err == nil {
				err = io.ErrNoProgress
			}
			return 0, err
		}
		if err := r.release(); err != nil {
			return 0, err
		}
	}
}

// release closes and removes the file being read.
func (r *segmentReader) release() error {
	err := removeRead(r.fs, r.f, r.names[0])
	r.f, r.names = nil, r.names[1:]
	return err
}

// close closes the file being read, if any (the bulk's directory is
// removed with the files left).
func (r *segmentReader) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

func writePostings(w *bufio.Writer, ps []bulkPosting) error {
	var e [runPostingBytes]byte
	for _, p := range ps {
		binary.BigEndian.PutUint64(e[:], p.key)
		binary.BigEndian.PutUint64(e[8:], p.id)
		e[16] = 1
		if p.del {
			e[16] = 0
		}
		if _, err := w.Write(e[:]); err != nil {
			return err
		}
	}
	return nil
}

func writeValues(w *bufio.Writer, vs []bulkValue) error {
	var hdr [binary.MaxVarintLen64]byte
	for _, v := range vs {
		w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(v.key)))])
		w.Write(v.key)
		op := byte(1)
		if v.del {
			op = 0
		}
		w.WriteByte(op)
		w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(v.value)))])
		if _, err := w.Write(v.value); err != nil {
			return err
		}
	}
	return nil
}

// Commit implements Batch: it merges the runs and the buffer, writes the
// tables and ingests them. On error nothing is applied and the bulk is
// empty.
func (b *pebbleBulk) Commit(ctx context.Context) error {
	s := b.s
	if b.closed || s.closed.Load() {
		return ErrClosed
	}
	if err := s.h.err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer b.discard()
	if b.err != nil {
		return s.h.describe("bulk", b.err)
	}
	if b.n == 0 {
		return nil
	}
	tables, err := b.writeTables()
	if err != nil {
		if s.h.err() != nil {
			return s.h.err()
		}
		var fe *FaultError
		if errors.As(err, &fe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return s.h.describe("bulk", err)
	}
	if len(tables) == 0 {
		return nil
	}
	s.dropIters() // ingestion may flush the memtable they pin
	err, _ = s.run(ctx, "ingest", func() error { return s.db.Ingest(ctx, tables) })
	if err != nil {
		return err
	}
	s.gen.Add(1)
	return nil
}

// writeTables merges the runs and the buffer into tables in the bulk's
// directory and returns their paths: the values with the first part's
// postings, and the parts taken in turn by bulkWriters goroutines.
func (b *pebbleBulk) writeTables() (paths []string, err error) {
	s := b.s
	if err := b.waitSpill(); err != nil {
		return nil, err
	}
	b.postings, _, b.values = b.sortBuffer(b.postings, b.scratch, b.values, !b.idsOutOfOrder)
	// The other two buffers are not needed again before the next spill:
	// the collector may have them while the tables are written.
	b.scratch, b.spare = nil, nil
	if _, err := b.runDir(); err != nil { // before the goroutines use it
		return nil, err
	}
	values := []bulkSource{}
	// The merge's read buffers share the bulk's budget: each run's values
	// and, per part being written, each run's postings read at most that
	// divided among them (1 MiB and 4096 postings at most, 16 KiB and 256
	// postings at least), so that a small budget's many runs do not take
	// many times it.
	nruns := int64(max(1, len(b.runs)))
	valueBuf := int(min(1<<20, max(16<<10, b.s.bulkBytes/(4*nruns))))
	postingBuf := int(min(postingSourceBuffer, max(256, b.s.bulkBytes/(4*nruns*int64(bulkWriters())*runPostingBytes))))
	for _, run := range b.runs {
		if len(run.values) > 0 {
			r := &segmentReader{fs: s.fs, names: run.values}
			defer r.close()
			values = append(values, &runSource{r: bufio.NewReaderSize(r, valueBuf), name: run.values[0]})
		}
	}
	values = append(values, &memSource{values: b.values, i: -1})
	memStarts := b.starts(b.postings)

	parts := len(b.splits) + 1
	tables := make([][]string, parts)
	errs := make([]error, parts)
	var failed atomic.Bool
	part := func(p int) {
		var sources []*postingSource
		defer func() {
			for _, src := range sources {
				src.close()
			}
		}()
		for i, run := range b.runs {
			if len(run.postings) == 0 || run.postings[p] == "" {
				continue
			}
			f, err := s.fs.Open(run.postings[p])
			if err != nil {
				errs[p] = err
				failed.Store(true)
				return
			}
			sources = append(sources, &postingSource{age: i, name: run.postings[p], fs: s.fs,
				f: f, left: run.starts[p+1] - run.starts[p], bufN: postingBuf})
		}
		sources = append(sources, &postingSource{age: len(b.runs), mem: b.postings[memStarts[p]:memStarts[p+1]], inMem: true})
		t := tableStream{b: b, name: fmt.Sprintf("table-%d", p), failed: &failed}
		var vm *merge
		if p == 0 {
			vm = newMerge(values)
		}
		tables[p], errs[p] = t.write(vm, newPostingMerge(sources))
		if errs[p] != nil {
			failed.Store(true)
		}
	}
	if b.rw != nil {
		b.rw.flush() // its last tables are written while the parts are
	}
	var next atomic.Int64 // the next part to write
	writer := func() {
		for p := int(next.Add(1) - 1); p < parts && !failed.Load(); p = int(next.Add(1) - 1) {
			part(p)
		}
	}
	var wg sync.WaitGroup
	for range min(bulkWriters(), parts) - 1 {
		wg.Go(writer)
	}
	writer()
	wg.Wait()
	if b.rw != nil {
		rtables, err := b.rw.wait()
		b.rw = nil
		tables, errs = append(tables, rtables), append(errs, err)
	}
	for _, ts := range tables {
		paths = append(paths, ts...)
	}
	if err := firstError(errs); err != nil {
		return nil, err
	}
	err = b.syncs.wait()
	b.syncs = nil
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// firstError returns the first error of errs that is not errBulkStopped,
// or else the first that is not nil, or nil.
func firstError(errs []error) error {
	var first error
	for _, err := range errs {
		if err != nil && !errors.Is(err, errBulkStopped) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// errBulkStopped stops a part's goroutine when another has failed.
var errBulkStopped = errors.New("store: bulk: another part failed")

// tableStream writes a sequence of entries in increasing key order as
// tables NAME-n.sst in the bulk's directory.
type tableStream struct {
	b         *pebbleBulk
	name      string
	failed    *atomic.Bool // set when another stream has failed
	w         *sstable.Writer
	kind      byte // the kind of the keys in w's table
	paths     []string
	n         int
	unchecked int // bytes of entries since the last size estimate
}

// write writes the values of vm (if not nil), then the postings of pm,
// and returns the tables' paths.
func (t *tableStream) write(vm *merge, pm *postingMerge) ([]string, error) {
	defer func() {
		if t.w != nil {
			t.w.Close()
		}
	}()
	if vm != nil {
		for vm.next() {
			src := vm.top()
			if err := t.add(src.key(), src.value(), src.del()); err != nil {
				return nil, err
			}
		}
		if err := vm.err(); err != nil {
			return nil, err
		}
	}
	var kb [postingKeyLen]byte
	for pm.next() {
		if err := t.add(postingKey(&kb, pm.key, pm.id), nil, pm.del); err != nil {
			return nil, err
		}
	}
	if err := pm.err(); err != nil {
		return nil, err
	}
	if err := t.finish(); err != nil {
		return nil, err
	}
	return t.paths, nil
}

func (t *tableStream) add(key, value []byte, del bool) error {
	if t.n&4095 == 0 {
		if err := t.b.s.h.err(); err != nil {
			return err
		}
		if t.failed.Load() {
			return errBulkStopped
		}
	}
	t.n++
	if t.w != nil && key[0] != t.kind {
		// One kind of record per table: a table spanning documents and
		// postings would also span the metadata keys between them, which
		// sit in the memtable, and an ingested table overlapping them
		// cannot go to the last level.
		if err := t.finish(); err != nil {
			return err
		}
	}
	if t.w == nil {
		path, w, err := t.b.newTable(t.name, len(t.paths))
		if err != nil {
			return err
		}
		t.w, t.paths = w, append(t.paths, path)
	}
	t.kind = key[0]
	var err error
	if del {
		err = t.w.Delete(key)
	} else {
		err = t.w.Set(key, value)
	}
	if err != nil {
		return err
	}
	// The table's size is estimated only every sizeCheckBytes of entries
	// (the estimate costs about as much as adding a posting).
	t.unchecked += len(key) + len(value)
	if t.unchecked >= sizeCheckBytes() {
		t.unchecked = 0
		if t.w.Raw().EstimatedSize() >= bulkTableBytes {
			return t.finish()
		}
	}
	return nil
}

// sizeCheckBytes is how many bytes of entries a table takes between two
// estimates of its size: 64 KiB, a thousandth of a table (at most a
// sixteenth of bulkTableBytes, which tests lower).
func sizeCheckBytes() int { return int(min(64<<10, bulkTableBytes/16)) }

// finish closes the current table and hands it to the bulk's syncer (a
// table must be synced before Ingest).
func (t *tableStream) finish() error {
	if t.w == nil {
		return nil
	}
	err := t.w.Close()
	t.w, t.unchecked = nil, 0
	if err == nil {
		t.b.syncs.todo <- t.paths[len(t.paths)-1]
	}
	return err
}

// discard drops the buffer, the runs and the record tables.
func (b *pebbleBulk) discard() {
	b.waitSpill()
	b.reset()
	if b.rw != nil {
		b.rw.failed.Store(true) // stops it writing what it was given
		b.rw.flush()
		b.rw.wait()
		b.rw = nil
	}
	b.dn = 0
	b.n, b.err, b.runs = 0, nil, nil
	b.splits, b.splitsChosen = nil, false
	if b.syncs != nil {
		b.syncs.wait()
		b.syncs = nil
	}
	if b.dir != "" {
		b.s.fs.RemoveAll(b.dir)
		b.dir = ""
	}
}

// Close implements Batch: it discards what was not committed.
func (b *pebbleBulk) Close() {
	if !b.closed {
		b.discard()
		b.postings, b.scratch, b.spare, b.values = nil, nil, nil, nil
		b.closed = true
	}
}

// recordWriter writes the records of a sorted bulk as tables
// records-n.sst, in a goroutine of its own, so that encoding them
// overlaps the work of the bulk's writer (who computes the records and
// their postings). The records come to it copied into chunks of about
// recordChunkBytes, recordChunks of them at most in flight.
type recordWriter struct {
	cur    *recordChunk
	made   int
	full   chan *recordChunk // to the goroutine
	free   chan *recordChunk // back from it
	done   chan struct{}     // closed when the goroutine has returned
	failed atomic.Bool       // the writer failed, or the bulk stops it
	t      tableStream
	err    error // the goroutine's first error, read after done
}

const (
	recordChunkBytes = 4 << 20
	recordChunks     = 3
)

// recordChunk holds records: each entry's key and value one after the
// other in buf.
type recordChunk struct {
	buf  []byte
	ents []recordEntry
}

type recordEntry struct {
	klen, vlen int
	del        bool
}

func newRecordWriter(b *pebbleBulk) *recordWriter {
	w := &recordWriter{full: make(chan *recordChunk, recordChunks), free: make(chan *recordChunk, recordChunks), done: make(chan struct{})}
	w.t = tableStream{b: b, name: "records", failed: &w.failed}
	w.cur = w.chunk()
	go w.run()
	return w
}

// chunk returns an empty chunk: a new one while fewer than recordChunks
// exist, else one the goroutine has emptied.
func (w *recordWriter) chunk() *recordChunk {
	select {
	case c := <-w.free:
		return c
	default:
	}
	if w.made < recordChunks {
		w.made++
		return &recordChunk{buf: make([]byte, 0, recordChunkBytes)}
	}
	return <-w.free
}

// add copies a record into the current chunk, first handing that to the
// goroutine if the record does not fit.
func (w *recordWriter) add(key, value []byte, del bool) {
	if w.failed.Load() {
		return // Commit returns the error
	}
	if c := w.cur; len(c.ents) > 0 && len(c.buf)+len(key)+len(value) > cap(c.buf) {
		w.full <- c
		w.cur = w.chunk()
	}
	c := w.cur
	c.buf = append(append(c.buf, key...), value...)
	c.ents = append(c.ents, recordEntry{klen: len(key), vlen: len(value), del: del})
}

// flush hands the current chunk to the goroutine and tells it no more
// come.
func (w *recordWriter) flush() {
	if w.cur == nil {
		return
	}
	if len(w.cur.ents) > 0 {
		w.full <- w.cur
	}
	w.cur = nil
	close(w.full)
}

// wait waits for the goroutine (after flush) and returns the tables it
// wrote.
func (w *recordWriter) wait() ([]string, error) {
	<-w.done
	return w.t.paths, w.err
}

func (w *recordWriter) run() {
	defer close(w.done)
	for c := range w.full {
		off := 0
		for _, e := range c.ents {
			if w.err != nil {
				break
			}
			key := c.buf[off : off+e.klen]
			value := c.buf[off+e.klen : off+e.klen+e.vlen]
			off += e.klen + e.vlen
			w.err = w.t.add(key, value, e.del)
		}
		if w.err != nil {
			w.failed.Store(true)
		}
		c.buf, c.ents = c.buf[:0], c.ents[:0]
		w.free <- c
	}
	if err := w.t.finish(); w.err == nil {
		w.err = err
	}
}

// postingSource yields the postings of a run's part, or of the buffer's,
// in increasing (key, id) order.
type postingSource struct {
	key, id uint64
	del     bool
	age     int // the run's number: of equal postings the newest wins

	inMem bool
	mem   []bulkPosting

	fs       vfs.FS
	f        vfs.File // the run's file of the part, until read and removed
	name     string
	left     int64 // postings not yet read from f
	buf      []byte
	bufN     int // postings buf holds (postingSourceBuffer when 0)
	pos, end int
	readErr  error
}

// postingSourceBuffer is the number of postings a run's source reads at
// once.
const postingSourceBuffer = 4096

func (s *postingSource) next() bool {
	if s.inMem {
		if len(s.mem) == 0 {
			return false
		}
		p := &s.mem[0]
		s.key, s.id, s.del = p.key, p.id, p.del
		s.mem = s.mem[1:]
		return true
	}
	if s.pos == s.end && !s.fill() {
		return false
	}
	e := s.buf[s.pos : s.pos+runPostingBytes]
	s.key = binary.BigEndian.Uint64(e)
	s.id = binary.BigEndian.Uint64(e[8:])
	s.del = e[16] == 0
	s.pos += runPostingBytes
	return true
}

// fill reads the next postings of the run into buf.
func (s *postingSource) fill() bool {
	if s.readErr != nil {
		return false
	}
	if s.left == 0 {
		if s.f != nil {
			err := removeRead(s.fs, s.f, s.name)
			s.f = nil
			if err != nil {
				s.readErr = fmt.Errorf("bulk run %s: %w", s.name, err)
			}
		}
		return false
	}
	if s.buf == nil {
		if s.bufN <= 0 {
			s.bufN = postingSourceBuffer
		}
		s.buf = make([]byte, s.bufN*runPostingBytes)
	}
	n := min(s.left, int64(s.bufN))
	if _, err := io.ReadFull(s.f, s.buf[:n*runPostingBytes]); err != nil {
		s.readErr = fmt.Errorf("bulk run %s: %w", s.name, err)
		return false
	}
	s.left -= n
	s.pos, s.end = 0, int(n)*runPostingBytes
	return true
}

// close closes the run's file if it is still open.
func (s *postingSource) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// before reports whether s's posting comes before t's in the merge: the
// smaller (key, id), and of equal ones the newer.
func (s *postingSource) before(t *postingSource) bool {
	if s.key != t.key {
		return s.key < t.key
	}
	if s.id != t.id {
		return s.id < t.id
	}
	return s.age > t.age
}

// postingMerge yields the postings of several sources in (key, id) order;
// of equal postings only the newest source's. Its heap is typed, so a
// comparison is two integer compares and no call through an interface.
type postingMerge struct {
	h       []*postingSource
	started bool
	key, id uint64
	del     bool
	fail    error
}

func newPostingMerge(sources []*postingSource) *postingMerge {
	m := &postingMerge{}
	for _, s := range sources {
		if s.next() {
			m.h = append(m.h, s)
		} else if s.readErr != nil {
			m.fail = s.readErr
		}
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

// next advances past the current posting in every source that holds it
// and positions on the next one.
func (m *postingMerge) next() bool {
	if m.started {
		key, id := m.key, m.id
		m.advance()
		for len(m.h) > 0 && m.h[0].key == key && m.h[0].id == id {
			m.advance()
		}
	}
	m.started = true
	if m.fail != nil || len(m.h) == 0 {
		return false
	}
	top := m.h[0]
	m.key, m.id, m.del = top.key, top.id, top.del
	return true
}

// advance moves the source at the top of the heap to its next posting.
func (m *postingMerge) advance() {
	s := m.h[0]
	if !s.next() {
		if s.readErr != nil && m.fail == nil {
			m.fail = s.readErr
		}
		last := len(m.h) - 1
		m.h[0] = m.h[last]
		m.h = m.h[:last]
	}
	m.down(0)
}

func (m *postingMerge) down(i int) {
	h := m.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			j = r
		}
		if !h[j].before(h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (m *postingMerge) err() error { return m.fail }

// A bulkSource yields value writes (records and metadata) in increasing
// key order, each key once.
type bulkSource interface {
	next() bool
	key() []byte
	value() []byte
	del() bool
	err() error
}

// memSource yields the buffer's values, sorted and deduplicated.
type memSource struct {
	values []bulkValue
	i      int
}

func (m *memSource) next() bool {
	if m.i+1 < len(m.values) {
		m.i++
		return true
	}
	return false
}

func (m *memSource) key() []byte   { return m.values[m.i].key }
func (m *memSource) value() []byte { return m.values[m.i].value }
func (m *memSource) del() bool     { return m.values[m.i].del }
func (m *memSource) err() error    { return nil }

// runSource reads a run's values file written by spill.
type runSource struct {
	r        *bufio.Reader
	name     string
	k, v     []byte
	isDel    bool
	readErr  error
	finished bool
}

func (r *runSource) next() bool {
	if r.finished {
		return false
	}
	klen, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		r.finished = true
		return false
	}
	if err == nil {
		r.k = growTo(r.k, int(klen))
		_, err = io.ReadFull(r.r, r.k)
	}
	var op byte
	if err == nil {
		op, err = r.r.ReadByte()
	}
	var vlen uint64
	if err == nil {
		vlen, err = binary.ReadUvarint(r.r)
	}
	if err == nil {
		r.v = growTo(r.v, int(vlen))
		_, err = io.ReadFull(r.r, r.v)
	}
	if err != nil {
		r.readErr = fmt.Errorf("bulk run %s: %w", r.name, err)
		r.finished = true
		return false
	}
	r.isDel = op == 0
	return true
}

func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func (r *runSource) key() []byte   { return r.k }
func (r *runSource) value() []byte { return r.v }
func (r *runSource) del() bool     { return r.isDel }
func (r *runSource) err() error    { return r.readErr }

// merge yields the writes of several sources in key order; of equal keys
// it yields the one of the latest source (the highest index) only.
type merge struct {
	h    mergeHeap
	cur  *mergeItem
	all  []*mergeItem
	fail error
}

type mergeItem struct {
	src bulkSource
	age int
}

type mergeHeap []*mergeItem

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytesCompare(h[i].src.key(), h[j].src.key()); c != 0 {
		return c < 0
	}
	return h[i].age > h[j].age // the newest first
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newMerge(sources []bulkSource) *merge {
	m := &merge{}
	for i, s := range sources {
		it := &mergeItem{src: s, age: i}
		m.all = append(m.all, it)
		if s.next() {
			m.h = append(m.h, it)
		} else if err := s.err(); err != nil {
			m.fail = err
		}
	}
	heap.Init(&m.h)
	return m
}

// next advances past the current key in every source that holds it and
// positions on the next key.
func (m *merge) next() bool {
	if m.fail != nil {
		return false
	}
	if m.cur != nil {
		key := string(m.cur.src.key())
		m.advance(m.cur)
		for len(m.h) > 0 && string(m.h[0].src.key()) == key {
			m.advance(m.h[0])
		}
		m.cur = nil
	}
	if m.fail != nil || len(m.h) == 0 {
		return false
	}
	m.cur = m.h[0]
	return true
}

// advance moves the source at the top of the heap to its next key.
func (m *merge) advance(it *mergeItem) {
	if it.src.next() {
		heap.Fix(&m.h, 0)
		return
	}
	if err := it.src.err(); err != nil {
		m.fail = err
	}
	heap.Pop(&m.h)
}

func (m *merge) top() bulkSource { return m.cur.src }

func (m *merge) err() error { return m.fail }
