package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/neardup/neardup/server/api"
)

// ErrBatcherClosed is returned by Batcher.Add after Close.
var ErrBatcherClosed = errors.New("client: batcher closed")

// Batcher gathers single documents added by many goroutines (a crawler's
// fetchers, say) into add requests of up to BatchSize documents, sent at
// the latest MaxDelay after the first document of a batch arrives. Each
// Add waits for its batch to be acknowledged and returns its document's
// result, so a caller learns "seen before?" for its page while the server
// sees few, large requests. Within a batch documents are checked in
// arrival order, as if added one by one. Safe for concurrent use; one
// batch is in flight at a time.
type Batcher struct {
	c        *Client
	ifNew    bool
	maxDelay time.Duration
	in       chan pending
	done     chan struct{}
	once     sync.Once
	mu       sync.RWMutex
	closed   bool
}

type pending struct {
	doc   api.Document
	reply chan result
}

type result struct {
	res api.AddResult
	err error
}

// NewBatcher returns a Batcher adding through c, with if_new semantics
// when ifNew. maxDelay <= 0 means 10 ms.
func (c *Client) NewBatcher(ifNew bool, maxDelay time.Duration) *Batcher {
	if maxDelay <= 0 {
		maxDelay = 10 * time.Millisecond
	}
	b := &Batcher{c: c, ifNew: ifNew, maxDelay: maxDelay, in: make(chan pending), done: make(chan struct{})}
	go b.loop()
	return b
}

// Add queues doc and returns its result once its batch is acknowledged.
// If ctx ends first, Add returns ctx's error; the document may still be
// added with its batch.
func (b *Batcher) Add(ctx context.Context, doc api.Document) (api.AddResult, error) {
	p := pending{doc: doc, reply: make(chan result, 1)}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return api.AddResult{}, ErrBatcherClosed
	}
	select {
	case b.in <- p:
		b.mu.RUnlock()
	case <-ctx.Done():
		b.mu.RUnlock()
		return api.AddResult{}, ctx.Err()
	}
	select {
	case r := <-p.reply:
		return r.res, r.err
	case <-ctx.Done():
		return api.AddResult{}, ctx.Err()
	}
}

// Close sends what is queued, waits for it, and stops the batcher.
func (b *Batcher) Close() error {
	b.once.Do(func() {
		b.mu.Lock()
		b.closed = true
		close(b.in)
		b.mu.Unlock()
	})
	<-b.done
	return nil
}

func (b *Batcher) loop() {
	defer close(b.done)
	var batch []pending
	var timer <-chan time.Time
	flush := func() {
		if len(batch) == 0 {
			return
		}
		docs := make([]api.Document, len(batch))
		for i, p := range batch {
			docs[i] = p.doc
		}
		res, err := b.c.Add(context.Background(), docs, b.ifNew)
		for i, p := range batch {
			if i < len(res) {
				p.reply <- result{res: res[i]}
			} else {
				p.reply <- result{err: err}
			}
		}
		batch, timer = batch[:0], nil
	}
	for {
		select {
		case p, ok := <-b.in:
			if !ok {
				flush()
				return
			}
			batch = append(batch, p)
			if len(batch) == 1 {
				timer = time.After(b.maxDelay)
			}
			if len(batch) >= b.c.o.BatchSize {
				flush()
			}
		case <-timer:
			flush()
		}
	}
}
