package store

// faultFS: the filesystem a Pebble store runs on, which freezes the
// store's directory at the first fault (see the top of pebble_fault.go).
//
// Before the fault every call goes to the disk, and faultFS only records
// the last I/O error and its file. A failed create, write or sync of one of
// Pebble's own files in the directory (a log, the MANIFEST, a flush's
// table, OPTIONS, a marker) is the fault: faultFS records it, and
// reports the call done to Pebble, which must not see it. From then on
// nothing in the directory changes:
//
//   - a log or MANIFEST (open, or created after the fault) takes writes
//     and syncs and drops them: Pebble never reads them back while open;
//   - any other file of Pebble's in the directory (a flush's table, and
//     small files such as OPTIONS and markers) goes on in memory: a file
//     open at the fault keeps its bytes on disk up to the fault and the
//     rest in memory (the failed write included, so a partial write on a
//     real full disk is the torn end of an orphan table, never read), and
//     one created after it lives in memory; reads see both. These are the
//     flushes of the memtables in flight, so memory stays bounded by them;
//   - a compaction's output, a table copied in by an ingestion, and the
//     bulk's files (in subdirectories) fail with the fault: a compaction
//     could rewrite the whole store, and Pebble survives these failures;
//   - removals and renames act on names in memory: a removed file of the
//     disk is hidden, a renamed one is read from where it lies;
//   - files outside the directory (a checkpoint's copies) are not the
//     store's, and go to the disk as before.
//
// So the directory is what a crash at the fault would leave, but Pebble
// runs on to a normal Close, whose goroutines all end.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// fileKind is what faultFS does with a file once the store has failed.
type fileKind uint8

const (
	fileOther  fileKind = iota // outside the store's directory: the disk's
	fileSink                   // a log or MANIFEST: writes dropped
	fileKept                   // flush output, OPTIONS, markers: kept in memory
	fileRefuse                 // compaction output, ingestion copy, bulk file: fails
	fileDir                    // the directory itself: syncs dropped
)

// maxKeptSmall bounds a file of unspecified purpose kept in memory after
// the fault (OPTIONS and markers take a few KiB).
const maxKeptSmall = 1 << 20

// faultFS wraps the filesystem a Pebble store runs on (see above).
type faultFS struct {
	vfs.FS
	h  *health
	ov overlay
}

func (fs *faultFS) Unwrap() vfs.FS { return fs.FS }

// frozen reports whether the store has failed: the directory is frozen.
func (fs *faultFS) frozen() bool { return fs.h.fault.Load() != nil }

// own reports whether name is in the store's directory (or below it: a
// bulk's tables). Pebble also writes elsewhere: a checkpoint's copies
// (Checkpoint), whose failures are the backup's, not the store's, so they
// are not recorded as the store's last I/O error.
func (fs *faultFS) own(name string) bool {
	rel, err := filepath.Rel(fs.h.dir, name)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// top reports whether name lies in the store's directory itself, where
// Pebble keeps its files (a bulk's are in subdirectories).
func (fs *faultFS) top(name string) bool {
	return filepath.Dir(name) == filepath.Clean(fs.h.dir)
}

// isLog reports whether name is one of the store's write-ahead logs.
func (fs *faultFS) isLog(name string) bool {
	return strings.HasSuffix(name, ".log") && fs.top(name)
}

// kind classifies a file by its place, name and Pebble's write category.
func (fs *faultFS) kind(name string, category vfs.DiskWriteCategory) fileKind {
	switch base := filepath.Base(name); {
	case !fs.own(name):
		return fileOther
	case !fs.top(name):
		return fileRefuse
	case strings.HasSuffix(base, ".log") || strings.HasPrefix(base, "MANIFEST-") || category == "pebble-wal" || category == "pebble-manifest":
		return fileSink
	case category == "pebble-memtable-flush":
		return fileKept
	case category == vfs.WriteCategoryUnspecified && !strings.HasSuffix(base, ".sst") && !strings.HasSuffix(base, ".blob"):
		return fileKept
	default:
		return fileRefuse
	}
}

func (fs *faultFS) note(op, path string, err error) error {
	if err != nil && !os.IsNotExist(err) && !os.IsExist(err) && fs.own(path) {
		fs.h.noteIO(op, path, err)
	}
	return err
}

// fault records err, met doing op on name, as the store's fault: the
// directory is frozen from here.
func (fs *faultFS) fault(op, name string, err error) {
	fs.h.noteIO(op, name, err)
	fs.h.failWith(opOfFile(name), err)
}

// opOfFile names the operation a failed file is part of.
func opOfFile(name string) string {
	switch base := filepath.Base(name); {
	case strings.HasSuffix(base, ".log"):
		return "write-ahead log"
	case strings.HasPrefix(base, "MANIFEST-"):
		return "manifest"
	case strings.HasSuffix(base, ".sst"):
		return "flush"
	}
	return "write"
}

// refused is the error of a write the failed store refuses.
func (fs *faultFS) refused() error { return fs.h.err() }

func (fs *faultFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	k := fs.kind(name, category)
	if k != fileOther && fs.frozen() {
		return fs.createFrozen(name, k)
	}
	f, err := fs.FS.Create(name, category)
	if err != nil {
		if k == fileSink || k == fileKept {
			fs.fault("create", name, err)
			return fs.createFrozen(name, k)
		}
		return nil, fs.note("create", name, err)
	}
	return &faultFile{File: f, fs: fs, name: name, kind: k}, nil
}

// createFrozen creates name on the frozen store.
func (fs *faultFS) createFrozen(name string, k fileKind) (vfs.File, error) {
	if k == fileRefuse {
		fs.h.backoff()
		return nil, fs.refused()
	}
	m := &memFile{sink: k == fileSink}
	if k == fileKept && !strings.HasSuffix(name, ".sst") && !strings.HasSuffix(name, ".blob") {
		m.limit = maxKeptSmall
	}
	fs.ov.put(name, m)
	return &memHandle{fs: fs, m: m, name: name}, nil
}

func (fs *faultFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	k := fs.kind(newname, category)
	if k != fileOther && fs.frozen() {
		fs.ov.remove(oldname, true)
		return fs.createFrozen(newname, k)
	}
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		if k == fileSink || k == fileKept {
			fs.fault("create", newname, err)
			fs.ov.remove(oldname, true)
			return fs.createFrozen(newname, k)
		}
		return nil, fs.note("create", newname, err)
	}
	return &faultFile{File: f, fs: fs, name: newname, kind: k}, nil
}

