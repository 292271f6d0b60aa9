package main

// Standard input for dedup: the kept documents are written by reading the
// inputs a second time, which standard input cannot be. So while dedup
// reads standard input to sketch it, the bytes it reads are copied into a
// spool file in the work directory, in S2's stream format
// (github.com/klauspost/compress/s2), and the second pass (the kept
// corpus, the report) reads the spool instead. The first GiB is stored in
// uncompressed S2 blocks (compressing and decompressing it took 0.8 of 7.9
// CPU-s of a run on 100,000 documents of 300 words, 224 MB, for a file that
// lives only as long as the run); what follows is S2-compressed (a tenth of
// zstd's CPU at its fastest level), so that a stream of many GB needs about
// half its size on disk. The kept
// documents of standard input go to kept/stdin.<format>.zst, zstd-compressed
// whatever the input's compression: a stream too big to keep is the reason
// to pipe it.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/s2"

	"github.com/neardup/neardup/corpus"
)

// stdinSpoolName is the spool's file name in the work directory.
const stdinSpoolName = "stdin.spool.s2"

// stdinSpool is a reader of standard input that copies what it reads into
// an S2-compressed file. Not safe for concurrent use.
type stdinSpool struct {
	path string
	src  io.Reader
	w    io.WriteCloser // the spool file
	bw   *bufio.Writer
	zw   *s2.Writer // uncompressed blocks up to spoolRawLimit bytes, then compressed
	raw  bool       // zw writes uncompressed blocks
	n    int64      // bytes spooled (uncompressed)
	err  error      // the first write error: the spool is short
	done bool
}

// newStdinSpool creates the spool dir/stdin.spool.s2 (and dir) for src.
func newStdinSpool(dir string, src io.Reader) (*stdinSpool, error) {
	path := filepath.Join(dir, stdinSpoolName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, spoolError(path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, spoolError(path, err)
	}
	s, err := newSpoolTo(path, f, src)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return s, nil
}

// spoolRawLimit is how many bytes of standard input are spooled in
// uncompressed blocks before the spool compresses (a variable for tests).
var spoolRawLimit int64 = 1 << 30

// newSpoolTo spools src into w, which path names in errors.
func newSpoolTo(path string, w io.WriteCloser, src io.Reader) (*stdinSpool, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	s := &stdinSpool{path: path, src: src, w: w, bw: bw}
	s.raw = spoolRawLimit > 0
	s.zw = newSpoolWriter(bw, s.raw)
	return s, nil
}

// newSpoolWriter is an S2 stream writer of uncompressed or compressed
// blocks. One encoder goroutine, S2's default level (about 1 GB/s a core;
// zstd's fastest took 1.4 of 8.6 CPU-s of a 100k-document run and its
// reading back 0.5), 256 KiB blocks: the spool must not take cores or
// memory from the sketches. Two S2 streams written one after the other
// read back as one (a stream may repeat its identifier chunk).
func newSpoolWriter(w io.Writer, raw bool) *s2.Writer {
	opts := []s2.WriterOption{s2.WriterConcurrency(1), s2.WriterBlockSize(256 << 10)}
	if raw {
		opts = append(opts, s2.WriterUncompressed())
	}
	return s2.NewWriter(w, opts...)
}

// spool writes p to the spool, switching from uncompressed to compressed
// blocks at spoolRawLimit bytes.
func (s *stdinSpool) spool(p []byte) error {
	if s.raw && s.n+int64(len(p)) >= spoolRawLimit {
		k := spoolRawLimit - s.n
		if _, err := s.zw.Write(p[:k]); err != nil {
			return err
		}
		s.n += k
		p = p[k:]
		// Close flushes the uncompressed stream; it does not close bw.
		if err := s.zw.Close(); err != nil {
			return err
		}
		s.raw = false
		s.zw = newSpoolWriter(s.bw, false)
	}
	if _, err := s.zw.Write(p); err != nil {
		return err
	}
	s.n += int64(len(p))
	return nil
}

// spoolError names the spool once: an error about its own path is said
// without the path again.
func spoolError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return fmt.Errorf("spool of standard input %s: %s: %w", path, pe.Op, pe.Err)
	}
	return fmt.Errorf("spool of standard input %s: %w", path, err)
}

// Read reads src and spools what it read. After a failed spool write it
// returns that error: the input is not read further than it was kept.
func (s *stdinSpool) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.src.Read(p)
	if n > 0 {
		if werr := s.spool(p[:n]); werr != nil {
			s.err = spoolError(s.path, werr)
			return 0, s.err
		}
	}
	return n, err
}

// Finish flushes and closes the spool file. It returns the first write
// error, of Read's or its own; then the spool does not hold all that was
// read and must not be used. Calling it again returns the same.
func (s *stdinSpool) Finish() error {
	if s.done {
		return s.err
	}
	s.done = true
	err := s.zw.Close()
	if err == nil {
		err = s.bw.Flush()
	}
	if cerr := s.w.Close(); err == nil {
		err = cerr
	}
	if err != nil && s.err == nil {
		s.err = spoolError(s.path, err)
	}
	return s.err
}

// Open returns a reader of the spooled bytes (after Finish).
func (s *stdinSpool) Open() (io.ReadCloser, error) {
	if !s.done || s.err != nil {
		return nil, fmt.Errorf("spool of standard input %s: not complete", s.path)
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, spoolError(s.path, err)
	}
	zr := s2.NewReader(bufio.NewReaderSize(f, 256<<10), s2.ReaderMaxBlockSize(256<<10))
	return &spoolReader{zr: zr, f: f, path: s.path}, nil
}

// Remove closes and removes the spool file.
func (s *stdinSpool) Remove() error {
	s.Finish()
	if err := os.Remove(s.path); err != nil && !os.IsNotExist(err) {
		return spoolError(s.path, err)
	}
	return nil
}

// spoolReader decompresses the spool file.
type spoolReader struct {
	zr   *s2.Reader
	f    *os.File
	path string
}

func (r *spoolReader) Read(p []byte) (int, error) {
	n, err := r.zr.Read(p)
	if err != nil && err != io.EOF {
		err = spoolError(r.path, err)
	}
	return n, err
}

func (r *spoolReader) Close() error {
	return r.f.Close()
}

// stdinKeptWriter passes documents to a MirrorWriter, those of standard
// input renamed stdin.<format>.zst and written zstd-compressed.
type stdinKeptWriter struct {
	*corpus.MirrorWriter
	d corpus.Document
}

var _ corpus.FilterWriter = (*stdinKeptWriter)(nil)

// stdinKeptName is the kept file of standard input read in format f.
func stdinKeptName(f corpus.Format) string { return "stdin." + f.String() + ".zst" }

func (w *stdinKeptWriter) doc(d *corpus.Document) *corpus.Document {
	if d.Source != "-" {
		return d
	}
	w.d = *d
	w.d.Name, w.d.Compression = stdinKeptName(d.Format), corpus.CompressionZstd
	return &w.d
}

func (w *stdinKeptWriter) Write(d *corpus.Document) error { return w.MirrorWriter.Write(w.doc(d)) }
func (w *stdinKeptWriter) Drop(d *corpus.Document) error  { return w.MirrorWriter.Drop(w.doc(d)) }
func (w *stdinKeptWriter) Companion(d *corpus.Document) error {
	return w.MirrorWriter.Companion(w.doc(d))
}
