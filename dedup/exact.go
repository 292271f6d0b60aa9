package dedup

import (
	"fmt"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/radix"
)

func idOf(d *Doc) uint64 { return index.ID(d.Name) }

// isLocal reports whether an index id is one of this run's documents (to
// be replaced by this run, so not an earlier run's document).
func (r *run) isLocal(id uint64) bool { return r.local[id] }

// exactDuplicates is stage 2: documents with identical bodies (equal
// fingerprints). The first copy of a body in this run is kept for the
// later stages and later copies pair with it, unless an earlier run stored
// a copy (found through the index's exact-fingerprint table): then every
// copy of this run pairs with the stored one.
func (r *run) exactDuplicates() error {
	docs := r.res.Docs
	first, firsts := firstCopies(docs)
	stored := map[int]string{} // position of a first copy -> name of a stored copy
	if r.o.Store != nil {
		var fs index.FingerprintStats
		if r.prior {
			fps := make([]uint64, len(firsts))
			for k, i := range firsts {
				fps[k] = docs[i].Fingerprint
			}
			var err error
			fs, err = r.x.Identical(r.ctx, fps, r.isLocal, func(k int, _ uint64, name string) error {
				stored[firsts[k]] = name
				return nil
			})
			if err != nil {
				return fmt.Errorf("dedup: %w", err)
			}
		}
		r.sum.Bloom = &BloomSummary{Bits: fs.Bits, Probes: fs.Probes, Lookups: fs.Lookups, FalsePositives: fs.FalsePositives}
	}
	for i := range docs {
		d := &docs[i]
		j := first[i]
		switch name, ok := stored[j]; {
		case ok:
			d.ExactOf = -2
			r.res.Pairs = append(r.res.Pairs, Pair{A: name, B: d.Name, SeqA: -1, SeqB: d.Seq, Similarity: 1, Estimate: 1, Exact: true, Identical: true})
		case j != i:
			a := &docs[j]
			d.ExactOf = a.Seq
			r.res.Pairs = append(r.res.Pairs, Pair{A: a.Name, B: d.Name, SeqA: a.Seq, SeqB: d.Seq, Similarity: 1, Estimate: 1, Exact: true, Identical: true})
		default:
			r.unique = append(r.unique, i)
		}
	}
	r.sum.ExactCheck = r.exact
	return nil
}

// firstCopies returns, for each document, the position of the first
// document with its fingerprint (its own when it is the first), and the
// positions of the first copies in increasing order. The positions are
// ordered by (fingerprint, position) with a radix sort rather than put in
// a map: at a million documents the map took most of the stage, which
// runs alone, and a comparison sort most of the rest.
func firstCopies(docs []Doc) (first, firsts []int) {
	byFP := radix.Order(len(docs), func(i int) uint64 { return docs[i].Fingerprint })
	first = make([]int, len(docs))
	for k := 0; k < len(byFP); {
		head := int(byFP[k])
		fp := docs[head].Fingerprint
		for ; k < len(byFP) && docs[byFP[k]].Fingerprint == fp; k++ {
			first[byFP[k]] = head
		}
	}
	for i, f := range first {
		if f == i {
			firsts = append(firsts, i)
		}
	}
	return first, firsts
}
