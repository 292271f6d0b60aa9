package spill

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// magic opens every run file, followed by the record width (uint32,
// big-endian).
const magic = "NDSPILL1"

// ErrCorrupt is wrapped by errors for a run file that is truncated, has a
// bad header or fails its checksum.
var ErrCorrupt = errors.New("spill: corrupt run file")

// File is a file being written by an FS.
type File interface {
	io.Writer
	Name() string
	Sync() error
	Close() error
}

// FS is the file system a Sorter and a Writer use; OS is the default. Tests
// substitute one that fails on purpose.
type FS interface {
	CreateTemp(dir, pattern string) (File, error)
	Rename(from, to string) error
	Remove(name string) error
	Open(name string) (io.ReadCloser, error)
	// SyncDir makes a rename in dir durable.
	SyncDir(dir string) error
}

// OS is the operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }
func (osFS) Rename(from, to string) error                 { return os.Rename(from, to) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) Open(name string) (io.ReadCloser, error)      { return os.Open(name) }
func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Writer writes a run file of fixed-width records atomically: nothing
// appears under its name until Commit returns nil.
type Writer struct {
	fs    FS
	path  string
	width int
	f     File
	cw    countWriter
	bw    *bufio.Writer
	zw    *zstd.Encoder
	n     int64
	err   error
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// runWindow is the zstd window of a run file.
const runWindow = 64 << 10

// Create starts a run file of records of width bytes, to be named path on
// Commit. fs nil means OS.
func Create(fs FS, path string, width int) (*Writer, error) {
	if width <= 0 {
		return nil, fmt.Errorf("spill: record width %d", width)
	}
	if fs == nil {
		fs = OS
	}
	f, err := fs.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	w := &Writer{fs: fs, path: path, width: width, f: f}
	w.cw.w = f
	w.bw = bufio.NewWriterSize(&w.cw, 1<<16)
	// A small window: a merge holds a decoder, and its window, per run
	// (the default 8 MiB took 14 MiB a run, 64 KiB takes about 0.3 MiB), and sorted records gain
	// little from a longer one.
	w.zw, err = zstd.NewWriter(w.bw, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true),
		zstd.WithWindowSize(runWindow))
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("spill: %w", err)
	}
	var h [len(magic) + 4]byte
	copy(h[:], magic)
	binary.BigEndian.PutUint32(h[len(magic):], uint32(width))
	if _, err := w.zw.Write(h[:]); err != nil {
		w.Abort()
		return nil, fmt.Errorf("spill: %w", err)
	}
	return w, nil
}

// Write appends records (a whole number of them) to the run.
func (w *Writer) Write(recs []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(recs)%w.width != 0 {
		return fmt.Errorf("spill: %d bytes is not a whole number of %d-byte records", len(recs), w.width)
	}
	if _, err := w.zw.Write(recs); err != nil {
		w.err = fmt.Errorf("spill: write %s: %w", w.path, err)
		return w.err
	}
	w.n += int64(len(recs) / w.width)
	return nil
}

// Records is the number of records written so far.
func (w *Writer) Records() int64 { return w.n }

// Commit finishes the file, syncs it and renames it to its path. It
// returns the number of compressed bytes written.
func (w *Writer) Commit() (int64, error) {
	if w.err != nil {
		w.Abort()
		return 0, w.err
	}
	err := w.zw.Close()
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	renamed := false
	if err == nil {
		err = w.fs.Rename(w.f.Name(), w.path)
		renamed = err == nil
	}
	if err == nil {
		err = w.fs.SyncDir(filepath.Dir(w.path))
	}
	if err != nil {
		if renamed {
			w.fs.Remove(w.path)
		}
		w.fs.Remove(w.f.Name())
		w.err = fmt.Errorf("spill: write %s: %w", w.path, err)
		return 0, w.err
	}
	w.err = errors.New("spill: writer committed")
	return w.cw.n, nil
}

// Abort removes the temporary file.
func (w *Writer) Abort() {
	if w.zw != nil {
		w.zw.Close()
	}
	w.f.Close()
	w.fs.Remove(w.f.Name())
	if w.err == nil {
		w.err = errors.New("spill: writer aborted")
	}
}

// Reader reads a run file's records in order.
type Reader struct {
	path  string
	width int
	rc    io.ReadCloser
	zr    *zstd.Decoder
	buf   []byte
	err   error
}

// Open opens a run file of records of width bytes. fs nil means OS.
func Open(fs FS, path string, width int) (*Reader, error) {
	if fs == nil {
		fs = OS
	}
	rc, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	zr, err := zstd.NewReader(bufio.NewReaderSize(rc, 1<<16), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("spill: %w", err)
	}
	r := &Reader{path: path, width: width, rc: rc, zr: zr, buf: make([]byte, width)}
	var h [len(magic) + 4]byte
	if _, err := io.ReadFull(zr, h[:]); err != nil || string(h[:len(magic)]) != magic {
		r.Close()
		return nil, fmt.Errorf("%w: %s: bad header", ErrCorrupt, path)
	}
	if got := int(binary.BigEndian.Uint32(h[len(magic):])); got != width {
		r.Close()
		return nil, fmt.Errorf("%w: %s: records of %d bytes, want %d", ErrCorrupt, path, got, width)
	}
	return r, nil
}

// Next returns the next record, valid until the following call, or false
// at the end or on an error (see Err).
func (r *Reader) Next() ([]byte, bool) {
	if r.err != nil {
		return nil, false
	}
	if _, err := io.ReadFull(r.zr, r.buf); err != nil {
		if err == io.EOF {
			r.err = io.EOF
		} else {
			r.err = fmt.Errorf("%w: %s: %v", ErrCorrupt, r.path, err)
		}
		return nil, false
	}
	return r.buf, true
}

// Err is the error that ended Next, nil at a clean end.
func (r *Reader) Err() error {
	if r.err == io.EOF {
		return nil
	}
	return r.err
}

// Close releases the file.
func (r *Reader) Close() error {
	r.zr.Close()
	return r.rc.Close()
}
