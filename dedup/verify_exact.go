package dedup

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/neardup/neardup/dedup/spill"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
)

// verifyExact is stage 3 out of core with exact verification: the
// candidate pairs (the merge pm of the join's pair records, in the join's
// numbering order) verified by exact Jaccard over feature sets read back
// from the feature file (features.go), in bounded memory.
//
// The pairs are first counted and written, by the positions of their two
// documents, to a work file, and the documents they name are marked. The
// marked documents are cut, in position order, into blocks whose feature
// sets fit the verification's share of the budget, and the pairs sorted
// (package spill) by (block of the earlier document, later document,
// earlier document). Then one pass per block over the feature file: it
// reads the block's marked feature sets into memory and goes on reading,
// in order, those of the later documents its pairs name, verifying the
// pairs in chunks. With one block, the usual case, that is a single pass
// over the file. kept gets each verified pair with its two positions.
func (r *run) verifyExact(pm *spill.Merger, total int64, order []int32, kept func(a, b int32, p Pair)) (candidates int64, err error) {
	e := r.ext
	docs := r.res.Docs
	avail := max(r.o.Memory-r.metaBytes(), 0)
	blockBytes := max(avail/3, 1<<20)    // a block's feature sets
	chunkBytes := max(avail/16, 256<<10) // the later documents' feature sets of a chunk of pairs
	sortBudget := max(avail/8, 1<<20)
	k := max(1, r.x.Config().Sketch.K)
	chunkPairs := int(min(max(1024, avail/(16*8*int64(k))), 1<<16))
	if exactTestSizes != nil {
		blockBytes, chunkBytes, chunkPairs = exactTestSizes[0], exactTestSizes[1], int(exactTestSizes[2])
	}
	vprog := r.ev.progress(StageVerify, "pair keys")

	// 1. The pairs, counted, by position, in a work file.
	need := make([]uint64, (len(docs)+63)/64)
	mark := func(p int32) { need[p>>6] |= 1 << (p & 63) }
	marked := func(p int32) bool { return need[p>>6]&(1<<(p&63)) != 0 }
	cf, err := os.CreateTemp(e.dir, ".cands-*.tmp")
	if err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	defer func() {
		cf.Close()
		os.Remove(cf.Name())
	}()
	cw := bufio.NewWriterSize(cf, 1<<16)
	var rec [16]byte
	emit := func(v uint64, keys int32) error {
		a, b := order[uint32(v>>32)], order[uint32(v)]
		if a > b {
			a, b = b, a
		}
		mark(a)
		mark(b)
		binary.LittleEndian.PutUint32(rec[0:], uint32(a))
		binary.LittleEndian.PutUint32(rec[4:], uint32(b))
		binary.LittleEndian.PutUint32(rec[8:], uint32(keys))
		candidates++
		if _, err := cw.Write(rec[:12]); err != nil {
			return fmt.Errorf("dedup: writing candidates: %w", err)
		}
		return nil
	}
	var cur uint64
	var count int32
	var consumed int64
	for rec, ok := pm.Next(); ok; rec, ok = pm.Next() {
		consumed++
		v := binary.BigEndian.Uint64(rec)
		if count > 0 && v == cur {
			count++
			continue
		}
		if count > 0 {
			if err := emit(cur, count); err != nil {
				return 0, err
			}
		}
		cur, count = v, 1
		if vprog != nil && consumed&(1<<16-1) == 0 {
			vprog(consumed, total)
		}
	}
	if err := pm.Err(); err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	if count > 0 {
		if err := emit(cur, count); err != nil {
			return 0, err
		}
	}
	if err := cw.Flush(); err != nil {
		return 0, fmt.Errorf("dedup: writing candidates: %w", err)
	}

	// 2. Blocks of positions: block b is [bounds[b], bounds[b+1]).
	cost := func(p int32) int64 {
		return int64(docs[p].Shingles)*featureBytes(r.hdr.Algorithm.IsWeighted()) + featsBytes + 4
	}
	bounds := []int32{0}
	var used int64
	for p := range int32(len(docs)) {
		if !marked(p) {
			continue
		}
		c := cost(p)
		if used > 0 && used+c > blockBytes {
			bounds = append(bounds, p)
			used = 0
		}
		used += c
	}
	bounds = append(bounds, int32(len(docs)))
	blocks := len(bounds) - 1
	blockOf := func(p int32) int {
		b, found := slices.BinarySearch(bounds, p)
		if !found {
			b--
		}
		return b
	}

	// 3. The pairs sorted by (block of a, b, a).
	srt, err := spill.New(spill.Config{Dir: e.dir, Prefix: "vpairs", Width: 16, Budget: sortBudget})
	if err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	defer srt.Remove()
	br := bufio.NewReaderSize(io.NewSectionReader(cf, 0, 12*candidates), 1<<16)
	var in [12]byte
	for range candidates {
		if _, err := io.ReadFull(br, in[:]); err != nil {
			return 0, fmt.Errorf("dedup: reading candidates: %w", err)
		}
		a, b := int32(binary.LittleEndian.Uint32(in[0:])), binary.LittleEndian.Uint32(in[4:])
		binary.BigEndian.PutUint32(rec[0:], uint32(blockOf(a)))
		binary.BigEndian.PutUint32(rec[4:], b)
		binary.BigEndian.PutUint32(rec[8:], uint32(a))
		binary.BigEndian.PutUint32(rec[12:], binary.LittleEndian.Uint32(in[8:]))
		if err := srt.Add(rec[:]); err != nil {
			return 0, fmt.Errorf("dedup: %w", err)
		}
	}
	sm, err := srt.Sort()
	if err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	defer sm.Close()
	e.spilled += srt.Spilled() + 12*candidates
	r.ev.addSpilled(StageVerify, srt.Spilled()+12*candidates)

	// 4. One pass per block.
	ff := e.feats
	o := index.BatchOptions{Workers: r.o.Workers}
	l := r.newLoader(false, false)
	var (
		resPos       []int32 // the block's marked documents
		resF         []featureSet
		ids, hiIDs   []uint64
		ws, hiWs     []feature.Feature
		hiPos        []int32 // the later documents of the chunk's pairs
		hiF          []featureSet
		chunk        []index.JoinPair
		ends         []int
		blockOff     = int64(0) // of the record of bounds[b]
		verifiedKeys int64
	)
	lookup := func(p int32) featureSet {
		if i, ok := slices.BinarySearch(resPos, p); ok {
			return resF[i]
		}
		i, _ := slices.BinarySearch(hiPos, p)
		return hiF[i]
	}
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		ends = ends[:0]
		for _, p := range chunk {
			ends = append(ends, int(p.A), int(p.B))
		}
		slices.Sort(ends)
		ends = slices.Compact(ends)
		ds, err := l.load(ends)
		if err != nil {
			return err
		}
		for i, p := range ends {
			f := lookup(int32(p))
			ds[i].Features, ds[i].Weighted = f.features, f.weighted
		}
		doc := func(u uint32) *index.Doc {
			i, _ := slices.BinarySearch(ends, int(u))
			return &ds[i]
		}
		err = r.verifyPairs(chunk, func(u uint32) int { return int(u) }, doc, o, func(i int, p Pair) {
			kept(int32(chunk[i].A), int32(chunk[i].B), p)
		})
		if err != nil {
			return err
		}
		for _, p := range chunk {
			verifiedKeys += int64(p.Keys)
		}
		if vprog != nil {
			vprog(verifiedKeys, total)
		}
		chunk, hiPos, hiF, hiIDs, hiWs = chunk[:0], hiPos[:0], hiF[:0], hiIDs[:0], hiWs[:0]
		return nil
	}
	next, ok := sm.Next()
	for b := range blocks {
		lo, hi := bounds[b], bounds[b+1]
		c := ff.cursor(int(lo), blockOff, r.ioBuf(), len(docs))
		var n int64
		for p := lo; p < hi; p++ {
			if marked(p) {
				n += int64(docs[p].Shingles)
			}
		}
		resPos, resF = resPos[:0], resF[:0]
		if r.hdr.Algorithm.IsWeighted() {
			ids, ws = ids[:0], slices.Grow(ws[:0], int(n))
		} else {
			ids, ws = slices.Grow(ids[:0], int(n)), ws[:0]
		}
		for p := lo; p < hi; p++ {
			if !marked(p) {
				continue
			}
			f, err := c.read(int(p), &ids, &ws)
			if err != nil {
				return 0, err
			}
			resPos, resF = append(resPos, p), append(resF, f)
		}
		if err := c.skipTo(int(hi)); err != nil {
			return 0, err
		}
		blockOff = c.off
		last := int32(-1) // the later document of the last pair
		for ; ok && int(binary.BigEndian.Uint32(next[0:])) == b; next, ok = sm.Next() {
			pb, pa := int32(binary.BigEndian.Uint32(next[4:])), binary.BigEndian.Uint32(next[8:])
			keys := int32(binary.BigEndian.Uint32(next[12:]))
			if pb != last {
				// A chunk ends only between later documents: the cursor
				// has passed those of the chunk.
				hiBytes := 8 * int64(len(hiIDs)+2*len(hiWs)+2*docs[pb].Shingles)
				if len(chunk) >= chunkPairs || len(chunk) > 0 && pb >= hi && hiBytes > chunkBytes {
					if err := flush(); err != nil {
						return 0, err
					}
				}
				last = pb
				if pb >= hi {
					f, err := c.read(int(pb), &hiIDs, &hiWs)
					if err != nil {
						return 0, err
					}
					hiPos, hiF = append(hiPos, pb), append(hiF, f)
				}
			}
			chunk = append(chunk, index.JoinPair{A: pa, B: uint32(pb), Keys: keys})
		}
		if err := flush(); err != nil {
			return 0, err
		}
	}
	if err := sm.Err(); err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	if ok {
		return 0, fmt.Errorf("dedup: internal error: candidate pairs of block %d after the last", binary.BigEndian.Uint32(next[0:]))
	}
	return candidates, nil
}

// exactTestSizes, set by tests, replaces verifyExact's block bytes, chunk
// bytes and chunk pairs, to make many blocks and chunks of a small run.
var exactTestSizes *[3]int64

// featureBytes is what a feature takes in memory: an id, or an id and a
// weight.
func featureBytes(weighted bool) int64 {
	if weighted {
		return 16
	}
	return 8
}
