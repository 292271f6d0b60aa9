package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sketch"
)

// How a run holds and compares sketch values.
//
// The batch comparisons of a run (the join's keys and the estimates of
// verification) look only at whether two values are equal, slot by slot,
// for the slot-wise samplers (sketch.Algorithm.SlotWise: every default
// sampler). For them a run compares each 64-bit value v folded to 32
// bits, fold(v) = low(v) XOR high(v): equal values fold equal, and a run
// in memory without a budget holds only the folded words (4 bytes a value
// instead of 8: at 1M documents and k = 128, 0.5 GiB instead of 1 GiB).
// The set and HMT sketches (BottomK, Proportional, HMT, HMTDep) are
// compared by order and structure, not slot by slot: their runs compare
// and hold full values.
//
// The price is a chance that two distinct values fold equal. The
// slot-wise samplers' values are outputs of 64-bit hash functions
// (rng.Mix64, rng.Hash2) or of a·h+b over them, with a hash's random bits
// in both halves (Prefix and the lazy samplers keep 8 bits of rank on top
// of 56 bits of hash): modelled as uniform, two distinct values fold equal
// with probability 2^-32, and XOR-ing the halves keeps that so when either
// half is all structure. Then:
//
//   - Verification: each slot where two documents' values differ agrees
//     after folding with probability 2^-32, independently of J, so the
//     match fraction Q of a pair has expectation J + (1-J)·2^-32 instead
//     of J (a bias below 2.4e-10, against a standard error of
//     sqrt(J(1-J)/k), 0.035 at J = 0.8, k = 128), and over C candidate
//     pairs of k slots the expected number of slots that agree by folding
//     alone is at most C·k·2^-32: 0.0028 for the 1M-document benchmark
//     (93,332 candidate pairs, k = 128). Short of such a slot, the pairs
//     and similarities are those of the full values, bit for bit.
//   - The join: a band of r values whose full values differ in d ≥ 1
//     slots agrees after folding with probability 2^-32d ≤ 2^-32, no more
//     than the chance, already accepted by index.Join, that two distinct
//     keys agree in their high 32 bits; such a pair becomes a candidate
//     and verification, as for any other, rejects it unless its estimate
//     passes. The set of candidates differs from that of full values only
//     in such chance collisions.
//
// Every batch comparison folds, in memory and out of core alike (whose
// sketch file keeps full values, and folds them as it reads them back),
// so that both give the same candidates, pairs and clusters, byte for
// byte. What leaves the run keeps full values: the records and queries of
// a store, whose later queries compare 64-bit sketches with the stored
// ones, and the exported band keys (the index's own keys). A run that
// holds folded words and needs full values writes the high halves to a
// work file as stage 1 makes them (highFile), and reads a document's back
// with its folded words: low = fold XOR high.

// foldValue folds a sketch value to the 32 bits a run compares.
func foldValue(v uint64) uint32 { return uint32(v) ^ uint32(v>>32) }

// foldAll folds values in place (each to a uint64 holding its fold).
func foldAll(vs []uint64) {
	for j, v := range vs {
		vs[j] = uint64(foldValue(v))
	}
}

// compareForm names how the run's batch comparisons see sketch values,
// for the configuration a resumable run's stage files record: stage 2's
// candidates and stage 3's pairs depend on it.
func (r *run) compareForm() string {
	if r.fold {
		return "fold32"
	}
	return "full"
}

// slots is the number of values of the run's sketches of a non-empty
// set (sketch.Sketch.Validate: k, or k/2 for XOR pairs).
func (r *run) slots() int {
	n := int(r.hdr.K)
	if r.hdr.Params&sketch.ParamXORPair != 0 {
		n /= 2
	}
	return n
}

// memValues appends the values the run compares (folded when r.fold) of
// the document at position i, in memory, to dst.
func (r *run) memValues(dst []uint64, i int) []uint64 {
	w := r.side.vals.at(i).words
	if r.narrow {
		return widen(dst, w)
	}
	return joinHalves(dst, w, r.fold)
}

// joinHalves appends the values whose halves w holds (low first:
// sketchVals) to dst, each folded when fold.
func joinHalves(dst []uint64, w []uint32, fold bool) []uint64 {
	for j := 0; j+1 < len(w); j += 2 {
		v := uint64(w[j]) | uint64(w[j+1])<<32
		if fold {
			v = uint64(foldValue(v))
		}
		dst = append(dst, v)
	}
	return dst
}