func (fs *faultFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if f, err, ok := fs.ov.open(fs, name); ok {
		return f, err
	}
	f, err := fs.FS.Open(name, opts...)
	if err != nil {
		return nil, fs.note("open", name, err)
	}
	return &faultFile{File: f, fs: fs, name: name, kind: fs.kind(name, vfs.WriteCategoryUnspecified)}, nil
}

func (fs *faultFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	k := fs.kind(name, category)
	if f, err, ok := fs.ov.open(fs, name); ok {
		return f, err
	}
	if k != fileOther && fs.frozen() {
		if k == fileRefuse {
			return nil, fs.refused()
		}
		// A file of the disk opened for writing: it goes on in memory.
		fi, err := fs.FS.Stat(name)
		if err != nil {
			return nil, err
		}
		m := &memFile{sink: k == fileSink, disk: name, diskLen: fi.Size()}
		fs.ov.put(name, m)
		return &memHandle{fs: fs, m: m, name: name}, nil
	}
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	if err != nil {
		return nil, fs.note("open", name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fs.note("open", name, err)
	}
	return &faultFile{File: f, fs: fs, name: name, kind: k, off: fi.Size()}, nil
}

func (fs *faultFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	if err != nil {
		return nil, fs.note("open", name, err)
	}
	k := fileOther
	if fs.own(name) {
		k = fileDir
	}
	return &faultFile{File: f, fs: fs, name: name, kind: k}, nil
}

func (fs *faultFS) Stat(name string) (vfs.FileInfo, error) {
	if fi, err, ok := fs.ov.stat(name); ok {
		return fi, err
	}
	return fs.FS.Stat(name)
}

func (fs *faultFS) List(dir string) ([]string, error) {
	names, err := fs.FS.List(dir)
	if err != nil || filepath.Clean(dir) != filepath.Clean(fs.h.dir) {
		return names, err
	}
	return fs.ov.list(names), nil
}

func (fs *faultFS) Remove(name string) error {
	if fs.own(name) && fs.top(name) && fs.frozen() {
		if !fs.ov.remove(name, false) && !fs.onDisk(name) {
			return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
		}
		fs.ov.remove(name, true)
		return nil
	}
	return fs.note("remove", name, fs.FS.Remove(name))
}

func (fs *faultFS) RemoveAll(name string) error {
	if fs.own(name) && fs.frozen() && (fs.top(name) || filepath.Clean(name) == filepath.Clean(fs.h.dir)) {
		return nil // the directory's own files stay as they were at the fault
	}
	return fs.FS.RemoveAll(name)
}

// onDisk reports whether name is a file on disk that the overlay does not
// hide.
func (fs *faultFS) onDisk(name string) bool {
	if fs.ov.hidden(name) {
		return false
	}
	_, err := fs.FS.Stat(name)
	return err == nil
}

func (fs *faultFS) Rename(oldname, newname string) error {
	if fs.own(newname) && fs.top(newname) && fs.frozen() {
		if fs.ov.rename(oldname, newname) {
			return nil
		}
		fi, err := fs.FS.Stat(oldname)
		if err != nil || fs.ov.hidden(oldname) {
			return &os.PathError{Op: "rename", Path: oldname, Err: os.ErrNotExist}
		}
		// The disk's file stays where it is, read under its new name.
		fs.ov.put(newname, &memFile{disk: oldname, diskLen: fi.Size()})
		fs.ov.remove(oldname, true)
		return nil
	}
	return fs.note("rename", newname, fs.FS.Rename(oldname, newname))
}

func (fs *faultFS) Link(oldname, newname string) error {
	if fs.own(newname) && fs.frozen() {
		return fs.refused() // an ingestion: it fails, and Pebble survives that
	}
	return fs.note("link", newname, fs.FS.Link(oldname, newname))
}

func (fs *faultFS) MkdirAll(dir string, perm os.FileMode) error {
	if fs.own(dir) && fs.frozen() {
		if fi, err := fs.FS.Stat(dir); err == nil && fi.IsDir() {
			return nil
		}
		return fs.refused()
	}
	return fs.note("mkdir", dir, fs.FS.MkdirAll(dir, perm))
}

func (fs *faultFS) Lock(name string) (io.Closer, error) {
	c, err := fs.FS.Lock(name)
	return c, fs.note("lock", name, err)
}

// faultFile is a file of the disk, opened through faultFS. A file Pebble
// writes moves to memory (mem) at its first write or sync after the fault.
type faultFile struct {
	vfs.File
	fs   *faultFS
	name string
	kind fileKind

	mu  sync.Mutex              // held by writes and syncs
	off int64                   // the end of what was written to the disk
	mem atomic.Pointer[memFile] // set once writes go to memory
}

// moved returns the file's memory, moving it there if the store has failed
// (nil: the file is still the disk's).
func (f *faultFile) moved() *memFile {
	if m := f.mem.Load(); m != nil || !f.fs.frozen() {
		return m
	}
	m := &memFile{sink: f.kind == fileSink, disk: f.name, diskLen: f.off}
	if f.kind == fileKept {
		f.fs.ov.put(f.name, m)
	}
	f.mem.Store(m)
	return m
}

// failed handles the error of a write or sync to the disk: the store's
// fault for Pebble's files, which then go on in memory (moved is true), or
// the error itself for the others.
func (f *faultFile) failed(op string, err error) (moved bool, _ error) {
	switch f.kind {
	case fileSink, fileKept, fileDir:
		f.fs.fault(op, f.name, err)
		return true, nil
	}
	return false, f.fs.note(op, f.name, err)
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.kind == fileOther {
		n, err := f.File.Write(p)
		return n, f.fs.note("write", f.name, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writeAtLocked(p, f.off, true)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if f.kind == fileOther {
		n, err := f.File.WriteAt(p, off)
		return n, f.fs.note("write", f.name, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writeAtLocked(p, off, false)
}

// writeAtLocked writes p at off, to the disk before the fault and to
// memory after it (seq: a sequential Write).
func (f *faultFile) writeAtLocked(p []byte, off int64, seq bool) (int, error) {
	if f.mem.Load() == nil && !f.fs.frozen() {
		var n int
		var err error
		if seq {
			n, err = f.File.Write(p)
		} else {
			n, err = f.File.WriteAt(p, off)
		}
		if err == nil {
			f.off = max(f.off, off+int64(n))
			return n, nil
		}
		if moved, err := f.failed("write", err); !moved {
			return n, err
		}
		// The failed write goes to memory whole, after what was written
		// before it (a partial write stays on disk as a torn end).
	}
	if f.kind == fileRefuse {
		return 0, f.fs.refused()
	}
	m := f.moved()
	n, err := m.writeAt(p, off)
	f.off = max(f.off, off+int64(n))
	return n, err
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if m := f.mem.Load(); m != nil && !m.sink {
		return m.readAt(p, off, f.File)
	}
	n, err := f.File.ReadAt(p, off)
	if err == io.EOF {
		return n, err
	}
	return n, f.fs.note("read", f.name, err)
}

// Preallocate does nothing. Pebble preallocates each write-ahead log by
// 110% of MemTableBytes (70 MiB at the default), which is most of the
// disk a small store takes (issue 13: 217 MB for a 1 MB corpus); the log
// then grows as it is written. See footprint_test.go.
func (f *faultFile) Preallocate(offset, length int64) error { return nil }

// sync runs one of the file's syncs.
func (f *faultFile) sync(fn func() error) error {
	if f.kind == fileOther {
		return f.fs.note("sync", f.name, fn())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mem.Load() == nil && !f.fs.frozen() {
		err := fn()
		if err == nil {
			return nil
		}
		if moved, err := f.failed("sync", err); !moved {
			return err
		}
	}
	if f.kind == fileRefuse {
		return f.fs.refused()
	}
	if f.kind != fileDir {
		f.moved()
	}
	return nil // the disk is frozen: nothing to sync
}

func (f *faultFile) Sync() error     { return f.sync(f.File.Sync) }
func (f *faultFile) SyncData() error { return f.sync(f.File.SyncData) }

func (f *faultFile) SyncTo(length int64) (bool, error) {
	full := true
	err := f.sync(func() error {
		var err error
		full, err = f.File.SyncTo(length)
		return err
	})
	return full, err
}

func (f *faultFile) Stat() (vfs.FileInfo, error) {
	if m := f.mem.Load(); m != nil {
		return m.info(f.name), nil
	}
	return f.File.Stat()
}

// Close closes the disk's file; a failure to do so after the fault (a
// write the kernel reports late) is part of what the fault dropped.
func (f *faultFile) Close() error {
	err := f.File.Close()
	if err != nil && f.kind != fileOther && f.fs.frozen() {
		return nil
	}
	return f.fs.note("close", f.name, err)
}

// memFile is a file, or the part of one, that lives in memory after the
// fault: the first diskLen bytes are those of the file disk on disk (if
// any), the rest are data. A sink keeps only its size.
type memFile struct {
	mu      sync.Mutex
	disk    string
	diskLen int64
	data    []byte
	size    int64 // of a sink
	sink    bool
	limit   int64 // bound on data, 0: none
	mod     time.Time
}

func (m *memFile) writeAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mod = time.Now()
	if m.sink {
		m.size = max(m.size, off+int64(len(p)), m.diskLen)
		return len(p), nil
	}
	if off < m.diskLen {
		return 0, fmt.Errorf("store: write at %d into the part of %s on the frozen disk", off, m.disk)
	}
	end := off - m.diskLen + int64(len(p))
	if m.limit > 0 && end > m.limit {
		return 0, errors.New("store: file too large to keep in memory after a fault")
	}
	if end > int64(len(m.data)) {
		m.data = slices.Grow(m.data, int(end)-len(m.data))[:end]
	}
	copy(m.data[off-m.diskLen:], p)
	return len(p), nil
}

func (m *memFile) length() int64 {
	if m.sink {
		return max(m.size, m.diskLen)
	}
	return m.diskLen + int64(len(m.data))
}

// readAt reads from the file; disk, if not nil, is an open handle of the
// disk's part.
func (m *memFile) readAt(p []byte, off int64, disk vfs.File) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sink {
		return 0, fmt.Errorf("store: %s was written after a fault and not kept", m.disk)
	}
	n := 0
	if off < m.diskLen {
		want := min(int64(len(p)), m.diskLen-off)
		if disk == nil {
			return 0, errors.New("store: no handle to the disk's part of a file")
		}
		k, err := disk.ReadAt(p[:want], off)
		n += k
		if err != nil && !(err == io.EOF && int64(k) == want) {
			return n, err
		}
		off += int64(k)
	}
	if off >= m.diskLen && n < len(p) {
		i := off - m.diskLen
		if i < int64(len(m.data)) {
			n += copy(p[n:], m.data[i:])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memFile) info(name string) vfs.FileInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return memInfo{name: filepath.Base(name), size: m.length(), mod: m.mod}
}

type memInfo struct {
	name string
	size int64
	mod  time.Time
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() os.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) DeviceID() vfs.DeviceID {
	return vfs.DeviceID{}
}

// memHandle is an open memFile.
type memHandle struct {
	fs   *faultFS
	m    *memFile
	name string
	pos  int64 // of Read and Write

	mu   sync.Mutex
	disk vfs.File // opened at the first read of the disk's part
}

func (h *memHandle) diskFile() (vfs.File, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.disk == nil && h.m.disk != "" && h.m.diskLen > 0 {
		f, err := h.fs.FS.Open(h.m.disk)
		if err != nil {
			return nil, err
		}
		h.disk = f
	}
	return h.disk, nil
}

func (h *memHandle) ReadAt(p []byte, off int64) (int, error) {
	d, err := h.diskFile()
	if err != nil {
		return 0, err
	}
	return h.m.readAt(p, off, d)
}

func (h *memHandle) Read(p []byte) (int, error) {
	n, err := h.ReadAt(p, h.pos)
	h.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (h *memHandle) Write(p []byte) (int, error) {
	n, err := h.m.writeAt(p, h.pos)
	h.pos += int64(n)
	return n, err
}

func (h *memHandle) WriteAt(p []byte, off int64) (int, error) { return h.m.writeAt(p, off) }
func (h *memHandle) Preallocate(offset, length int64) error   { return nil }
func (h *memHandle) Stat() (vfs.FileInfo, error)              { return h.m.info(h.name), nil }
func (h *memHandle) Sync() error                              { return nil }
func (h *memHandle) SyncData() error                          { return nil }
func (h *memHandle) SyncTo(length int64) (bool, error)        { return true, nil }
func (h *memHandle) Prefetch(offset, length int64) error      { return nil }
func (h *memHandle) Fd() uintptr                              { return vfs.InvalidFd }

func (h *memHandle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.disk != nil {
		h.disk.Close()
		h.disk = nil
	}
	return nil
}

// overlay holds the names of the store's directory after the fault: files
// made (or renamed) since, and files of the disk removed since.
type overlay struct {
	active atomic.Bool // anything recorded: lookups needed
	mu     sync.Mutex
	files  map[string]*memFile
	gone   map[string]bool
}

func (o *overlay) put(name string, m *memFile) {
	name = filepath.Clean(name)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.files == nil {
		o.files, o.gone = map[string]*memFile{}, map[string]bool{}
	}
	o.files[name] = m
	delete(o.gone, name)
	o.active.Store(true)
}

// remove removes name from memory, and hides it on disk if hide; it
// reports whether name was in memory.
func (o *overlay) remove(name string, hide bool) bool {
	name = filepath.Clean(name)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.files == nil {
		o.files, o.gone = map[string]*memFile{}, map[string]bool{}
	}
	_, ok := o.files[name]
	delete(o.files, name)
	if hide {
		o.gone[name] = true
		o.active.Store(true)
	}
	return ok
}

func (o *overlay) rename(oldname, newname string) bool {
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	o.mu.Lock()
	defer o.mu.Unlock()
	m, ok := o.files[oldname]
	if !ok {
		return false
	}
	delete(o.files, oldname)
	o.files[newname] = m
	delete(o.gone, newname)
	return true
}

func (o *overlay) hidden(name string) bool {
	if !o.active.Load() {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gone[filepath.Clean(name)]
}

func (o *overlay) lookup(name string) (m *memFile, gone, ok bool) {
	if !o.active.Load() {
		return nil, false, false
	}
	name = filepath.Clean(name)
	o.mu.Lock()
	defer o.mu.Unlock()
	if m, ok := o.files[name]; ok {
		return m, false, true
	}
	if o.gone[name] {
		return nil, true, true
	}
	return nil, false, false
}

// open opens name from memory if the overlay has it (ok).
func (o *overlay) open(fs *faultFS, name string) (_ vfs.File, _ error, ok bool) {
	m, gone, ok := o.lookup(name)
	switch {
	case !ok:
		return nil, nil, false
	case gone:
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}, true
	}
	return &memHandle{fs: fs, m: m, name: name}, nil, true
}

func (o *overlay) stat(name string) (_ vfs.FileInfo, _ error, ok bool) {
	m, gone, ok := o.lookup(name)
	switch {
	case !ok:
		return nil, nil, false
	case gone:
		return nil, &os.PathError{Op: "stat", Path: name, Err: os.ErrNotExist}, true
	}
	return m.info(name), nil, true
}

// list turns the names the disk lists in the store's directory into those
// the overlay shows.
func (o *overlay) list(names []string) []string {
	if !o.active.Load() {
		return names
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := names[:0:0]
	seen := map[string]bool{}
	for _, n := range names {
		if !o.goneBase(n) {
			out = append(out, n)
			seen[n] = true
		}
	}
	for p := range o.files {
		if b := filepath.Base(p); !seen[b] {
			out = append(out, b)
			seen[b] = true
		}
	}
	slices.Sort(out)
	return out
}

// goneBase reports whether the file base of the store's directory is
// hidden; o.mu is held.
func (o *overlay) goneBase(base string) bool {
	for p := range o.gone {
		if filepath.Base(p) == base {
			return true
		}
	}
	return false
}
