package dedup

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"

	"github.com/neardup/neardup/dedup/spill"
)

// This file holds the stage files of the join (stage 2's sorted runs of
// candidate pairs) and of verification (stage 3's verified pairs).

// CheckpointInfo describes stage files saved (EventListener.Checkpoint).
type CheckpointInfo struct {
	Stage string
	// Inputs is the number of inputs stage 1 finished, Docs the documents
	// saved.
	Inputs int
	Docs   int64
	// Complete reports the stage's output complete.
	Complete bool
}

// saveIndex records stage 2's output, the sorted runs of candidate pairs.
func (r *run) saveIndex(runs []string, records int64, stat Stage) error {
	st := r.st
	m := st.manifest(StageIndex)
	m.Complete, m.Records, m.Stat = true, records, stat
	for _, p := range runs {
		m.Runs = append(m.Runs, filepath.Base(p))
	}
	if err := writeManifest(st.s.Dir, manIndex, m); err != nil {
		return err
	}
	r.ev.checkpoint(CheckpointInfo{Stage: StageIndex, Docs: int64(len(r.res.Docs)), Complete: true})
	return nil
}

// verifiedPair locates a verified pair by the positions of its documents.
type verifiedPair struct {
	a, b int32
	p    Pair
}

// writeVerified writes stage 3's output, the verified pairs; it returns
// the bytes written.
func (r *run) writeVerified(pairs []verifiedPair) (int64, error) {
	w, err := spill.Create(spill.OS, filepath.Join(r.st.s.Dir, fileVerified), verifiedWidth)
	if err != nil {
		return 0, err
	}
	var rec [verifiedWidth]byte
	for _, v := range pairs {
		binary.LittleEndian.PutUint32(rec[0:], uint32(v.a))
		binary.LittleEndian.PutUint32(rec[4:], uint32(v.b))
		binary.LittleEndian.PutUint64(rec[8:], math.Float64bits(v.p.Similarity))
		binary.LittleEndian.PutUint64(rec[16:], math.Float64bits(v.p.Estimate))
		binary.LittleEndian.PutUint64(rec[24:], math.Float64bits(v.p.StdErr))
		rec[32] = 0
		if v.p.Exact {
			rec[32] = 1
		}
		binary.LittleEndian.PutUint32(rec[33:], uint32(v.p.Keys))
		if err := w.Write(rec[:]); err != nil {
			w.Abort()
			return 0, fmt.Errorf("dedup: %w", err)
		}
	}
	n, err := w.Commit()
	if err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	return n, nil
}

// saveVerify writes stage 3's manifest (after writeVerified).
func (r *run) saveVerify(pairs, candidates int64, stat Stage) error {
	st := r.st
	m := st.manifest(StageVerify)
	m.Complete, m.Pairs, m.Candidates, m.Stat = true, pairs, candidates, stat
	if err := writeManifest(st.s.Dir, manVerify, m); err != nil {
		return err
	}
	r.ev.checkpoint(CheckpointInfo{Stage: StageVerify, Docs: int64(len(r.res.Docs)), Complete: true})
	return nil
}

// loadVerify reads stage 3's verified pairs into res.Pairs.
func (r *run) loadVerify(m *manifest) error {
	rd, err := spill.Open(spill.OS, filepath.Join(r.st.s.Dir, fileVerified), verifiedWidth)
	if err != nil {
		return fmt.Errorf("dedup: cannot resume: %w", err)
	}
	defer rd.Close()
	docs := r.res.Docs
	var n int64
	for rec, ok := rd.Next(); ok; rec, ok = rd.Next() {
		a, b := int(binary.LittleEndian.Uint32(rec[0:])), int(binary.LittleEndian.Uint32(rec[4:]))
		if a >= len(docs) || b >= len(docs) {
			return fmt.Errorf("dedup: cannot resume: %s names document %d of %d", fileVerified, max(a, b), len(docs))
		}
		da, db := &docs[a], &docs[b]
		r.res.Pairs = append(r.res.Pairs, Pair{A: da.Name, B: db.Name, SeqA: da.Seq, SeqB: db.Seq,
			Similarity: math.Float64frombits(binary.LittleEndian.Uint64(rec[8:])),
			Estimate:   math.Float64frombits(binary.LittleEndian.Uint64(rec[16:])),
			StdErr:     math.Float64frombits(binary.LittleEndian.Uint64(rec[24:])),
			Exact:      rec[32] == 1, Keys: int(binary.LittleEndian.Uint32(rec[33:]))})
		n++
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("dedup: cannot resume: %w", err)
	}
	if n != m.Pairs {
		return fmt.Errorf("dedup: cannot resume: %s holds %d pairs, its manifest says %d", fileVerified, n, m.Pairs)
	}
	r.sum.Candidates += m.Candidates
	return nil
}

// sortedRuns returns the run files of a stage 2 manifest.
func (st *stages) sortedRuns(m *manifest) []string {
	out := make([]string, len(m.Runs))
	for i, n := range m.Runs {
		out[i] = filepath.Join(st.s.Dir, n)
	}
	return out
}

// close closes the stream file.
func (st *stages) close() {
	if st.sf != nil {
		st.sf.Close()
		st.sf = nil
	}
}