// widen appends the words w to dst as uint64s.
func widen(dst []uint64, w []uint32) []uint64 {
	at := len(dst)
	dst = slices.Grow(dst, len(w))[:at+len(w)]
	out := dst[at:]
	for j, x := range w {
		out[j] = uint64(x)
	}
	return dst
}

// numValues returns the number of sketch values of the document at
// position i.
func (r *run) numValues(i int) int {
	if r.ext != nil {
		_, n := r.ext.span(i)
		return n
	}
	n := len(r.side.vals.at(i).words)
	if !r.narrow {
		n /= 2
	}
	return n
}

// appendValues appends the sketch values of the document at position i to
// dst: the full values when l.full, else the values the run compares. Out
// of core they are read from the sketch file, and for a run in memory
// that holds folded words, the full ones from the high halves' file.
func (l *docLoader) appendValues(dst []uint64, i int) ([]uint64, error) {
	r := l.r
	if r.ext != nil {
		at := len(dst)
		dst, err := r.ext.appendValues(dst, i, &l.buf)
		if err == nil && !l.full && r.fold {
			foldAll(dst[at:])
		}
		return dst, err
	}
	w := r.side.vals.at(i).words
	switch {
	case !l.full:
		return r.memValues(dst, i), nil
	case !r.narrow: // words in halves: the full values
		return joinHalves(dst, w, false), nil
	case r.hdr.Bits <= 32: // the values fit in 32 bits: each is its own fold
		return widen(dst, w), nil
	case r.highs == nil:
		return dst, errors.New("dedup: internal error: the full sketch values are asked of a run that kept only their folds")
	}
	if len(w) == 0 {
		return dst, nil
	}
	hi, err := r.highs.read(&l.hr, i)
	if err != nil {
		return dst, err
	}
	if len(hi) != 4*len(w) {
		return dst, fmt.Errorf("dedup: internal error: a sketch of %d values, %d bytes of high halves", len(w), len(hi))
	}
	for j, x := range w {
		h := binary.LittleEndian.Uint32(hi[4*j:])
		dst = append(dst, uint64(x^h)|uint64(h)<<32)
	}
	return dst, nil
}

// docLoader makes the index documents of a batch of the run's documents,
// their sketch values (full ones, or those the run compares) widened into
// one buffer it reuses from batch to batch: a batch operation (the
// store's adds and queries, verification, the band export) holds the
// values of one batch at a time, never all of them as uint64s.
type docLoader struct {
	r    *run
	full bool
	vals []uint64
	docs []index.Doc
	buf  []byte     // reads from the sketch file
	hr   highReader // reads from the high halves' file
	// fc reads the feature sets of an out-of-core run from its feature
	// file (features.go), for loads in increasing order of position; fids
	// and fws hold a load's.
	fc *featCursor
	// df reads those of a run in memory whose feature sets are on disk
	// (diskFeatures), in any order, through fp.
	df   *diskFeatures
	fp   []byte
	fids []uint64
	fws  []feature.Feature
	// short reads back only the feature sets a store of sketches keeps
	// (index.Doc.TrimFeatures: short documents'), as far as the sketch's
	// size tells (withShortFeatures).
	short bool
	// ends and pos are verifyCands' scratch.
	ends []uint32
	pos  []int
}

// newLoader returns a loader of full values (the store, the band export)
// or of those the run compares (verification). byID says that it loads
// documents in increasing order of their index ids (the store's adds):
// it then reads the high halves a bucket at a time (highFile).
func (r *run) newLoader(full, byID bool) *docLoader {
	return &docLoader{r: r, full: full, hr: highReader{bucket: -1, whole: byID}}
}

// withFeatures makes the loader of a run whose feature sets are in its
// feature file read them back too: out of core for loads in increasing
// order of position (the order of r.unique), in memory (diskFeatures) in
// any order.
func (l *docLoader) withFeatures() *docLoader {
	r := l.r
	switch {
	case !r.exact:
	case r.ext != nil && r.ext.feats != nil:
		l.fc = r.ext.feats.cursor(0, 0, 1<<16, len(r.res.Docs))
	case r.feats != nil:
		l.df = r.feats
	}
	return l
}

