package chunk

import (
	"errors"
	"fmt"
	"io"
)

// Cutter finds cut points in byte slices. The zero value is not usable; make
// one with NewCutter. A Cutter is not safe for concurrent use (it keeps its
// ring buffer between calls to stay allocation-free); use one per goroutine.
type Cutter struct {
	opts Options
	w    winnower
}

// NewCutter returns a Cutter for opts (defaults filled in).
func NewCutter(opts Options) (*Cutter, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Cutter{opts: opts, w: newWinnower(opts)}, nil
}

// Options returns the options in effect, defaults filled in.
func (c *Cutter) Options() Options { return c.opts }

// Cuts appends to dst the end offset of every chunk of data, in order (the
// last one is len(data); an empty input has no chunks), and returns the
// extended slice. Cost: O(len(data)), no allocation once the ring buffer has
// grown (about 1 ns per byte in Fast mode).
func (c *Cutter) Cuts(dst []int, data []byte) []int {
	c.w.reset()
	for s := 0; s < len(data); {
		e := c.w.cut(data, s, true)
		dst = append(dst, e)
		s = e
	}
	return dst
}

// Cuts is the one-shot form of Cutter.Cuts.
func Cuts(dst []int, data []byte, opts Options) ([]int, error) {
	c, err := NewCutter(opts)
	if err != nil {
		return dst, err
	}
	return c.Cuts(dst, data), nil
}

// Chunk is one chunk of a stream.
type Chunk struct {
	// Offset is the position of the chunk's first byte in the stream.
	Offset int64
	// Data holds the chunk's bytes; it is the dst passed to Next, extended,
	// and stays valid until the caller reuses that buffer.
	Data []byte
}

// ReadError reports a read failure and the stream offset reached.
type ReadError struct {
	Offset int64
	Err    error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("chunk: read at offset %d: %v", e.Offset, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// DefaultBufSize is the Chunker's read buffer size unless 2*Max+2 is larger.
const DefaultBufSize = 1 << 20

// Chunker splits a stream into chunks in constant memory: a read buffer of
// about 1 MiB plus the caller's chunk buffer. Its cut points equal those of
// Cutter.Cuts over the whole stream. The zero value is not usable; make one
// with NewChunker. Not safe for concurrent use.
type Chunker struct {
	r          io.Reader
	buf        []byte
	start, end int   // unread data is buf[start:end]
	off        int64 // stream offset of buf[0]
	eof        bool
	err        error
	w          winnower
	max        int
}

// NewChunker returns a Chunker reading r.
func NewChunker(r io.Reader, opts Options) (*Chunker, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	n := DefaultBufSize
	if 2*opts.Max+2 > n {
		n = 2*opts.Max + 2
	}
	return &Chunker{r: r, buf: make([]byte, n), w: newWinnower(opts), max: opts.Max}, nil
}

// Reset makes k read a new stream r, keeping its buffers.
func (k *Chunker) Reset(r io.Reader) {
	k.r, k.start, k.end, k.off, k.eof, k.err = r, 0, 0, 0, false, nil
	k.w.reset()
}

// Next returns the next chunk, its bytes appended to dst[:0]. At the end of
// the stream it returns io.EOF; a read failure is returned as a *ReadError
// (and again on later calls). Cost: O(chunk length), no allocation when dst
// has room for Max bytes.
func (k *Chunker) Next(dst []byte) (Chunk, error) {
	for !k.eof && k.end-k.start <= k.max {
		if k.err != nil {
			return Chunk{}, k.err
		}
		k.fill()
	}
	if k.start == k.end {
		if k.err != nil {
			return Chunk{}, k.err
		}
		return Chunk{}, io.EOF
	}
	e := k.w.cut(k.buf[:k.end], k.start, k.eof)
	c := Chunk{Offset: k.off + int64(k.start), Data: append(dst[:0], k.buf[k.start:e]...)}
	k.start = e
	return c, nil
}

// fill reads more data, compacting the buffer first when its tail is short.
func (k *Chunker) fill() {
	if len(k.buf)-k.end <= k.max && k.start > 0 {
		n := copy(k.buf, k.buf[k.start:k.end])
		k.w.rebase(k.start)
		k.off += int64(k.start)
		k.start, k.end = 0, n
	}
	n, err := k.r.Read(k.buf[k.end:])
	k.end += n
	if errors.Is(err, io.EOF) {
		k.eof = true
		return
	}
	if err != nil {
		k.err = &ReadError{Offset: k.off + int64(k.end), Err: err}
	}
}
