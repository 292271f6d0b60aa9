package dedup

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/sample"
)

// rawDoc is a document handed to the workers.
type rawDoc struct {
	seq   int
	name  string
	body  []byte
	key   string
	html  bool        // the source knows the body is HTML (HTML files, WARC responses)
	place recordPlace // where it was read
}

// job is a numbered batch of documents for one worker.
type job struct {
	n    int
	docs []rawDoc
	out  []Doc
	ix   []docIx // the rest of what the workers made of docs
	// marks are the rejected records and input ends the reader met since
	// the job before (a resumable run); mark: a checkpoint at an input
	// end, after the job's documents.
	mark  bool
	marks []streamMark
	buf   []byte   // the bodies of docs (job.hold)
	highs []uint32 // the high halves of ix's values, when the run keeps them (docIx.highs)
}

const jobSize = 64

// memFeatureIDs is how many feature ids a run under a memory budget keeps
// in memory for exact verification (32 MiB) before it sends the feature
// sets to the feature file (spillFeatures), whatever the size of the
// budget: verification needs only those of the candidates' documents,
// about a tenth of the corpus at the default threshold, and reads them
// back where they lie. Held in memory they were most of a run's heap (at
// the command's default budget, 75% of physical memory, 100,000 documents
// of 300 words held 240 MB of feature ids, and a peak RSS of 870 MB with
// the garbage collector's headroom); writing them costs a sequential
// write of 8 bytes a shingle.
const memFeatureIDs = 4 << 20

// budget decides which documents keep their features for exact
// verification (Options.Exact, ExactBudget).
type budget struct {
	mu   sync.Mutex
	o    *Options
	on   bool  // still verifying exactly
	kept int64 // feature ids kept
	// bounded: ExactAuto keeps at most Options.ExactBudget feature ids,
	// in a run without a memory budget that holds them all in memory.
	// Under a budget the feature sets go to the feature file past
	// ExactBudget ids or the budget's share (run.spillFeatures), and
	// with the sketches when the run goes out of core (features.go):
	// exact verification stays on at any size.
	bounded bool
}

// off reports whether exact verification has been turned off.
func (b *budget) off() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.on
}