// withShortFeatures is withFeatures for a store of sketches, which keeps
// the feature sets of short documents only (index.Cheap): the loader
// reads back those whose size (sample.Config.Size: their number of
// features) says they may be short, and leaves the others' nil, so that
// an out-of-core run's index keeps the short documents' ids as a run in
// memory's does, and reads a few bytes per short document to do so.
func (l *docLoader) withShortFeatures() *docLoader {
	if l.r.hdr.Algorithm.IsWeighted() {
		return l // a store of sketches keeps no weighted set
	}
	l.short = true
	return l.withFeatures()
}

// mayBeCheap reports whether the document at position i, of sketch s,
// has a feature set index.Cheap keeps. An unweighted sketch's recorded
// size is its number of features (sample.Config.Size), the very count
// Cheap tests, so a 300-word document (about 296 ids, past the 256 of
// k = 128) is not read back only to be dropped. A size of 0 (unknown)
// reads the set.
func (l *docLoader) mayBeCheap(i int, s *sketch.Sketch) bool {
	size := *l.r.side.sizes.at(i)
	return size <= 0 || index.Cheap(int(size), s)
}

// load returns the index documents of the documents at positions pos,
// valid until the next load.
func (l *docLoader) load(pos []int) ([]index.Doc, error) {
	r := l.r
	n := 0
	for _, i := range pos {
		n += r.numValues(i)
	}
	// One allocation at most, before any document points into it; never
	// nil, so that a document without values has an empty, non-nil slice,
	// as index.NewDoc gives.
	l.vals = slices.Grow(l.vals[:0], max(n, 1))
	l.docs = slices.Grow(l.docs[:0], len(pos))[:len(pos)]
	for k, i := range pos {
		at := len(l.vals)
		var err error
		if l.vals, err = l.appendValues(l.vals, i); err != nil {
			return nil, err
		}
		l.docs[k] = r.indexDoc(i, l.vals[at:len(l.vals):len(l.vals)])
	}
	if l.fc != nil || l.df != nil {
		// One allocation, as for the values: the sets point into the
		// buffer, and growing it as they are read would leave each
		// earlier array alive beside the next (three times the chunk's
		// feature sets, doubled again by the collector's headroom).
		nf := 0
		for _, i := range pos {
			nf += r.res.Docs[i].Shingles
		}
		if r.hdr.Algorithm.IsWeighted() {
			l.fids, l.fws = l.fids[:0], slices.Grow(l.fws[:0], nf)
		} else {
			l.fids, l.fws = slices.Grow(l.fids[:0], nf), l.fws[:0]
		}
		for k, i := range pos {
			if l.short && !l.mayBeCheap(i, &l.docs[k].Sketch) {
				l.docs[k].Features, l.docs[k].Weighted = nil, nil
				continue
			}
			var f featureSet
			var err error
			if l.fc != nil {
				f, err = l.fc.read(i, &l.fids, &l.fws)
			} else {
				f, err = l.df.read(i, &l.fp, &l.fids, &l.fws)
			}
			if err != nil {
				return nil, err
			}
			l.docs[k].Features, l.docs[k].Weighted = f.features, f.weighted
		}
	}
	return l.docs, nil
}

// The high halves' file is written in buckets by the top bits of the
// documents' index ids: the store's adds, the one reader of every
// document's full values in a run without a prior index, take the
// documents in id order, one bucket after another, and read each bucket
// whole (a few reads of highSegment bytes) instead of one document at a
// time (a system call each, 1M of them at 1M documents). Readers in
// another order (the queries against a prior index, the band export)
// read a document's high halves where its bucket put them.
const highBuckets = 256 // by the top 8 bits of the index id

// highSegment is the bytes a bucket collects before it writes them; tests
// lower it.
var highSegment = 16 << 10

// highFile holds the high halves of the sketch values of a run in memory
// that holds folded words (run.narrow) and needs the full values later:
// for a store, or for the band export. Stage 1 writes them (stride words
// per document, zeros for a document without values) in segments of a
// bucket's documents; the readers read them back with ReadAt, from
// several goroutines at once. The file is removed when the run ends.
type highFile struct {
	f      *os.File
	w      *bufio.Writer
	stride int   // values of a document with values
	rec    int   // bytes of a document's high halves, 4·stride
	per    int   // documents of a segment
	off    int64 // bytes written
	// place[i] is where the document at position i lies: its bucket in
	// the top 8 bits, its rank in the bucket (documents before it there)
	// below.
	place   column[uint32]
	buckets [highBuckets]highBucket
}

