package corpus

import (
	"io"
	"sync"
)

// Decompression runs in a goroutine of its own, so that on two cores
// inflating gzip or zstd overlaps with splitting and parsing records
// instead of alternating with it. The goroutine reads the decompressor
// into a fixed set of asyncBlocks blocks of asyncBlockSize bytes (1 MiB in
// all per input) and hands them over in order; the parser returns each
// block when it has consumed it. Memory stays bounded whatever the
// compression ratio: the goroutine waits for a free block. The limits of
// the decompressors themselves (a record cap downstream, zstd's window
// cap) are unchanged.
const (
	asyncBlocks    = 4
	asyncBlockSize = 256 << 10
)

type asyncBlock struct {
	b      []byte
	n, off int
	err    error // the read error after these n bytes (io.EOF at the end)
}

// asyncReader is an io.Reader over a reader that a goroutine drains.
type asyncReader struct {
	full   chan *asyncBlock // filled blocks, in order
	free   chan *asyncBlock // blocks the goroutine may fill
	done   chan struct{}    // closed by stop
	exited chan struct{}    // closed when the goroutine returns
	blocks []*asyncBlock
	cur    *asyncBlock
	err    error
	once   sync.Once
}

// startAsync starts draining r into blocks (nil: new ones).
func startAsync(r io.Reader, blocks []*asyncBlock) *asyncReader {
	if len(blocks) == 0 {
		for range asyncBlocks {
			blocks = append(blocks, &asyncBlock{b: make([]byte, asyncBlockSize)})
		}
	}
	a := &asyncReader{
		full:   make(chan *asyncBlock, len(blocks)),
		free:   make(chan *asyncBlock, len(blocks)),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
		blocks: blocks,
	}
	for _, b := range blocks {
		a.free <- b
	}
	go a.run(r)
	return a
}

func (a *asyncReader) run(r io.Reader) {
	defer close(a.exited)
	for {
		var blk *asyncBlock
		select {
		case blk = <-a.free:
		case <-a.done:
			return
		}
		var n int
		var err error
		for n == 0 && err == nil {
			n, err = r.Read(blk.b)
		}
		blk.n, blk.off, blk.err = n, 0, err
		select {
		case a.full <- blk:
		case <-a.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read returns the drained bytes in order, then the reader's error.
func (a *asyncReader) Read(p []byte) (int, error) {
	for {
		if c := a.cur; c != nil {
			if c.off < c.n {
				n := copy(p, c.b[c.off:c.n])
				c.off += n
				return n, nil
			}
			if c.err != nil {
				a.err = c.err
			}
			a.cur = nil
			a.free <- c // never blocks: free holds every block at most once
		}
		if a.err != nil {
			return 0, a.err
		}
		a.cur = <-a.full
	}
}

// stop ends the goroutine. With wait, it returns once the goroutine has
// returned, and the blocks may be reused (it is then no longer using the
// decompressor either); without, the goroutine may still be blocked in a
// read (of standard input) and returns after it.
func (a *asyncReader) stop(wait bool) (blocks []*asyncBlock) {
	a.once.Do(func() { close(a.done) })
	if !wait {
		return nil
	}
	<-a.exited
	return a.blocks
}
