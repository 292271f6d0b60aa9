package dedup

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

const (
	bloomMeta = "neardup.dedup.fingerprints.bloom"
	// fpTag keys fingerprint postings apart from LSH keys in the store's
	// one posting space.
	fpTag = 0x6670726e74 // "fprnt"
)

// exactInMemory finds exact duplicates (identical bodies) with a map of
// fingerprints: the first document with a body is kept, later ones pair
// with it. It returns the positions of the first copies and the pairs.
func exactInMemory(docs []Doc) (unique []int, pairs []Pair) {
	byFP := make(map[uint64]int, len(docs))
	for i := range docs {
		d := &docs[i]
		if j, ok := byFP[d.Fingerprint]; ok {
			d.ExactOf = docs[j].Seq
			pairs = append(pairs, identical(&docs[j], d))
			continue
		}
		byFP[d.Fingerprint] = i
		unique = append(unique, i)
	}
	return unique, pairs
}

func identical(a, b *Doc) Pair {
	return Pair{A: a.Name, B: b.Name, SeqA: a.Seq, SeqB: b.Seq, Similarity: 1, Estimate: 1, Exact: true, Identical: true}
}

// exactInStore finds exact duplicates with the fingerprints kept in the
// store, so that memory stays bounded and copies of documents indexed by
// earlier runs are found too. A Bloom filter (bits-and-blooms/bloom, sized
// for capacity fingerprints at false-positive rate fpRate: m = −n ln p /
// (ln 2)² bits and k = (m/n) ln 2 probes, as in the lecture notes) answers
// "never seen" without touching the store; a positive is confirmed by a
// posting lookup, so a false positive costs one lookup and never a wrong
// answer. The filter is saved in the store's metadata with the batch that
// records the last fingerprints.
func exactInStore(st store.Store, docs []Doc, capacity uint, fpRate float64) (unique []int, pairs []Pair, stats bloomStats, err error) {
	bf := bloom.NewWithEstimates(capacity, fpRate)
	if b, ok, err := st.Meta(context.TODO(), bloomMeta, nil); err != nil {
		return nil, nil, stats, err
	} else if ok {
		if err := bf.UnmarshalBinary(b); err != nil {
			return nil, nil, stats, fmt.Errorf("dedup: stored fingerprint filter: %w", err)
		}
	}
	local := make(map[uint64]int, len(docs)) // index id -> position, this run
	for i := range docs {
		local[index.ID(docs[i].Name)] = i
	}
	pending := map[uint64]int{} // fingerprints of the uncommitted batch
	b := st.NewBatch()
	defer b.Close()
	var ids []uint64
	var rec []byte
	var buf [8]byte
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		clear(pending)
		return b.Commit(context.TODO())
	}
	for i := range docs {
		d := &docs[i]
		fp := d.Fingerprint
		key := rng.Hash(fpTag, fp)
		self := index.ID(d.Name)
		dupOf := -1  // position in docs of an earlier copy in this run
		stored := "" // or the name of a stored copy from an earlier run
		binary.LittleEndian.PutUint64(buf[:], fp)
		if j, ok := pending[fp]; ok {
			dupOf = j
		} else if bf.Test(buf[:]) {
			stats.Lookups++
			if ids, err = st.Postings(context.TODO(), key, ids[:0]); err != nil {
				return nil, nil, stats, err
			}
			for _, id := range ids {
				if id == self {
					continue // this very document, indexed by an earlier run
				}
				if j, ok := local[id]; ok && j < i {
					dupOf = j
					break
				}
				if _, ok := local[id]; ok {
					continue
				}
				var exists bool
				if rec, exists, err = st.Doc(context.TODO(), id, rec[:0]); err != nil {
					return nil, nil, stats, err
				}
				if exists {
					sd, err := index.DecodeDoc(rec)
					if err != nil {
						return nil, nil, stats, err
					}
					stored = sd.Name
					break
				}
			}
			if dupOf < 0 && stored == "" {
				stats.FalsePositives++
			}
		}
		switch {
		case dupOf >= 0:
			d.ExactOf = docs[dupOf].Seq
			pairs = append(pairs, identical(&docs[dupOf], d))
			continue
		case stored != "":
			d.ExactOf = -2 // a stored document
			pairs = append(pairs, Pair{A: stored, B: d.Name, SeqA: -1, SeqB: d.Seq, Similarity: 1, Estimate: 1, Exact: true, Identical: true})
			continue
		}
		unique = append(unique, i)
		bf.Add(buf[:])
		b.AddPosting(key, self)
		pending[fp] = i
		if b.Len() >= 4096 {
			if err := flush(); err != nil {
				return nil, nil, stats, err
			}
		}
	}
	data, err := bf.MarshalBinary()
	if err != nil {
		return nil, nil, stats, err
	}
	b.PutMeta(bloomMeta, data)
	if err := flush(); err != nil {
		return nil, nil, stats, err
	}
	stats.Bits = bf.Cap()
	stats.Probes = bf.K()
	return unique, pairs, stats, nil
}

// bloomStats describe the fingerprint filter's work.
type bloomStats struct {
	Bits, Probes   uint
	Lookups        int64 // positives confirmed in the store
	FalsePositives int64 // positives the store refuted
}
