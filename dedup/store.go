package dedup

import (
	"context"
	"fmt"
	"time"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
)

// matchStored is stage 3 with a store that held an index before this run:
// every document to index is queried against it (index.QueryBatch, before
// this run's documents are added), and the verified pairs with documents
// of earlier runs are kept. Candidates named like a document of this run
// are left out: this run replaces them, and the join compares it.
func (r *run) matchStored() error {
	if !r.prior {
		return nil
	}
	start := r.ev.begin(StageQuery, int64(len(r.unique)))
	docs := r.res.Docs
	// In batches, whose full sketch values are widened from memory or
	// read back (the sketch file out of core, the high halves' file in
	// memory: values.go).
	const batch = 4096
	progress := r.ev.progress(StageQuery, "docs")
	l := r.newLoader(true, false).withFeatures()
	qs := make([]*index.Doc, 0, batch)
	for lo := 0; lo < len(r.unique); lo += batch {
		part := r.unique[lo:min(lo+batch, len(r.unique))]
		ds, err := l.load(part)
		if err != nil {
			return err
		}
		qs = qs[:0]
		for k := range ds {
			qs = append(qs, &ds[k])
		}
		o := index.BatchOptions{Workers: r.o.Workers}
		if progress != nil {
			o.Progress = func(done, _ int64) { progress(int64(lo)+done, int64(len(r.unique))) }
		}
		err = r.x.QueryBatch(r.ctx, qs, r.isLocal, o, func(k int, ms []index.Match, cands int) error {
			r.sum.Candidates += int64(cands)
			d := &docs[part[k]]
			for _, m := range ms {
				c := m.Comparison
				r.res.Pairs = append(r.res.Pairs, Pair{A: m.Name, B: d.Name, SeqA: -1, SeqB: d.Seq, Similarity: c.Similarity(),
					Estimate: c.Estimate.J, StdErr: c.Estimate.StdErr, Exact: c.Exact >= 0, Keys: c.Keys})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
	}
	r.ev.end(StageQuery, int64(len(r.unique)), start)
	return nil
}

// adds is the background work of stage 6 (store): this run's documents
// added to the index while the join, verification and clustering run.
type adds struct {
	r *run
	// ctx is the run's context, cancelled too when the adds fail
	// (Options.Clustered gets it); failed is closed then.
	ctx    context.Context
	failed chan struct{}
	done   chan error
	start  time.Time
	took   time.Duration // written before done is sent
}

// startAdds adds the documents to index to the store in the background,
// in batches, then records the fingerprint filter and compacts the store.
func (r *run) startAdds() *adds {
	if r.o.Store == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(r.ctx) // cancelled on failure, or with Run's context
	a := &adds{r: r, ctx: ctx, failed: make(chan struct{}), done: make(chan error, 1), start: time.Now()}
	go func() {
		err := r.addAll()
		a.took = time.Since(a.start)
		if err != nil {
			close(a.failed)
			cancel()
		} // else a.ctx lives on until Run's context ends: Clustered may still run
		a.done <- err
	}()
	return a
}

// wait waits for the adds and reports their stage.
func (a *adds) wait() error {
	if a == nil {
		return nil
	}
	err := <-a.done
	if err == nil {
		a.r.ev.endAfter(StageStore, int64(len(a.r.unique)), a.took)
	}
	return err
}

// clustered calls Options.Clustered with the run's final clusters, beside
// the adds: its context is done once the adds fail, and stop (which
// cancels the run's context) stops the adds when it fails. It returns nil
// once the adds have failed, so that Run returns their error (which wins
// over the one it causes in Clustered); a run whose adds have failed
// already writes no outputs.
func (r *run) clustered(a *adds, stop context.CancelFunc) error {
	if err := r.tally(); err != nil {
		return err
	}
	if a == nil {
		return r.o.Clustered(r.ctx, r.res)
	}
	if a.hasFailed() {
		return nil
	}
	err := r.o.Clustered(a.ctx, r.res)
	if a.hasFailed() {
		return nil
	}
	if err != nil {
		stop()
	}
	return err
}

// hasFailed reports whether the adds have failed.
func (a *adds) hasFailed() bool {
	select {
	case <-a.failed:
		return true
	default:
		return false
	}
}

func (r *run) addAll() error {
	// Batches of 2048 documents, fewer under a small budget: loadAhead
	// holds three, of 8·k bytes of values a document, which with the
	// index documents made of them stay within a sixty-fourth of the
	// budget (at 96 MiB batches of a 1,000 documents held 7.7 MB, a
	// tenth of the heap, beside the join).
	batchSize := 2048
	if r.o.Memory > 0 {
		batchSize = int(min(2048, max(256, r.o.Memory/(256*8*int64(max(1, r.x.Config().Sketch.K))))))
	}
	progress := r.ev.progress(StageStore, "docs")
	// One bulk for the whole run: the postings are sorted and ingested
	// as finished tables instead of written one by one (index.Bulk). In
	// memory the documents go in id order, so that their records go
	// straight into tables (index.NewSortedBulk); out of core in the
	// order of the sketch file, which is read back sequentially.
	order := r.unique
	newBulk := r.x.NewBulk
	if r.ext == nil {
		order = r.idOrder(nil)
		newBulk = r.x.NewSortedBulk
	}
	bk, err := newBulk()
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	defer bk.Close()
	// The batches are loaded (their values widened, their high halves
	// read) by a goroutine of their own, ahead of the adds, which keep
	// this one busy: on two processors the two overlap.
	batches, stop := r.loadAhead(order, batchSize)
	defer stop()
	batch := make([]*index.Doc, 0, batchSize)
	for lb := range batches {
		if lb.err != nil {
			return lb.err
		}
		batch = batch[:0]
		for k := range lb.docs {
			batch = append(batch, &lb.docs[k])
		}
		res, err := bk.Add(r.ctx, batch...)
		lb.release()
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		if res.Duplicates != 0 {
			return fmt.Errorf("dedup: internal error: %d repeated names among the documents added", res.Duplicates)
		}
		if progress != nil {
			progress(int64(lb.lo+len(batch)), int64(len(order)))
		}
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if err := bk.Commit(r.ctx); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	bk.Close()
	if err := r.x.Flush(r.ctx); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	if err := r.x.Compact(r.ctx); err != nil {
		return fmt.Errorf("dedup: compacting the store: %w", err)
	}
	return nil
}

// loadedBatch is a batch of documents to add, loaded by loadAhead.
type loadedBatch struct {
	docs    []index.Doc // valid until release
	lo      int         // the position of the first in the order
	err     error       // the load failed: the last batch
	release func()      // hands the batch's buffers back to the loader
}

// loadAheadBatches is the number of batches loadAhead holds at once: one
// being added, one ready, one being loaded.
const loadAheadBatches = 3

// loadAhead loads the documents at the positions order, batchSize at a
// time, for the store's adds (the full values; in memory in id order),
// in a goroutine of its own, up to loadAheadBatches batches ahead. The
// batches come in order on the channel, which is closed after the last
// one, after a batch whose load failed, or once the run's context is
// done. stop ends the goroutine; call it when done with the channel,
// before the run returns.
func (r *run) loadAhead(order []int, batchSize int) (<-chan loadedBatch, func()) {
	type buffers struct {
		vals []uint64
		docs []index.Doc
		fids []uint64
		fws  []feature.Feature
	}
	free := make(chan *buffers, loadAheadBatches)
	for range loadAheadBatches {
		free <- &buffers{}
	}
	out := make(chan loadedBatch, loadAheadBatches-1)
	quit := make(chan struct{})
	done := make(chan struct{})
	l := r.newLoader(true, r.ext == nil)
	if r.o.StoreFeatures {
		l.withFeatures() // out of core, from the feature file
	} else {
		l.withShortFeatures() // the short documents' (TrimFeatures below)
	}
	go func() {
		defer close(done)
		defer close(out)
		for lo := 0; lo < len(order); lo += batchSize {
			var b *buffers
			select {
			case b = <-free:
			case <-quit:
				return
			case <-r.ctx.Done():
				return
			}
			// The loader fills the batch's buffers (growing them if it
			// must) and keeps them until the batch is released.
			l.vals, l.docs, l.fids, l.fws = b.vals, b.docs, b.fids, b.fws
			docs, err := l.load(order[lo:min(lo+batchSize, len(order))])
			b.vals, b.docs, b.fids, b.fws = l.vals, l.docs, l.fids, l.fws
			l.vals, l.docs, l.fids, l.fws = nil, nil, nil, nil
			for k := range docs {
				if !r.o.StoreFeatures {
					docs[k].TrimFeatures() // a short document's stay, in short form
				}
			}
			select {
			case out <- loadedBatch{docs: docs, lo: lo, err: err, release: func() { free <- b }}:
			case <-quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out, func() {
		close(quit)
		<-done
	}
}
