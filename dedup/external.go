package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/neardup/neardup/dedup/spill"
	"github.com/neardup/neardup/index"
)

// external is the out-of-core state of a run (Options.Memory): the
// sketches written to a file in the work directory as stage 1 makes them,
// and the join done by external sorts (package spill) instead of in
// memory. Only what clustering and the outputs need stays in memory per
// document: its Doc, its sketch's size and the end of its values in the
// sketch file (side).
type external struct {
	dir   string // this run's work directory
	owned bool   // created by the run (removed unless KeepWork)
	f     *os.File
	w     *bufio.Writer
	off   int64 // bytes written to the sketch file
	// ends[i] is the end of the values of the document at position i in
	// the sketch file, which holds them in the documents' order from
	// offset 0: they start at ends[i-1] (0 for the first).
	ends    column[int64]
	spilled int64 // compressed bytes of sorted runs
	// feats is the feature file (features.go) while exact verification is
	// on: the feature sets are there, not in memory.
	feats *featFile
}

// startExternal switches the run to out-of-core mode: it creates the work
// directory and the sketch file, and moves the sketches of the documents
// read so far there; with exact (exact verification on), also the feature
// file, and their feature sets.
func (r *run) startExternal(exact bool) error {
	if r.narrow { // folds cannot make the sketch file's full values
		return errors.New("dedup: internal error: a run holding folded sketch values went out of core")
	}
	dir := r.o.WorkDir
	owned := false
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "neardup-work-"); err != nil {
			return fmt.Errorf("dedup: work directory: %w", err)
		}
		owned = true
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dedup: work directory: %w", err)
	} else if r.st == nil { // a resumable run cleaned up as it began
		if err := RemoveWork(dir); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "sketches.bin"))
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	r.ext = &external{dir: dir, owned: owned, f: f, w: bufio.NewWriterSize(f, r.ioBuf())}
	r.sum.External = true
	for i := range r.res.Docs {
		if err := r.ext.put(r.side.vals.at(i).words); err != nil {
			return err
		}
	}
	r.side.vals.reset() // the values are in the file now
	if !exact {
		return nil
	}
	// Exact verification is on: the feature sets go to the feature file,
	// and those still to come too (features.go).
	if r.ext.feats, err = createFeatFile(dir, r.ioBuf()); err != nil {
		return err
	}
	for i := range r.res.Docs {
		f := r.side.features(i)
		if err := r.ext.feats.put(&f); err != nil {
			return err
		}
	}
	r.side.dropFeatures()
	return nil
}

// ioBuf is the size of the buffers of the work files a run writes and
// reads sequentially: 1 MiB, less under a small budget (a 256th of it, 64
// KiB at least), where several of them would be a good part of it.
func (r *run) ioBuf() int {
	if r.o.Memory <= 0 {
		return 1 << 20
	}
	return int(min(1<<20, max(64<<10, r.o.Memory/256)))
}

// put appends the sketch values of the next document, as words in halves
// (low first: sketchVals), to the sketch file and records their end. A
// value's little-endian bytes are its halves' in that order.
func (e *external) put(words []uint32) error {
	var b [4]byte
	for _, x := range words {
		binary.LittleEndian.PutUint32(b[:], x)
		if _, err := e.w.Write(b[:]); err != nil {
			return fmt.Errorf("dedup: writing sketches: %w", err)
		}
	}
	e.off += int64(4 * len(words))
	e.ends.push(e.off)
	return nil
}

// span returns where the values of the document at position i lie in
// the sketch file, and their number.
func (e *external) span(i int) (off int64, n int) {
	end := *e.ends.at(i)
	if i > 0 {
		off = *e.ends.at(i - 1)
	}
	return off, int(end-off) / 8
}

// finishWrite completes the sketch file.
func (e *external) finishWrite() error {
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("dedup: writing sketches: %w", err)
	}
	e.spilled += e.off
	if e.feats != nil {
		if err := e.feats.flush(); err != nil {
			return err
		}
		e.spilled += e.feats.off
	}
	return nil
}

