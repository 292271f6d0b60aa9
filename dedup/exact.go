package dedup

import (
	"fmt"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/radix"
)

func idOf(d *Doc) uint64 { return index.ID(d.Name) }

// isLocal reports whether an index id is one of this run's documents (to
// be replaced by this run, so not an earlier run's document).
func (r *run) isLocal(id uint64) bool { return r.local[id] }

// exactDuplicates is stage 2: documents with identical bodies (equal
// identity fingerprints: length and 128 keyed bits, all of
// them compared before a document is dropped). The first copy of a body in this run is kept for the
// later stages and later copies pair with it, unless an earlier run stored
// a copy (found through the index's exact-fingerprint table): then every
// copy of this run pairs with the stored one.
func (r *run) exactDuplicates() error {
	docs := r.res.Docs
	first, firsts, unconfirmed := firstCopies(docs)
	r.sum.Unconfirmed += unconfirmed
	stored := map[int]string{} // position of a first copy -> name of a stored copy
	if r.o.Store != nil {
		var fs index.FingerprintStats
		if r.prior {
			fps := make([]identity.Fingerprint, len(firsts))
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
		r.sum.Unconfirmed += fs.Unconfirmed
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
// ordered by (the fingerprint's first 64 bits, position) with a radix sort
// rather than put in a map: at a million documents the map took most of
// the stage, which runs alone, and a comparison sort most of the rest.
// Within a run of equal first halves a copy is confirmed by the whole
// fingerprint (the other 64 bits and the length); each document that
// fails it against every earlier one of the run is counted in unconfirmed
// and starts a class of its own, an ordinary document for the later
// stages.
func firstCopies(docs []Doc) (first, firsts []int, unconfirmed int64) {
	byFP := radix.Order(len(docs), func(i int) uint64 { return docs[i].Fingerprint.Hi })
	first = make([]int, len(docs))
	for k := 0; k < len(byFP); {
		head := int(byFP[k])
		fp := docs[head].Fingerprint
		e := k + 1
		same := true
		for ; e < len(byFP) && docs[byFP[e]].Fingerprint.Hi == fp.Hi; e++ {
			same = same && docs[byFP[e]].Fingerprint == fp
		}
		if same { // the common case: one body
			for ; k < e; k++ {
				first[byFP[k]] = head
			}
			continue
		}
		// Equal first halves, different fingerprints: a class per whole
		// fingerprint, headed by its first document.
		heads := map[identity.Fingerprint]int{}
		for ; k < e; k++ {
			i := int(byFP[k])
			h, ok := heads[docs[i].Fingerprint]
			if !ok {
				h = i
				heads[docs[i].Fingerprint] = i
			}
			first[i] = h
		}
		unconfirmed += int64(len(heads) - 1)
	}
	for i, f := range first {
		if f == i {
			firsts = append(firsts, i)
		}
	}
	return first, firsts, unconfirmed
}
