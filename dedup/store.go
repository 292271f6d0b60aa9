package dedup

import (
	"cmp"
	"fmt"
	"slices"
	"time"

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
	l := r.newLoader(true, false)
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
	r     *run
	done  chan error
	start time.Time
	took  time.Duration // written before done is sent
}

// startAdds adds the documents to index to the store in the background,
// in batches, then records the fingerprint filter and compacts the store.
func (r *run) startAdds() *adds {
	if r.o.Store == nil {
		return nil
	}
	a := &adds{r: r, done: make(chan error, 1), start: time.Now()}
	go func() {
		err := r.addAll()
		a.took = time.Since(a.start)
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

func (r *run) addAll() error {
	const batchSize = 2048
	progress := r.ev.progress(StageStore, "docs")
	// One bulk for the whole run: the postings are sorted and ingested
	// as finished tables instead of written one by one (index.Bulk). In
	// memory the documents go in id order, so that their records go
	// straight into tables (index.NewSortedBulk); out of core in the
	// order of the sketch file, which is read back sequentially.
	order := r.unique
	newBulk := r.x.NewBulk
	if r.ext == nil {
		order = r.byID(r.unique)
		newBulk = r.x.NewSortedBulk
	}
	bk, err := newBulk()
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	defer bk.Close()
	batch := make([]*index.Doc, 0, batchSize)
	l := r.newLoader(true, r.ext == nil) // the records keep full values; in memory in id order
	for lo := 0; lo < len(order); lo += batchSize {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		ds, err := l.load(order[lo:min(lo+batchSize, len(order))])
		if err != nil {
			return err
		}
		batch = batch[:0]
		for k := range ds {
			if !r.o.StoreFeatures {
				ds[k].Features = nil
			}
			batch = append(batch, &ds[k])
		}
		res, err := bk.Add(r.ctx, batch...)
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		if res.Duplicates != 0 {
			return fmt.Errorf("dedup: internal error: %d repeated names among the documents added", res.Duplicates)
		}
		if progress != nil {
			progress(int64(lo+len(batch)), int64(len(order)))
		}
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

// byID returns the document numbers docs in increasing order of their
// documents' index ids (index.ID of the name), in a new slice.
func (r *run) byID(docs []int) []int {
	type numbered struct {
		id uint64
		i  int
	}
	ns := make([]numbered, len(docs))
	for k, i := range docs {
		ns[k] = numbered{index.ID(r.res.Docs[i].Name), i}
	}
	slices.SortFunc(ns, func(a, b numbered) int { return cmp.Compare(a.id, b.id) })
	out := make([]int, len(docs))
	for k, n := range ns {
		out[k] = n.i
	}
	return out
}
