package main

// The one worker pool of the commands: sketch and count read a corpus on
// one goroutine and work on batches of documents on all cores, in input
// order. It stays here, minimal, because the library's pipeline (package
// dedup) owns its own parallel stages; a command that only needs "every
// document through a function, in order" uses skPipeline rather than a
// pool of its own.

import (
	"context"
	"sync"

	"github.com/neardup/neardup/corpus"
)

// docBatch is a run of consecutive documents handed to one worker; out
// collects what the worker makes of them, in order.
type docBatch struct {
	docs []batchDoc
	out  []byte
	err  error
	done chan struct{}
}

// batchDoc is a document kept beyond the reader's next call.
type batchDoc struct {
	doc corpus.Document // a Clone of the reader's document
}

const (
	batchDocs  = 64
	batchBytes = 1 << 20
)

// skPipeline reads the corpus of paths, hands batches of documents to
// `workers` goroutines (each with its own state from newWorker: extractors,
// sampler, buffers) and calls emit with every batch in input order, on one
// goroutine; the first error of work or emit stops the run. Progress goes to
// stderr (a bar when interactive, a log line every few seconds otherwise).
// It returns the reader's statistics.
func skPipeline[W any](ctx context.Context, env *Env, what string, paths []string, cf featCorpusFlags, workers int,
	newWorker func() (W, error), work func(W, *docBatch) error, emit func(*docBatch) error) (corpus.Stats, error) {
	states := make([]W, workers)
	for i := range states {
		var err error
		if states[i], err = newWorker(); err != nil {
			return corpus.Stats{}, err
		}
	}
	r, err := openFeatCorpus(env, paths, cf, what)
	if err != nil {
		return corpus.Stats{}, err
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *docBatch, workers)
	ordered := make(chan *docBatch, 2*workers)
	var wg sync.WaitGroup
	for _, st := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				b.err = work(st, b)
				close(b.done)
			}
		}()
	}
	emitErr := make(chan error, 1)
	go func() {
		var first error
		for b := range ordered {
			<-b.done
			if first == nil {
				first = b.err
				if first == nil {
					first = emit(b)
				}
				if first != nil {
					cancel()
				}
			}
		}
		emitErr <- first
	}()

	prog := newFeatProgress(env, r, what)
	var readErr error
	b := &docBatch{done: make(chan struct{})}
	size := 0
	flush := func() {
		ordered <- b
		jobs <- b
		b = &docBatch{done: make(chan struct{})}
		size = 0
	}
	for r.Next() {
		if err := ctx.Err(); err != nil {
			readErr = err
			break
		}
		d := r.Doc()
		b.docs = append(b.docs, batchDoc{doc: *d.Clone()})
		size += len(d.Body)
		if len(b.docs) >= batchDocs || size >= batchBytes {
			flush()
		}
		prog.doc()
	}
	if len(b.docs) > 0 {
		flush()
	}
	close(jobs)
	close(ordered)
	wg.Wait()
	err = <-emitErr
	prog.finish()
	if err == nil {
		err = readErr
	}
	if err == nil {
		err = r.Err()
	}
	return r.Stats(), err
}
