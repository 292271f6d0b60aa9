package corpus

import (
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdFrameBytes is the input of one frame of a zstdFrames writer: the
// encoder's window (so a frame loses only the matches a stream would find
// across its first bytes and the frame before), small enough that a frame
// per worker and the frames queued for writing stay a few MiB.
const zstdFrameBytes = 1 << 20

// zstdFrames is a zstd compressor that cuts its input into independent
// frames of zstdFrameBytes, encodes up to one frame per processor at once
// ahead of the writes, and writes the frames in order: concatenated
// frames are one valid zstd stream, which any decoder reads back as the
// input. A stream encoder compresses on one core; a large kept corpus,
// most of what a dedup run writes and the last thing it writes, is thus
// compressed on every core the run leaves idle. Not safe for concurrent
// use.
type zstdFrames struct {
	enc   *zstd.Encoder // EncodeAll is safe for concurrent use
	buf   []byte        // the frame being filled
	sem   chan struct{} // a token per frame being encoded
	queue chan *zstdFrame
	free  sync.Pool // []byte frame buffers
	done  chan struct{}

	frames bool // a frame was queued

	mu  sync.Mutex
	err error // the first write error (by the writing goroutine)
}

type zstdFrame struct {
	in, out []byte
	ready   chan struct{}
}

// newZstdFrames returns a zstdFrames writing to w with the encoder
// options opts (their concurrency is set to the number of workers).
func newZstdFrames(w io.Writer, opts ...zstd.EOption) (*zstdFrames, error) {
	workers := max(1, min(runtime.GOMAXPROCS(0), 8))
	enc, err := zstd.NewWriter(nil, append(opts, zstd.WithEncoderConcurrency(workers))...)
	if err != nil {
		return nil, err
	}
	z := &zstdFrames{enc: enc, sem: make(chan struct{}, workers), queue: make(chan *zstdFrame, workers+1), done: make(chan struct{})}
	go z.write(w, z.queue)
	return z, nil
}

// write writes the frames in order as they are encoded; after a failed
// write it only waits for the rest.
func (z *zstdFrames) write(w io.Writer, queue <-chan *zstdFrame) {
	defer close(z.done)
	for f := range queue {
		<-f.ready
		if z.failed() == nil {
			if _, err := w.Write(f.out); err != nil {
				z.mu.Lock()
				z.err = err
				z.mu.Unlock()
			}
		}
		z.free.Put(f.in[:0])
	}
}

func (z *zstdFrames) failed() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.err
}

// flush hands the frame being filled to a worker (waiting for a free one)
// and queues it for writing.
func (z *zstdFrames) flush() {
	if len(z.buf) == 0 && z.frames {
		return
	}
	z.frames = true
	if z.buf == nil {
		z.buf = []byte{}
	}
	f := &zstdFrame{in: z.buf, ready: make(chan struct{})}
	z.buf = nil
	z.sem <- struct{}{}
	go func() {
		f.out = z.enc.EncodeAll(f.in, make([]byte, 0, len(f.in)/2))
		<-z.sem
		close(f.ready)
	}()
	z.queue <- f
}

// Write implements io.Writer.
func (z *zstdFrames) Write(p []byte) (int, error) {
	if err := z.failed(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		if z.buf == nil {
			if b, ok := z.free.Get().([]byte); ok {
				z.buf = b
			} else {
				z.buf = make([]byte, 0, zstdFrameBytes)
			}
		}
		c := min(len(p), zstdFrameBytes-len(z.buf))
		z.buf = append(z.buf, p[:c]...)
		p = p[c:]
		if len(z.buf) == zstdFrameBytes {
			z.flush()
		}
	}
	return n, nil
}

// Close writes what is left as a last frame (an empty input as one empty
// frame, as a stream encoder would), waits for every frame to be written,
// and returns the first write error.
func (z *zstdFrames) Close() error {
	if z.queue == nil {
		return errors.New("corpus: zstd writer closed twice")
	}
	z.flush()
	close(z.queue)
	z.queue = nil
	<-z.done
	z.enc.Close()
	return z.failed()
}
