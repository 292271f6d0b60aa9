package dedup

import (
	"unsafe"

	"github.com/neardup/neardup/feature"
)

// What a run keeps of a document besides its Doc lives beside
// Result.Docs, by position, in columns (side). A column grows in chunks
// and never moves what it holds, so that, unlike Result.Docs, it has no
// peak of an old and a new array while it grows; and each column holds
// only what the mode of the run needs: in memory the sketch values (in
// the workers' arenas, as words: values.go) and their sizes, out of core the sizes and the
// ends of the values in the sketch file (16 bytes a document), and the
// feature sets only while exact verification is on. At 10M documents
// under a budget of 4 GiB a document has about 430 bytes of it, all told.

const (
	colShift = 12
	colChunk = 1 << colShift // values of one chunk of a column
)

// column is a sequence of values indexed by position, held in chunks of
// colChunk values (the first one grown as a slice, so that a small run
// allocates little). Its zero value is empty; at is O(1), push O(1)
// amortized; pointers from at stay valid until the column is reset.
type column[T any] struct {
	chunks [][]T
	n      int
}

func (c *column[T]) len() int { return c.n }

// at returns the value at position i < len.
func (c *column[T]) at(i int) *T { return &c.chunks[i>>colShift][i&(colChunk-1)] }

// push appends v.
func (c *column[T]) push(v T) {
	k := c.n >> colShift
	if k == len(c.chunks) {
		n := colChunk
		if k == 0 {
			n = 64
		}
		c.chunks = append(c.chunks, make([]T, 0, n))
	}
	ch := c.chunks[k]
	if len(ch) == cap(ch) { // only the first chunk starts small
		g := make([]T, len(ch), min(2*cap(ch), colChunk))
		copy(g, ch)
		ch = g
	}
	c.chunks[k] = append(ch, v)
	c.n++
}

// reset empties the column and drops its chunks.
func (c *column[T]) reset() { *c = column[T]{} }

// sketchVals are a document's sketch values in memory, in a worker's
// arena, and the owner of their chunk when it lies off the heap
// (valueArena); whoever sets or drops words sets or drops chunk. The
// words are one per value, its fold, in a run that holds folded values
// (run.narrow), else two per value, its low and high halves (values.go).
type sketchVals struct {
	words []uint32
	chunk *arenaChunk
}

// featureSet is a document's feature set, kept for exact verification:
// Features or, for the weighted samplers, Weighted (index.Doc's).
type featureSet struct {
	features []uint64
	weighted []feature.Feature
}

// bytes is the size of the feature set's ids and weights.
func (f *featureSet) bytes() int64 {
	return int64(8*len(f.features)) + int64(unsafe.Sizeof(feature.Feature{}))*int64(len(f.weighted))
}

// docIx is what a worker makes of a document for the index besides its
// Doc, and what a stage file's stream holds of it; the collector files
// it in the run's columns.
type docIx struct {
	vals  sketchVals
	size  float64 // the sketch's Size
	feats featureSet
	// highs are the high halves of the values whose folds vals holds, in
	// the job's buffer, when the run keeps them (run.highs).
	highs []uint32
}

// side is the per-document state of a run that Result.Docs does not
// show, by position in it.
type side struct {
	// vals are the sketch values, in memory only: an out-of-core run
	// writes them to its sketch file (external.ends) and resets vals.
	vals column[sketchVals]
	// sizes are the sketches' sizes.
	sizes column[float64]
	// feats are the feature sets, while exact verification may use them:
	// all documents' or, once noFeats is set, none.
	feats   column[featureSet]
	noFeats bool
}

// features returns the feature set of the document at position i (empty
// once feature sets are dropped).
func (s *side) features(i int) featureSet {
	if s.noFeats {
		return featureSet{}
	}
	return *s.feats.at(i)
}

// dropFeatures drops every feature set, for good (exact verification is
// off).
func (s *side) dropFeatures() { s.feats.reset(); s.noFeats = true }

// push files a document's state; with values false, its sketch values
// are not kept (an out-of-core run wrote them to its sketch file).
func (s *side) push(ix *docIx, values bool) {
	if values {
		s.vals.push(ix.vals)
	}
	s.sizes.push(ix.size)
	if !s.noFeats {
		s.feats.push(ix.feats)
	}
}

// Bytes per document of the side columns.
const (
	valsBytes  = int64(unsafe.Sizeof(sketchVals{}))
	sizeBytes  = 8 // a sketch size
	endBytes   = 8 // an end in the sketch file (external.ends)
	featsBytes = int64(unsafe.Sizeof(featureSet{}))
)

// placeRef is a recordPlace as the map of ids keeps it: its path as a
// number in a pathTable, and one position, the line when there is one,
// else the byte offset coded as -offset-1, else 0. It is 16 bytes where
// a recordPlace is 32, and says what recordPlace.String says.
type placeRef struct {
	path int32
	at   int64
}

// pathTable numbers the paths of the inputs, for placeRef. Its zero
// value is empty. Not safe for concurrent use.
type pathTable struct {
	num   map[string]int32
	paths []string
	last  int32 // the number of the last path asked for
}

// ref returns p as a placeRef.
func (t *pathTable) ref(p recordPlace) placeRef {
	if len(t.paths) == 0 || t.paths[t.last] != p.path {
		n, ok := t.num[p.path]
		if !ok {
			if t.num == nil {
				t.num = map[string]int32{}
			}
			n = int32(len(t.paths))
			t.num[p.path] = n
			t.paths = append(t.paths, p.path)
		}
		t.last = n
	}
	r := placeRef{path: t.last}
	switch {
	case p.line > 0:
		r.at = p.line
	case p.offset >= 0:
		r.at = -p.offset - 1
	}
	return r
}

// String formats r as recordPlace.String formats the place it stands
// for.
func (t *pathTable) String(r placeRef) string {
	p := recordPlace{path: t.paths[r.path], offset: -1}
	switch {
	case r.at > 0:
		p.line = r.at
	case r.at < 0:
		p.offset = -r.at - 1
	}
	return p.String()
}
