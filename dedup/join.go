package dedup

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/neardup/neardup/index"
)

// joinAndVerify is stages 4 and 5: candidate pairs among this run's
// documents to index by the index's batch join, verified by the index's
// Verify. The documents are numbered for the join by the hash of their
// names, so that the candidates do not depend on the input order (they
// could only through runs of more than index.MaxRun documents sharing a
// key).
func (r *run) joinAndVerify() error {
	order := r.joinOrder()

	start := r.ev.begin(StageIndex, int64(len(order)))
	o := index.BatchOptions{Workers: r.o.Workers, Progress: r.ev.progress(StageIndex, "keys")}
	vals := &r.side.vals
	cands, err := r.x.Join(r.ctx, len(order), func(i int) []uint64 { return vals.at(order[i]).values }, o)
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	r.sum.Candidates += int64(len(cands))
	r.ev.end(StageIndex, int64(len(order)), start)

	// The index documents of the candidates' ends.
	doc, _ := candidateEnds(cands, func(u uint32) (*index.Doc, error) { return r.ixOf(order[u]) })

	start = r.ev.begin(StageVerify, int64(len(cands)))
	o.Progress = r.ev.progress(StageVerify, "pairs")
	err = r.verifyPairs(cands, func(u uint32) int { return order[u] }, doc, o, func(_ int, p Pair) {
		r.res.Pairs = append(r.res.Pairs, p)
	})
	if err != nil {
		return err
	}
	r.ev.end(StageVerify, int64(len(cands)), start)
	return nil
}

// candidateEnds loads the index document of every end of the candidate
// pairs once, with load, and returns them by join number.
func candidateEnds(cands []index.JoinPair, load func(u uint32) (*index.Doc, error)) (func(uint32) *index.Doc, error) {
	ixs := map[uint32]*index.Doc{}
	for _, p := range cands {
		for _, u := range [2]uint32{p.A, p.B} {
			if _, ok := ixs[u]; ok {
				continue
			}
			ix, err := load(u)
			if err != nil {
				return nil, err
			}
			ixs[u] = ix
		}
	}
	return func(u uint32) *index.Doc { return ixs[u] }, nil
}

// verifyPairs verifies the candidate pairs cands, between the documents
// at positions pos(A) and pos(B) whose index documents doc gives, with the
// index's VerifyPairs, and calls kept(k, pair) for each verified cands[k],
// in the order of cands.
func (r *run) verifyPairs(cands []index.JoinPair, pos func(uint32) int, doc func(uint32) *index.Doc, o index.BatchOptions, kept func(k int, p Pair)) error {
	docs := r.res.Docs
	keep := make([]bool, len(cands))
	out := make([]Pair, len(cands))
	err := r.x.VerifyPairs(r.ctx, cands, doc, o, func(k int, c index.Comparison, ok bool) {
		if ok {
			p := cands[k]
			out[k], keep[k] = pairOf(&docs[pos(p.A)], &docs[pos(p.B)], c), true
		}
	})
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	for k, ok := range keep {
		if ok {
			kept(k, out[k])
		}
	}
	return nil
}

// joinOrder returns the positions of the documents to join (r.unique) in
// the order of the hashes of their names: the join's document numbers, so
// that candidates do not depend on the input order. The in-memory and the
// out-of-core join number documents alike.
func (r *run) joinOrder() []int {
	docs := r.res.Docs
	type numbered struct {
		id  uint64
		pos int
	}
	ns := make([]numbered, len(r.unique))
	for k, i := range r.unique {
		ns[k] = numbered{idOf(&docs[i]), i}
	}
	slices.SortFunc(ns, func(a, b numbered) int { return cmp.Compare(a.id, b.id) })
	order := make([]int, len(ns))
	for k, n := range ns {
		order[k] = n.pos
	}
	return order
}