// highBucket is one bucket of a highFile.
type highBucket struct {
	buf  []byte  // its segment being filled, while stage 1 writes
	segs []int64 // where its segments start in the file, in order
	n    int     // its documents
}

// highPlaceBytes is what a highFile holds per document in memory.
const highPlaceBytes = 4

// newHighFile creates the high halves' file in dir (the temporary
// directory when empty) for documents of stride values.
func newHighFile(dir string, stride int) (*highFile, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("dedup: work directory: %w", err)
		}
	}
	f, err := os.CreateTemp(dir, fileHighs)
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	rec := 4 * max(stride, 1)
	return &highFile{f: f, w: bufio.NewWriterSize(f, 1<<20), stride: stride, rec: rec, per: max(1, highSegment/rec)}, nil
}

// put appends the high halves of the next document, of index id id, which
// has n values.
func (h *highFile) put(id uint64, highs []uint32, n int) error {
	if n != 0 && (n != h.stride || len(highs) != n) {
		return fmt.Errorf("dedup: internal error: a sketch of %d values (%d high halves), want %d", n, len(highs), h.stride)
	}
	k := int(id >> (64 - 8))
	b := &h.buckets[k]
	if b.n >= 1<<24 {
		return fmt.Errorf("dedup: more than %d documents in one bucket of the sketches' high halves", 1<<24)
	}
	h.place.push(uint32(k)<<24 | uint32(b.n))
	b.n++
	if b.buf == nil {
		b.buf = make([]byte, 0, h.per*h.rec)
	}
	for j := range h.stride {
		var x uint32
		if n != 0 {
			x = highs[j]
		}
		b.buf = binary.LittleEndian.AppendUint32(b.buf, x)
	}
	if len(b.buf) == cap(b.buf) {
		return h.flushSegment(b)
	}
	return nil
}

// flushSegment writes bucket b's segment.
func (h *highFile) flushSegment(b *highBucket) error {
	b.segs = append(b.segs, h.off)
	if _, err := h.w.Write(b.buf); err != nil {
		return fmt.Errorf("dedup: writing the sketches' high halves: %w", err)
	}
	h.off += int64(len(b.buf))
	b.buf = b.buf[:0]
	return nil
}

// finish writes the buckets' last segments and flushes the file, once
// stage 1 has put every document.
func (h *highFile) finish() error {
	for k := range h.buckets {
		b := &h.buckets[k]
		if len(b.buf) > 0 {
			if err := h.flushSegment(b); err != nil {
				return err
			}
		}
		b.buf = nil
	}
	if err := h.w.Flush(); err != nil {
		return fmt.Errorf("dedup: writing the sketches' high halves: %w", err)
	}
	return nil
}

// highReader is a reader's state of a highFile: a buffer, and with whole
// the bucket it read last.
type highReader struct {
	buf    []byte
	whole  bool // read whole buckets
	bucket int  // the bucket in buf, -1 for none
}

// read returns the high halves of the document at position i, as
// little-endian bytes valid until the next read.
func (h *highFile) read(hr *highReader, i int) ([]byte, error) {
	p := *h.place.at(i)
	k, rank := int(p>>24), int(p&(1<<24-1))
	b := &h.buckets[k]
	seg, at := rank/h.per, rank%h.per*h.rec
	if !hr.whole {
		hr.buf = slices.Grow(hr.buf[:0], h.rec)[:h.rec]
		if _, err := h.f.ReadAt(hr.buf, b.segs[seg]+int64(at)); err != nil {
			return nil, fmt.Errorf("dedup: reading the sketches' high halves: %w", err)
		}
		return hr.buf, nil
	}
	if hr.bucket != k {
		n := b.n * h.rec
		hr.buf = slices.Grow(hr.buf[:0], n)[:n]
		for s, off := range b.segs {
			lo := s * h.per * h.rec
			if _, err := h.f.ReadAt(hr.buf[lo:min(lo+h.per*h.rec, n)], off); err != nil {
				hr.bucket = -1
				return nil, fmt.Errorf("dedup: reading the sketches' high halves: %w", err)
			}
		}
		hr.bucket = k
	}
	at += seg * h.per * h.rec
	return hr.buf[at : at+h.rec], nil
}

// close closes and removes the file.
func (h *highFile) close() error {
	if h == nil {
		return nil
	}
	err := h.f.Close()
	if rerr := os.Remove(h.f.Name()); err == nil {
		err = rerr
	}
	return err
}
