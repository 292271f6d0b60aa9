package dedup

import (
	"fmt"
	"slices"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/radix"
)

// joinAndVerify is stages 4 and 5: candidate pairs among this run's
// documents to index by the index's batch join, verified by the index's
// Verify. The documents are numbered for the join by the hash of their
// names, so that the candidates do not depend on the input order (they
// could only through runs of more than index.MaxRun documents sharing a
// key).
func (r *run) joinAndVerify() error {
	var visit []uint32
	order := r.idOrder(&visit)

	start := r.ev.begin(StageIndex, int64(len(order)))
	o := index.BatchOptions{Workers: r.o.Workers, Progress: r.ev.progress(StageIndex, "keys"), Visit: visit}
	// The join compares the values as verification does: folded
	// (values.go), widened into the join's buffers document by document.
	cands, err := r.x.Join(r.ctx, len(order), func(dst []uint64, i int) []uint64 { return r.memValues(dst, order[i]) }, o)
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	r.sum.Candidates += int64(len(cands))
	r.ev.end(StageIndex, int64(len(order)), start)

	// Verified in chunks, so that the widened values of one chunk's ends
	// are held at a time: at most 2·verifyChunk documents' (32 MiB at
	// k = 128), several of the index's parallel pieces of work.
	const verifyChunk = 1 << 14
	o.Visit = nil
	start = r.ev.begin(StageVerify, int64(len(cands)))
	progress := r.ev.progress(StageVerify, "pairs")
	l := r.newLoader(false, false).withFeatures()
	pos := func(u uint32) int { return order[u] }
	for lo, hi := 0, 0; lo < len(cands); lo = hi {
		hi = r.chunkEnd(cands, lo, min(lo+verifyChunk, len(cands)), pos)
		o.Progress = nil
		if progress != nil {
			o.Progress = func(done, _ int64) { progress(int64(lo)+done, int64(len(cands))) }
		}
		err = r.verifyCands(l, cands[lo:hi], pos, o, func(_ int, p Pair) {
			r.res.Pairs = append(r.res.Pairs, p)
		})
		if err != nil {
			return err
		}
	}
	r.ev.end(StageVerify, int64(len(cands)), start)
	return nil
}

// chunkEnd returns the end of the chunk of candidates that verification
// takes from lo, at most hi: hi, unless the run reads its feature sets
// back from disk (diskFeatures), when the feature sets of the chunk's
// pairs pass an eighth of the budget (1 MiB at least, 64 MiB at most:
// past that a larger chunk reads no faster, and at the command's default
// budget, 75% of physical memory, an eighth would let one chunk hold
// gigabytes) before it.
func (r *run) chunkEnd(cands []index.JoinPair, lo, hi int, pos func(uint32) int) int {
	if r.feats == nil || !r.exact {
		return hi
	}
	docs := r.res.Docs
	limit := min(max(r.o.Memory/8, 1<<20), 64<<20)
	if exactTestSizes != nil {
		limit = exactTestSizes[1]
	}
	per := featureBytes(r.hdr.Algorithm.IsWeighted())
	var n int64
	for k := lo; k < hi; k++ {
		p := cands[k]
		n += per * int64(docs[pos(p.A)].Shingles+docs[pos(p.B)].Shingles)
		if n > limit && k > lo {
			return k
		}
	}
	return hi
}

// verifyCands verifies the candidate pairs cands between the documents at
// positions pos(A) and pos(B) (verifyPairs), with the index documents of
// their ends made once each by l (the values the run compares).
func (r *run) verifyCands(l *docLoader, cands []index.JoinPair, pos func(uint32) int, o index.BatchOptions, kept func(k int, p Pair)) error {
	ends := l.ends[:0]
	for _, p := range cands {
		ends = append(ends, p.A, p.B)
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	ps := l.pos[:0]
	for _, u := range ends {
		ps = append(ps, pos(u))
	}
	l.ends, l.pos = ends, ps
	docs, err := l.load(ps)
	if err != nil {
		return err
	}
	doc := func(u uint32) *index.Doc {
		k, _ := slices.BinarySearch(ends, u)
		return &docs[k]
	}
	return r.verifyPairs(cands, pos, doc, o, kept)
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

// idOrder returns the positions of the documents to index (r.unique) in
// the order of the hashes of their names (their index ids): the join's
// document numbers, so that candidates do not depend on the input order
// (the in-memory and the out-of-core join number documents alike), and
// the order in which a run in memory adds them to a store. visit, when
// not nil, gets the numbers in the order of the positions, for
// index.BatchOptions.Visit: the order the values lie in memory.
func (r *run) idOrder(visit *[]uint32) []int {
	byID := r.uniqueByID()
	order := make([]int, len(byID))
	for k, u := range byID {
		order[k] = r.unique[u]
	}
	if visit != nil {
		*visit = make([]uint32, len(byID))
		for k, u := range byID {
			(*visit)[u] = uint32(k)
		}
	}
	return order
}

// uniqueByID returns the indexes in r.unique in increasing order of
// their documents' index ids, sorted once: the join and the store's adds,
// which run at the same time, both ask for it.
func (r *run) uniqueByID() []uint32 {
	r.byIDOnce.Do(func() {
		docs := r.res.Docs
		r.byID = radix.Order(len(r.unique), func(k int) uint64 { return idOf(&docs[r.unique[k]]) })
	})
	return r.byID
}