// appendValues appends the sketch values of the document at position i,
// read from the sketch file (through buf, a scratch buffer), to dst.
func (e *external) appendValues(dst []uint64, i int, buf *[]byte) ([]uint64, error) {
	off, n := e.span(i)
	if n == 0 {
		return dst, nil
	}
	b := slices.Grow((*buf)[:0], 8*n)[:8*n]
	*buf = b
	if _, err := e.f.ReadAt(b, off); err != nil {
		return dst, fmt.Errorf("dedup: reading sketches: %w", err)
	}
	for j := range n {
		dst = append(dst, binary.LittleEndian.Uint64(b[8*j:]))
	}
	return dst, nil
}

// close closes the sketch file and removes the work files unless kept.
func (e *external) close(keep bool) error {
	err := e.f.Close()
	if ferr := e.feats.close(); err == nil {
		err = ferr
	}
	if keep {
		return err
	}
	if e.owned {
		if rerr := os.RemoveAll(e.dir); err == nil {
			err = rerr
		}
		return err
	}
	if rerr := RemoveWork(e.dir); err == nil {
		err = rerr
	}
	return err
}

// joinExternal is joinAndVerify out of core, with the same result: the
// same numbering of documents, AltaVista's sort-join with (pass, key high
// 32 bits, document number) records sorted by package spill in place of
// index.Join's in-memory passes, the candidate pairs (A, B) counted by a
// second external sort, and verification by the index's VerifyPairs in
// chunks of pairs whose sketches are read back from the sketch file.
func (r *run) joinExternal() error {
	e := r.ext
	docs := r.res.Docs
	// A resumed run reads the stages its stage files hold.
	var done2 *manifest
	if r.st != nil {
		done3, err := r.st.load(manVerify)
		if err != nil {
			return err
		}
		if done2, err = r.st.load(manIndex); err != nil {
			return err
		}
		if done3 != nil {
			if done2 != nil {
				r.ev.restored(done2.Stat)
			}
			r.ev.restored(done3.Stat)
			r.sum.Resumed = StageClust
			e.spilled += done3.Stat.Spilled
			if done2 != nil {
				e.spilled += done2.Stat.Spilled
			}
			r.sum.Spilled = e.spilled
			return r.loadVerify(done3)
		}
		if done2 != nil {
			r.ev.restored(done2.Stat)
			r.sum.Resumed = StageVerify
		}
	}
	pos := r.idOrder(nil)
	order := make([]int32, len(pos))
	num := make([]int32, len(docs)) // position -> number, -1 when not joined
	for i := range num {
		num[i] = -1
	}
	for k, p := range pos {
		order[k] = int32(p)
		num[p] = int32(k)
	}
	pos = nil
	// Each of the two sorts (keys, then pairs while the keys merge) takes a
	// quarter of what the documents kept in memory leave of the budget.
	// The floor keeps the runs few: each run merged holds a reader's
	// buffers (about 256 KiB).
	meta := r.metaBytes()
	budget := max((r.o.Memory-meta)/4, r.o.Memory/32, 64<<10)

	var pm *spill.Merger
	var total int64 // pair records
	var err error
	if done2 != nil {
		if pm, err = spill.Merge(spill.OS, 8, r.st.sortedRuns(done2)...); err != nil {
			return fmt.Errorf("dedup: cannot resume: %w", err)
		}
		total = done2.Records
		e.spilled += done2.Stat.Spilled
	} else if pm, total, err = r.candidates(order, num, budget); err != nil {
		return err
	}
	defer pm.Close()
	return r.verifyExternal(pm, total, order)
}

