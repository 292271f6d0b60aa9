package dedup

import (
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// The read-and-sketch stage allocates nothing per document on its hot
// path. A job (jobSize documents) carries its bodies in one buffer, and
// jobs are recycled once the collector has taken their documents, so the
// bodies (most of the bytes the stage touches) are never garbage and the
// collector does not run over a growing heap of sketches for every few
// megabytes read. Each worker carves the sketch values of its documents
// out of arena chunks of sketchChunk documents: one allocation per chunk
// instead of one per document, and a heap of a few large pointer-free
// objects.
const (
	// jobBodyBytes is the initial capacity of a job's body buffer: 64
	// documents of a few KB.
	jobBodyBytes = 256 << 10
	// maxRecycledBody is the largest body buffer a recycled job keeps: a
	// job of large (HTML, WARC) records does not pin its buffer.
	maxRecycledBody = 4 << 20
	// sketchChunk is the number of sketches of one arena chunk.
	sketchChunk = 256
	// bigDocsArray is the size of Result.Docs past which, in a run
	// without a memory budget, the array doubles when it grows
	// (appendDocs).
	bigDocsArray = 32 << 20
)

// jobs recycles jobs between the reader, the workers and the collector.
var jobPool = sync.Pool{New: func() any { return &job{buf: make([]byte, 0, jobBodyBytes)} }}

// newJob returns an empty job numbered n.
func newJob(n int) *job {
	j := jobPool.Get().(*job)
	j.n = n
	return j
}

// hold copies a body into the job's buffer and returns the copy, which
// stays valid while the job is in use. A buffer that is full is left to
// the documents that point into it and replaced by a larger one.
func (j *job) hold(body []byte) []byte {
	if len(j.buf)+len(body) > cap(j.buf) {
		j.buf = make([]byte, 0, max(2*cap(j.buf), len(body), jobBodyBytes))
	}
	at := len(j.buf)
	j.buf = append(j.buf, body...)
	return j.buf[at:len(j.buf):len(j.buf)]
}

// recycle returns a job whose documents the collector has taken.
func (j *job) recycle() {
	clear(j.docs) // drop the names and bodies
	clear(j.out)
	clear(j.ix) // drop the sketches, which the collector filed
	j.docs, j.out, j.ix, j.highs = j.docs[:0], j.out[:0], j.ix[:0], j.highs[:0]
	if cap(j.buf) > maxRecycledBody {
		j.buf = make([]byte, 0, jobBodyBytes)
	}
	j.buf = j.buf[:0]
	jobPool.Put(j)
}

// valueArena hands out the words of sketch values (sketchVals: one a
// value, its fold, or two, its halves) carved from large chunks.
//
// In a run that stays in memory (no Options.Memory) the chunks lie
// outside the Go heap (anonymous mappings, on Linux and macOS): the
// sketch values are pointer-free and live for the whole run, and on the
// heap they would count toward the collector's heap goal, which then lets
// the heap grow to about twice what the run holds (at 1M documents and
// k = 128, a gigabyte of full values let the process reach 1.9 GiB). Off the
// heap the goal follows only the documents' other state. Each document
// holds its chunk's owner (sketchVals.chunk); a chunk is unmapped once no
// document holds it, so no value is read after its memory is gone. An
// out-of-core run keeps its chunks on the heap: it drops the values of
// documents as it spills them, and only the collector, which does not see
// off-heap memory, would return them.
type valueArena struct {
	chunk []uint32
	owner *arenaChunk // the owner of chunk when it lies off the heap
	k     int         // values per sketch, for sizing chunks
	heap  bool        // chunks on the Go heap (an out-of-core run)
}

// arenaChunk owns one off-heap chunk of a valueArena.
type arenaChunk struct {
	size int // bytes mapped
}

// copyOf returns the words of vs in the arena, its folds when narrow,
// else its halves (low first), with capacity their length (an append to
// them never writes into a neighbour's), and the owner of their chunk
// (nil on the heap). An empty vs gives an empty, non-nil slice.
func (a *valueArena) copyOf(vs []uint64, narrow bool) ([]uint32, *arenaChunk) {
	per := 2
	if narrow {
		per = 1
	}
	m := per * len(vs)
	if m > cap(a.chunk)-len(a.chunk) {
		n := max(sketchChunk*per*max(a.k, len(vs)), m)
		ok := false
		if !a.heap && n > 0 {
			var c []uint32
			if a.owner, c, ok = offHeapChunk(n); ok {
				a.chunk = c[:0]
			}
		}
		if !ok {
			a.chunk, a.owner = make([]uint32, 0, n), nil
		}
	}
	at := len(a.chunk)
	a.chunk = a.chunk[:at+m]
	out := a.chunk[at : at+m : at+m]
	if narrow {
		out := out[:len(vs)]
		for j, v := range vs {
			out[j] = foldValue(v)
		}
	} else {
		for j, v := range vs {
			out[2*j], out[2*j+1] = uint32(v), uint32(v>>32)
		}
	}
	return out, a.owner
}

// indexDoc returns the index document of r.res.Docs[i] with the sketch
// values vs.
func (r *run) indexDoc(i int, vs []uint64) index.Doc {
	d := &r.res.Docs[i]
	f := r.side.features(i)
	return index.Doc{Name: d.Name, Fingerprint: d.Fingerprint, HasFingerprint: true,
		Sketch:   sketch.Sketch{Header: r.hdr, Values: vs, Size: *r.side.sizes.at(i)},
		Features: f.features, Weighted: f.weighted}
}

// docOf is index.NewDoc for the batch path: the sketch values go into the
// worker's arena, folded in a run that holds folds (r.narrow), and their
// high halves onto *highs when the run keeps them (r.highs); the feature
// set is index.NewDoc's when features is true.
func (r *run) docOf(a *valueArena, s *sample.Sketched, features bool, highs *[]uint32) docIx {
	var ix docIx
	a.heap = a.heap || r.o.Memory > 0
	ix.vals.words, ix.vals.chunk = a.copyOf(s.Values, r.narrow)
	if r.highs != nil {
		at := len(*highs)
		for _, v := range s.Values {
			*highs = append(*highs, uint32(v>>32))
		}
		ix.highs = (*highs)[at:len(*highs):len(*highs)]
	}
	ix.size = s.Size
	if features {
		d := r.x.NewDoc("", s, true)
		ix.feats = featureSet{features: d.Features, weighted: d.Weighted}
	}
	return ix
}

// docBytes is what a document costs in memory besides its Doc in
// Result.Docs and its side columns: its name and key, and its entries in
// the tables of the run (the reader's table of ids, the run's set of
// ids, the exact-duplicate stage's sort of fingerprints) and in the
// join's arrays. Go's maps take about twice their entries' size.
func docBytes(d *Doc) int64 {
	const perDoc = int64(unsafe.Sizeof(idEntry{})) + 2*8*2 + // the reader's ids: an entry, and slots at most half full (twice that while growing)
		2*16 + // r.local / the fingerprints
		8 + 12 // join order, number and the spill record
	return perDoc + int64(len(d.Name)+len(d.Key))
}

// docArrayBytes is what a document's Doc takes in stage 1: while
// Result.Docs grows by a quarter, the old and the new array are both
// held, 2.25 times its length at the peak.
const docArrayBytes = 9 * int64(unsafe.Sizeof(Doc{})) / 4

// heldBytes is what the document at position i holds in memory in stage
// 1: docBytes, its Doc (docArrayBytes), its side columns and its feature
// set (kept for exact verification); in memory also its sketch values'
// words (4 bytes a value folded, 8 in halves: values.go; a high halves'
// file holds the rest on disk, and its place there in memory) and, in a
// resumable run, its place (out of
// core the stream holds it once the document is collected).
func (r *run) heldBytes(i int) int64 {
	n := docBytes(&r.res.Docs[i]) + docArrayBytes + sizeBytes
	if r.ext == nil {
		n += valsBytes + int64(4*len(r.side.vals.at(i).words))
		if r.highs != nil {
			n += highPlaceBytes
		}
		if r.st != nil {
			n += int64(unsafe.Sizeof(recordPlace{}))
		}
		if r.feats != nil {
			n += 4 + 8 // its feature record's length and offset (diskFeatures)
		}
	} else {
		n += endBytes
	}
	if !r.side.noFeats {
		f := r.side.features(i)
		n += featsBytes + f.bytes()
	}
	return n
}

// metaBytes is what the documents hold in memory after stage 1, out of
// core (their sketch values are in the sketch file): Result.Docs,
// docBytes, the side columns and the feature sets.
func (r *run) metaBytes() int64 {
	docs := r.res.Docs
	n := int64(cap(docs))*int64(unsafe.Sizeof(Doc{})) + int64(len(docs))*(sizeBytes+endBytes)
	for i := range docs {
		n += docBytes(&docs[i])
	}
	if !r.side.noFeats {
		for i := range docs {
			f := r.side.features(i)
			n += featsBytes + f.bytes()
		}
	}
	if r.ext != nil && r.ext.feats != nil {
		n += 4 * int64(r.ext.feats.lens.len()) // the feature records' lengths
	}
	return n
}

// inMemoryDocBytes is what a document of a run in memory holds besides
// its sketch values, names and map entries: its Doc and its side columns
// (without feature sets).
const inMemoryDocBytes = int64(unsafe.Sizeof(Doc{})) + valsBytes + sizeBytes

// collectBeforeJoin collects the garbage of the sketch stage before the
// in-memory join of n documents allocates its postings, when the run is
// large (n*sizeof(Doc) past bigDocsArray): the join's peak then comes on
// top of what the documents hold, not of that and the garbage left since
// the last collection cycle.
func collectBeforeJoin(n int) {
	if int64(n)*inMemoryDocBytes > bigDocsArray {
		debug.FreeOSMemory() // a collection, and the freed pages returned
	}
}

// appendDocs appends ds to docs. When docs must grow into a new array
// that is large against the memory budget, the garbage is collected
// first: the old and the new array are held together while the documents
// are copied, and that peak should not come on top of the garbage of the
// last collection cycle. Without a budget, an array past bigDocsArray
// doubles (append's growth is a quarter there) and nothing is collected:
// the pages of the new array's unused half are not touched until it
// fills, and the 1M-document batch run copies 2 arrays instead of 5 and
// forces no collection. Large arrays are copied in pieces: a copy cannot
// be stopped for a collection's stack scan, which spins meanwhile. On an
// AMD EPYC (Zen 5, AVX2 kernels), bench/dedup's 1M-document batch run
// took 12.5–14.4 s against 14.2–14.7 before (4 runs each, interleaved),
// peak RSS 1.01–1.04 GiB against 1.03, and the scans' spinning
// (runtime.suspendG) 0.8 CPU-s against 1.35.
func (r *run) appendDocs(docs, ds []Doc) []Doc {
	if len(docs)+len(ds) <= cap(docs) {
		return append(docs, ds...)
	}
	n := len(docs) + len(ds)
	c := max(n, cap(docs)+cap(docs)/4)
	big := int64(c) * int64(unsafe.Sizeof(Doc{}))
	switch {
	case r.o.Memory > 0:
		if big > r.o.Memory/32 {
			runtime.GC()
		}
	case big > bigDocsArray:
		c = max(n, 2*cap(docs))
	case len(docs) <= docsCopyPiece:
		return append(docs, ds...) // one piece
	}
	grown := make([]Doc, n, c)
	// In pieces, each a point where the collector's stack scan can stop
	// this goroutine (a copy is not, and 100 MB takes tens of ms).
	for at := 0; at < len(docs); at += docsCopyPiece {
		copy(grown[at:], docs[at:min(at+docsCopyPiece, len(docs))])
	}
	copy(grown[len(docs):], ds)
	return grown
}

// docsCopyPiece is how many Docs appendDocs copies at once (a MiB or so).
const docsCopyPiece = 1 << 13