func (b *budget) keep(n int) bool {
	if b.o.Exact == ExactNever {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ok := b.on && (b.o.Exact == ExactAlways || !b.bounded || b.kept+int64(n) <= b.o.ExactBudget)
	if ok {
		b.kept += int64(n)
	} else {
		b.on = false
	}
	return ok
}

// sketch is stage 1: it reads docs, rejects repeated ids, and fingerprints,
// extracts and sketches the documents with o.Workers goroutines (one
// sample.Sketcher each), keeping them in input order in res.Docs.
func (r *run) sketch(docs iter.Seq2[*corpus.Document, error]) error {
	start := r.ev.begin(StageSketch, 0)
	sketchers := make([]*sample.Sketcher, r.o.Workers)
	for w := range sketchers {
		var err error
		if sketchers[w], err = r.x.NewSketcher(); err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
	}
	bud := &budget{o: &r.o, on: r.o.Exact != ExactNever}
	if r.st != nil {
		if err := r.restoreSketch(bud); err != nil {
			return err
		}
		if r.st.complete { // stage 1 is done: nothing to read
			docs = func(func(*corpus.Document, error) bool) {}
		}
		if r.ext == nil && r.st.s.Shards > 1 { // a shard's output is its stage files
			if err := r.startExternal(bud.on); err != nil {
				return err
			}
		}
	}
	bud.bounded = r.o.Memory <= 0 && r.ext == nil
	// A run that stays in memory (no budget) holds the folds of the values
	// it compares by folds; their high halves go to a file when the store
	// or the band export needs the full values (values.go).
	r.narrow = r.fold && r.o.Memory <= 0 && r.ext == nil
	if r.narrow && r.hdr.Bits > 32 && (r.o.Store != nil || r.o.ExportBands != nil) {
		var err error
		if r.highs, err = newHighFile(r.o.WorkDir, r.slots()); err != nil {
			return err
		}
	}
	jobs := make(chan *job, 2*r.o.Workers)
	done := make(chan *job, 2*r.o.Workers)
	var wg sync.WaitGroup
	for _, s := range sketchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sk sample.Sketched
			arena := valueArena{k: r.x.Config().Sketch.K}
			for j := range jobs {
				j.out = slices.Grow(j.out[:0], len(j.docs))[:len(j.docs)]
				j.ix = slices.Grow(j.ix[:0], len(j.docs))[:len(j.docs)]
				for i := range j.docs {
					rd := &j.docs[i]
					s.Sketch(&sk, rd.body, rd.html)
					j.out[i] = Doc{Seq: rd.seq, Name: rd.name, Bytes: len(rd.body), Key: rd.key, Fingerprint: sk.Fingerprint,
						ExactOf: -1, Shingles: len(sk.Features)}
					j.ix[i] = r.docOf(&arena, &sk, bud.keep(len(sk.Features)), &j.highs)
				}
				done <- j
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(jobs)
		readErr <- r.read(docs, jobs)
	}()
	go func() { wg.Wait(); close(done) }()

	// Collect in order.
	pending := map[int]*job{}
	next := 0
	var held int64    // bytes held in memory for the documents (heldBytes)
	var featIDs int64 // feature ids held in memory
	dropped := false  // feature sets dropped (exact verification off)
	var taken []*job  // jobs whose documents were collected
	var extErr error
	for j := range done {
		pending[j.n] = j
		for p, ok := pending[next]; ok; p, ok = pending[next] {
			at := len(r.res.Docs)
			r.res.Docs = r.appendDocs(r.res.Docs, p.out)
			delete(pending, next)
			next++
			mark, marks := p.mark, p.marks
			p.mark, p.marks = false, nil
			taken = append(taken, p)
			if extErr != nil {
				continue // drain the workers
			}
			if !dropped && bud.off() {
				// Exact verification is off: no feature set is needed
				// any longer, and what the collector holds shrinks.
				dropped, held = true, 0
				r.side.dropFeatures()
				for i := range at {
					held += r.heldBytes(i)
				}
			}
			for i := range p.ix {
				ix := &p.ix[i]
				if r.ext != nil {
					if extErr = r.ext.put(ix.vals.words); extErr != nil {
						break
					}
				}
				if ff := r.featFile(); ff != nil {
					if extErr = ff.put(&ix.feats); extErr != nil {
						break
					}
					ix.feats = featureSet{}
				} else {
					featIDs += int64(len(ix.feats.features) + len(ix.feats.weighted))
				}
				if r.highs != nil {
					if extErr = r.highs.put(idOf(&r.res.Docs[at+i]), ix.highs, len(ix.vals.words)); extErr != nil {
						break
					}
				}
				r.side.push(ix, r.ext == nil)
				if r.st != nil {
					r.st.places = append(r.st.places, p.docs[i].place)
				}
				held += r.heldBytes(at + i)
			}
			if extErr != nil {
				continue
			}
			if r.ext == nil && r.o.Memory > 0 && r.feats == nil && !bud.off() && (held > r.o.Memory/4 || featIDs > min(r.o.ExactBudget, memFeatureIDs)) {
				// The feature sets go first, and the run stays in
				// memory if the rest fits (spillFeatures).
				if extErr = r.spillFeatures(); extErr != nil {
					continue
				}
				held = 0
				for i := range r.res.Docs {
					held += r.heldBytes(i)
				}
			}
			if r.ext == nil && r.o.Memory > 0 && held > r.o.Memory/4 {
				extErr = r.startExternal(!bud.off())
			}
			if r.st != nil && extErr == nil {
				r.st.pending = append(r.st.pending, marks...)
				if mark {
					extErr = r.save(false)
				} else {
					extErr = r.appendStream()
				}
			}
		}
		// The jobs taken go back to the reader only now, when nothing
		// above uses them any longer.
		for _, p := range taken {
			p.recycle()
		}
		taken = taken[:0]
	}
	if err := <-readErr; err != nil {
		return err
	}
	if extErr != nil {
		return extErr
	}
	if r.ext != nil {
		if err := r.ext.finishWrite(); err != nil {
			return err
		}
		r.ev.addSpilled(StageSketch, r.ext.off)
		if r.ext.feats != nil {
			r.ev.addSpilled(StageSketch, r.ext.feats.off)
		}
	}
	if r.feats != nil {
		if err := r.feats.finish(); err != nil {
			return err
		}
		r.ev.addSpilled(StageSketch, r.feats.f.off)
		r.sum.Spilled = r.feats.f.off
	}
	if r.highs != nil {
		if err := r.highs.finish(); err != nil {
			return err
		}
		r.ev.addSpilled(StageSketch, r.highs.off)
	}
	if r.st != nil {
		if err := r.save(true); err != nil {
			return err
		}
		if r.ext != nil {
			r.ext.spilled += r.st.soff
			r.ev.addSpilled(StageSketch, r.st.soff)
		}
		r.sum.Warnings, r.sum.Skipped = r.st.warn, r.st.skp
	}
	s := r.sum
	if s.Read != int64(len(r.res.Docs))+s.Rejected {
		return fmt.Errorf("dedup: accounting error: read %d != sketched %d + rejected %d", s.Read, len(r.res.Docs), s.Rejected)
	}
	countUnsegmented(s, r.res.Docs)
	r.exact = bud.on
	if !bud.on {
		r.side.dropFeatures()
	}
	r.sum.Verification = VerifyEstimate
	if r.exact {
		r.sum.Verification = VerifyExact
	}
	if r.prior { // only matches against an earlier run's documents ask
		r.local = make(map[uint64]bool, len(r.res.Docs))
		for i := range r.res.Docs {
			r.local[idOf(&r.res.Docs[i])] = true
		}
	}
	r.ev.end(StageSketch, int64(len(r.res.Docs)), start)
	return nil
}

// read iterates over docs, counts and reports rejected records, rejects
// repeated ids, and sends the documents to the workers in numbered
// batches. It runs on one goroutine.
func (r *run) read(docs iter.Seq2[*corpus.Document, error], jobs chan<- *job) error {
	var names idTable
	var paths pathTable
	s := r.sum
	progress := r.ev.progress(StageSketch, "docs")
	seq, n := 0, 0
	if st := r.st; st != nil && st.restored { // restored
		names, paths, seq = st.names, st.paths, st.seq
		st.names, st.paths = idTable{}, pathTable{}
	}
	cur := newJob(0)
	// send sends the current job with the marks met since the last one.
	send := func(mark bool) {
		if st := r.st; st != nil {
			cur.marks, st.marks = st.marks, nil
		}
		cur.mark = mark
		jobs <- cur
		n++
		cur = newJob(n)
	}
	for d, err := range docs {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if ie, ok := err.(*InputEnd); ok {
			if st := r.st; st != nil {
				st.warn += ie.Warnings
				st.skp += ie.Skipped
				st.marks = append(st.marks, streamMark{at: seq, end: ie})
				send(true)
			}
			continue
		}
		s.Read++
		if err != nil {
			var re *corpus.RecordError
			if !errors.As(err, &re) {
				return fmt.Errorf("dedup: %w", err)
			}
			s.Read += re.Records() - 1 // the records it stands for
			r.rejectAt(re, seq)
			continue
		}
		place := recordPlace{path: d.Source, line: d.Line, offset: d.Offset}
		if r.st == nil || !r.st.noDups { // a shard leaves repeated ids to the merge
			if first, dup := names.add(d.ID, paths.ref(place)); dup {
				r.rejectAt(&corpus.RecordError{ID: d.ID, Path: d.Source, Line: d.Line, Offset: d.Offset, Reason: ReasonDuplicateID,
					Err: fmt.Errorf("id %q already used by %s", d.ID, paths.String(first))}, seq)
				seq++
				continue
			}
		}
		rd := rawDoc{seq: seq, name: d.ID, body: cur.hold(d.Body), html: d.HTML, place: place}
		if f := r.o.Cluster.KeyField; f != "" {
			rd.key = d.Meta[f]
		}
		s.Bytes += int64(len(d.Body))
		seq++
		cur.docs = append(cur.docs, rd)
		if len(cur.docs) == jobSize {
			send(false)
			if progress != nil {
				progress(int64(seq), 0)
			}
		}
	}
	if len(cur.docs) > 0 || r.st != nil && len(r.st.marks) > 0 { // the last documents, rejected records after the last input end
		send(false)
	}
	if progress != nil {
		progress(int64(seq), int64(seq))
	}
	return nil
}

// rejectAt rejects a record met after seq numbered documents; a
// resumable run also keeps it for its stage files.
func (r *run) rejectAt(e *corpus.RecordError, seq int) {
	r.reject(e)
	if r.st != nil {
		r.st.marks = append(r.st.marks, streamMark{at: seq, rej: e})
	}
}

// reject counts a rejected record and reports it.
func (r *run) reject(e *corpus.RecordError) {
	s := r.sum
	n := e.Records() // a Parquet row group, or its rows from a corrupt page on, is one error
	s.Rejected += n
	if s.RejectedBy == nil {
		s.RejectedBy = map[string]int64{}
	}
	s.RejectedBy[e.Reason] += n
	r.ev.rejected(e)
}

// recordPlace is where a record was read: its input and line (or byte
// offset). The path string is shared by the records of one input.
type recordPlace struct {
	path         string
	line, offset int64
}

// String formats the place as "path:line", "path@offset" or the path.
func (p recordPlace) String() string {
	switch {
	case p.line > 0:
		return p.path + ":" + strconv.FormatInt(p.line, 10)
	case p.offset >= 0:
		return p.path + "@" + strconv.FormatInt(p.offset, 10)
	}
	return p.path
}