// candidates is stage 2 out of core: (pass, key, number) records sorted
// externally, and their runs of equal keys turned into candidate pairs,
// sorted externally too. It returns the merge of the pairs' runs and the
// number of pair records.
func (r *run) candidates(order, num []int32, budget int64) (*spill.Merger, int64, error) {
	e := r.ext
	docs := r.res.Docs
	scheme := r.x.Scheme()
	passes := scheme.NumKeys()
	if r.st != nil {
		for _, p := range []string{"keys-*.run", "pairs-*.run"} { // a killed stage 2's
			ms, _ := filepath.Glob(filepath.Join(e.dir, p))
			for _, m := range ms {
				if err := os.Remove(m); err != nil {
					return nil, 0, fmt.Errorf("dedup: %w", err)
				}
			}
		}
	}
	// Stage 2: (pass, key, number) records, sorted externally.
	start := r.ev.begin(StageIndex, int64(len(order)))
	keys, err := spill.New(spill.Config{Dir: e.dir, Prefix: "keys", Width: 12, Budget: budget})
	if err != nil {
		return nil, 0, fmt.Errorf("dedup: %w", err)
	}
	defer keys.Remove()
	rd := bufio.NewReaderSize(io.NewSectionReader(e.f, 0, e.off), r.ioBuf())
	var vals []uint64
	var b8 [8]byte
	rec := make([]byte, 0, 12*passes)
	progress := r.ev.progress(StageIndex, "docs")
	for i := range docs {
		_, nvals := e.span(i)
		vals = vals[:0]
		for range nvals {
			if _, err := io.ReadFull(rd, b8[:]); err != nil {
				return nil, 0, fmt.Errorf("dedup: reading sketches: %w", err)
			}
			vals = append(vals, binary.LittleEndian.Uint64(b8[:]))
		}
		if num[i] < 0 || len(vals) == 0 {
			continue
		}
		if r.fold { // the join compares folds, as in memory (values.go)
			foldAll(vals)
		}
		rec = rec[:0]
		for c := range passes {
			rec = binary.BigEndian.AppendUint32(rec, uint32(c))
			rec = binary.BigEndian.AppendUint32(rec, uint32(scheme.Key(c, vals)>>32))
			rec = binary.BigEndian.AppendUint32(rec, uint32(num[i]))
		}
		if err := keys.Add(rec); err != nil {
			return nil, 0, fmt.Errorf("dedup: %w", err)
		}
		if progress != nil && i&4095 == 0 {
			progress(int64(i), int64(len(docs)))
		}
		if i&1023 == 0 {
			if err := r.ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
	}
	km, err := keys.Sort()
	if err != nil {
		return nil, 0, fmt.Errorf("dedup: %w", err)
	}
	pairs, err := spill.New(spill.Config{Dir: e.dir, Prefix: "pairs", Width: 8, Budget: budget})
	if err != nil {
		km.Close()
		return nil, 0, fmt.Errorf("dedup: %w", err)
	}
	if r.st == nil {
		defer pairs.Remove()
	}
	// Runs of equal (pass, key): each document pairs with the MaxRun
	// before it, as index.Join does.
	var group uint64 = 1 << 63 // no record's (pass, key)
	var window []uint32
	for rec, ok := km.Next(); ok; rec, ok = km.Next() {
		g := binary.BigEndian.Uint64(rec[:8])
		u := binary.BigEndian.Uint32(rec[8:])
		if g != group {
			group, window = g, window[:0]
		}
		lo := max(0, len(window)-index.MaxRun)
		for _, a := range window[lo:] {
			binary.BigEndian.PutUint32(b8[:4], a)
			binary.BigEndian.PutUint32(b8[4:], u)
			if err := pairs.Add(b8[:]); err != nil {
				km.Close()
				return nil, 0, fmt.Errorf("dedup: %w", err)
			}
		}
		if len(window) == 2*index.MaxRun {
			window = append(window[:0], window[index.MaxRun:]...)
		}
		window = append(window, u)
	}
	if err := km.Err(); err != nil {
		km.Close()
		return nil, 0, fmt.Errorf("dedup: %w", err)
	}
	km.Close()
	e.spilled += keys.Spilled()
	r.ev.addSpilled(StageIndex, keys.Spilled()+pairs.Spilled()) // the pairs' runs are written while the keys merge
	before := pairs.Spilled()
	if err := keys.Remove(); err != nil {
		return nil, 0, fmt.Errorf("dedup: %w", err)
	}
	if r.st == nil {
		e.spilled += pairs.Spilled()
		r.ev.end(StageIndex, int64(len(order)), start)
		pm, err := pairs.Sort()
		if err != nil {
			return nil, 0, fmt.Errorf("dedup: %w", err)
		}
		return pm, pairs.Records(), nil
	}
	// A resumable run keeps the pairs' runs as the stage's output.
	if err := pairs.Flush(); err != nil {
		return nil, 0, fmt.Errorf("dedup: %w", err)
	}
	e.spilled += pairs.Spilled()
	r.ev.addSpilled(StageIndex, pairs.Spilled()-before)
	r.ev.end(StageIndex, int64(len(order)), start)
	if err := r.saveIndex(pairs.Runs(), pairs.Records(), r.ev.stat(StageIndex)); err != nil {
		return nil, 0, err
	}
	pm, err := spill.Merge(spill.OS, 8, pairs.Runs()...)
	if err != nil {
		return nil, 0, fmt.Errorf("dedup: %w", err)
	}
	return pm, pairs.Records(), nil
}

// verifyExternal is stage 3 out of core: the candidate pairs in (A, B)
// order, counted, verified in chunks whose sketches are read back from
// the sketch file.
func (r *run) verifyExternal(pm *spill.Merger, total int64, order []int32) error {
	e := r.ext
	docs := r.res.Docs
	start := r.ev.begin(StageVerify, 0)
	if e.feats != nil && r.exact { // exact, the feature sets read back (verify_exact.go)
		var kept []verifiedPair
		verified, err := r.verifyExact(pm, total, order, func(a, b int32, p Pair) {
			r.res.Pairs = append(r.res.Pairs, p)
			if r.st != nil {
				if docs[a].Seq > docs[b].Seq {
					a, b = b, a
				}
				kept = append(kept, verifiedPair{a: a, b: b, p: p})
			}
		})
		if err != nil {
			return err
		}
		return r.endVerifyExternal(start, verified, kept)
	}
	chunkPairs := int(max(1024, r.o.Memory/(16*8*int64(max(1, r.x.Config().Sketch.K)))))
	chunk := make([]index.JoinPair, 0, min(chunkPairs, 1<<20))
	var verified int64
	o := index.BatchOptions{Workers: r.o.Workers}
	vprog := r.ev.progress(StageVerify, "pair keys")
	var consumed int64 // pair records merged
	var kept []verifiedPair
	l := r.newLoader(false, false)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		err := r.verifyCands(l, chunk, func(u uint32) int { return int(order[u]) }, o, func(k int, p Pair) {
			r.res.Pairs = append(r.res.Pairs, p)
			if r.st != nil {
				a, b := order[chunk[k].A], order[chunk[k].B]
				if docs[a].Seq > docs[b].Seq {
					a, b = b, a
				}
				kept = append(kept, verifiedPair{a: a, b: b, p: p})
			}
		})
		if err != nil {
			return err
		}
		verified += int64(len(chunk))
		if vprog != nil {
			vprog(consumed, total)
		}
		chunk = chunk[:0]
		return nil
	}
	var cur uint64
	count := int32(0)
	for rec, ok := pm.Next(); ok; rec, ok = pm.Next() {
		consumed++
		v := binary.BigEndian.Uint64(rec)
		if count > 0 && v == cur {
			count++
			continue
		}
		if count > 0 {
			chunk = append(chunk, index.JoinPair{A: uint32(cur >> 32), B: uint32(cur), Keys: count})
			if len(chunk) == cap(chunk) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		cur, count = v, 1
	}
	if err := pm.Err(); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	if count > 0 {
		chunk = append(chunk, index.JoinPair{A: uint32(cur >> 32), B: uint32(cur), Keys: count})
	}
	if err := flush(); err != nil {
		return err
	}
	return r.endVerifyExternal(start, verified, kept)
}

// endVerifyExternal ends stage 3 out of core: verified candidate pairs,
// and for a resumable run the verified pairs kept saved as its output.
func (r *run) endVerifyExternal(start time.Time, verified int64, kept []verifiedPair) error {
	e := r.ext
	r.sum.Candidates += verified
	if r.st == nil {
		r.sum.Spilled = e.spilled
		r.ev.end(StageVerify, verified, start)
		return nil
	}
	n, err := r.writeVerified(kept)
	if err != nil {
		return err
	}
	e.spilled += n
	r.sum.Spilled = e.spilled
	r.ev.addSpilled(StageVerify, n)
	r.ev.end(StageVerify, verified, start)
	return r.saveVerify(int64(len(kept)), verified, r.ev.stat(StageVerify))
}
