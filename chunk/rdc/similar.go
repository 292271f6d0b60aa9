package rdc

import "sort"

// sketchIndex finds the local files whose sketches agree with a served
// file's in the most positions (the book's merge of the 12 posting lists
// into files with 1, 2, ..., 12 features in common). It is filesim.Index
// with a reusable counting array instead of a map: a pull asks it once per
// changed file. Not safe for concurrent use.
type sketchIndex struct {
	posts   []map[uint64][]int32 // per position: value -> local entries
	counts  []uint8              // by local entry
	touched []int32
}

func newSketchIndex(t *Tree) *sketchIndex {
	ix := &sketchIndex{posts: make([]map[uint64][]int32, SketchParams.K), counts: make([]uint8, len(t.Manifest.Entries))}
	for i := range ix.posts {
		ix.posts[i] = map[uint64][]int32{}
	}
	for i, e := range t.Manifest.Entries {
		if e.Kind != File || len(e.Sketch) != SketchParams.K {
			continue
		}
		for k, v := range e.Sketch {
			ix.posts[k][v] = append(ix.posts[k][v], int32(i))
		}
	}
	return ix
}

// query appends to dst up to limit local entries sharing at least
// minMatches positions with sketch, most first (ties: lower entry).
func (ix *sketchIndex) query(dst []int, sketch []uint64, minMatches, limit int) []int {
	if len(sketch) != len(ix.posts) {
		return dst
	}
	ix.touched = ix.touched[:0]
	for k, v := range sketch {
		for _, id := range ix.posts[k][v] {
			if ix.counts[id] == 0 {
				ix.touched = append(ix.touched, id)
			}
			ix.counts[id]++
		}
	}
	type hit struct {
		id int32
		n  uint8
	}
	var hits []hit
	for _, id := range ix.touched {
		if int(ix.counts[id]) >= minMatches {
			hits = append(hits, hit{id, ix.counts[id]})
		}
		ix.counts[id] = 0
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].n != hits[b].n {
			return hits[a].n > hits[b].n
		}
		return hits[a].id < hits[b].id
	})
	for _, h := range hits[:min(len(hits), limit)] {
		dst = append(dst, int(h.id))
	}
	return dst
}

// holding is where a local file holds a chunk or a run of chunks (a
// signature node).
type holding struct {
	src int   // local entry
	off int64 // byte offset
	n   int64 // bytes
	cnt int   // chunks
}

// holdIndex maps the 32-bit hash of every chunk and node of the local
// files to where they are held; a lookup keeps only the holdings of a
// file's candidate sources, so that 32 bits stay enough.
type holdIndex struct {
	chunks, nodes map[Short][]holding
}

func newHoldIndex(t *Tree) *holdIndex {
	h := &holdIndex{chunks: map[Short][]holding{}, nodes: map[Short][]holding{}}
	for i, sig := range t.Sigs {
		if sig == nil {
			continue
		}
		for _, r := range sig.Chunks {
			k := ShortOf(r.Sum)
			h.chunks[k] = append(h.chunks[k], holding{src: i, off: r.Offset, n: int64(r.Length), cnt: 1})
		}
		for lv, nodes := range sig.Levels {
			for ni, n := range nodes {
				lo, hi := leafRange(sig, lv, ni)
				k := ShortOf(n.Sum)
				h.nodes[k] = append(h.nodes[k], holding{src: i, off: sig.Chunks[lo].Offset, n: n.Length, cnt: hi - lo})
			}
		}
	}
	return h
}

// find returns the holding of sum among cands (in order of preference),
// with cnt chunks (0: any).
func find(m map[Short][]holding, sum Short, cands []int, cnt int) (holding, bool) {
	hs := m[sum]
	if len(hs) == 0 {
		return holding{}, false
	}
	for _, c := range cands {
		for _, h := range hs {
			if h.src == c && (cnt == 0 || h.cnt == cnt) {
				return h, true
			}
		}
	}
	return holding{}, false
}
