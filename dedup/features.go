package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/neardup/neardup/feature"
)

// Feature sets out of core.
//
// Exact verification needs the feature sets of the two documents of each
// candidate pair, and the candidates are known only after the join. A run
// in memory keeps every document's feature set until then; an out-of-core
// run (external) writes them instead to the feature file beside its
// sketch file as stage 1 makes them, holds none in memory, and after the
// join reads back only those of documents that appear in a candidate pair
// (at the default threshold about one document in ten thousand, and the
// near duplicates of the corpus), in sorted passes over that file
// (verifyExact in verify_exact.go). Verification stays exact at any
// corpus size, in memory bounded by the budget. A run whose feature sets
// alone do not fit (a thousand-word document's are 8 KB, ten times its
// sketch) stays in memory and sends only them to the feature file
// (diskFeatures): after the in-memory join it reads back those of the
// candidates' documents where they lie.
//
// The feature file holds one record per document, in the documents'
// order (their positions in Result.Docs): a uvarint length, then that many
// bytes of payload, a flags byte followed by the feature ids (a uvarint
// count, then the ids: 8 bytes each, little-endian, under flagFixed, as
// this release writes them; as uvarint deltas, increasing, in the files of
// earlier releases) or the weighted features (a uvarint count, then per
// feature its id and weight, 8 bytes each, little-endian). A pass skips a
// record it does not need by its length, without decoding it. The deltas
// of a set of hashed ids are about 2^64/n, so they took 8 to 9 bytes each
// all the same, and encoding and decoding them cost about 12 ns an id:
// 12 CPU-s for the billion ids of a million thousand-word documents.

// flagFixed marks a payload whose feature ids are fixed-width (the
// feature file's records since the release that added it).
const flagFixed = 4

// appendFeatureSetFixed appends f's payload with fixed-width ids
// (flagFixed) to b.
func appendFeatureSetFixed(b []byte, f *featureSet) []byte {
	if f.features == nil {
		return appendFeatureSet(b, f)
	}
	flags := byte(flagFeatures | flagFixed)
	if f.weighted != nil {
		flags |= flagWeighted
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(f.features)))
	at := len(b)
	b = slices.Grow(b, 8*len(f.features))[:at+8*len(f.features)]
	for i, x := range f.features {
		binary.LittleEndian.PutUint64(b[at+8*i:], x)
	}
	if f.weighted != nil {
		b = appendWeighted(b, f.weighted)
	}
	return b
}

func appendWeighted(b []byte, ws []feature.Feature) []byte {
	b = binary.AppendUvarint(b, uint64(len(ws)))
	for _, x := range ws {
		b = binary.LittleEndian.AppendUint64(b, x.ID)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.Weight))
	}
	return b
}

// appendFeatureSet appends f's payload (flags byte and features) to b.
func appendFeatureSet(b []byte, f *featureSet) []byte {
	var flags byte
	if f.features != nil {
		flags |= flagFeatures
	}
	if f.weighted != nil {
		flags |= flagWeighted
	}
	b = append(b, flags)
	if f.features != nil {
		b = binary.AppendUvarint(b, uint64(len(f.features)))
		var prev uint64
		for _, x := range f.features {
			b = binary.AppendUvarint(b, x-prev)
			prev = x
		}
	}
	if f.weighted != nil {
		b = appendWeighted(b, f.weighted)
	}
	return b
}

var errCorruptFeatures = errors.New("corrupt feature file")

// decodeFeatureSet decodes a payload of appendFeatureSet, its ids
// appended to *ids and its weighted features to *ws (buffers the caller
// reuses), which the returned set's slices point into.
func decodeFeatureSet(p []byte, ids *[]uint64, ws *[]feature.Feature) (featureSet, error) {
	var f featureSet
	if len(p) == 0 {
		return f, errCorruptFeatures
	}
	flags := p[0]
	p = p[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	if flags&flagFeatures != 0 {
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return f, errCorruptFeatures
		}
		at := len(*ids)
		if flags&flagFixed != 0 {
			if n > uint64(len(p))/8 {
				return f, errCorruptFeatures
			}
			*ids = slices.Grow(*ids, int(n))
			for i := range int(n) {
				*ids = append(*ids, binary.LittleEndian.Uint64(p[8*i:]))
			}
			p = p[8*n:]
		} else {
			var prev uint64
			for range n {
				d, ok := uv()
				if !ok {
					return f, errCorruptFeatures
				}
				prev += d
				*ids = append(*ids, prev)
			}
		}
		f.features = (*ids)[at:len(*ids):len(*ids)]
	}
	if flags&flagWeighted != 0 {
		n, ok := uv()
		if !ok || n > uint64(len(p))/16 {
			return f, errCorruptFeatures
		}
		at := len(*ws)
		for range n {
			*ws = append(*ws, feature.Feature{ID: binary.LittleEndian.Uint64(p), Weight: math.Float64frombits(binary.LittleEndian.Uint64(p[8:]))})
			p = p[16:]
		}
		f.weighted = (*ws)[at:len(*ws):len(*ws)]
	}
	if len(p) != 0 {
		return f, errCorruptFeatures
	}
	return f, nil
}

// featFile is the feature file of an out-of-core run, being written.
type featFile struct {
	f   *os.File
	w   *bufio.Writer
	off int64 // bytes written
	buf []byte
	// lens[i] is the length of document i's record, header included, for
	// the documents this process wrote (4 bytes a document): with all of
	// them, a cursor reads the records it needs where they lie, one read
	// each, and skips the others without reading them (the candidates'
	// documents are a small part of a large corpus); a file restored from
	// a resumed run's stage files or merged from shards has none, and is
	// read through.
	lens column[uint32]
}

// createFeatFile creates (truncates) the feature file in dir.
func createFeatFile(dir string, bufSize int) (*featFile, error) {
	f, err := os.Create(filepath.Join(dir, fileFeatures))
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	return &featFile{f: f, w: bufio.NewWriterSize(f, bufSize)}, nil
}

// put appends the next document's feature set.
func (ff *featFile) put(f *featureSet) error {
	p := appendFeatureSetFixed(ff.buf[:0], f)
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64), uint64(len(p)))
	ff.buf = p
	if _, err := ff.w.Write(b); err != nil {
		return fmt.Errorf("dedup: writing feature sets: %w", err)
	}
	if _, err := ff.w.Write(p); err != nil {
		return fmt.Errorf("dedup: writing feature sets: %w", err)
	}
	ff.off += int64(len(b) + len(p))
	ff.lens.push(uint32(len(b) + len(p)))
	return nil
}

// flush writes what is buffered.
func (ff *featFile) flush() error {
	if err := ff.w.Flush(); err != nil {
		return fmt.Errorf("dedup: writing feature sets: %w", err)
	}
	return nil
}

// close closes the file.
func (ff *featFile) close() error {
	if ff == nil {
		return nil
	}
	return ff.f.Close()
}

// featCursor reads the records of a feature file in order, from the
// record of document pos at byte off.
type featCursor struct {
	br   *bufio.Reader // reads through the file, unless lens
	f    *os.File
	lens *column[uint32] // the records' lengths, when known for every document
	off  int64           // of the next record
	end  int64
	pos  int // the document of the next record
	p    []byte
}

// cursor returns a cursor at document pos, whose record starts at off;
// docs is the number of documents in the file.
func (ff *featFile) cursor(pos int, off int64, bufSize, docs int) *featCursor {
	c := &featCursor{f: ff.f, off: off, end: ff.off, pos: pos}
	if ff.lens.len() == docs {
		c.lens = &ff.lens
	} else {
		c.br = bufio.NewReaderSize(io.NewSectionReader(ff.f, off, ff.off-off), bufSize)
	}
	return c
}

// skipTo skips the records of the documents before pos.
func (c *featCursor) skipTo(pos int) error {
	if c.lens != nil {
		for ; c.pos < pos; c.pos++ {
			c.off += int64(*c.lens.at(c.pos))
		}
		if c.off > c.end {
			return fmt.Errorf("dedup: reading feature sets: %w (document %d past its end)", errCorruptFeatures, c.pos)
		}
		return nil
	}
	for c.pos < pos {
		n, err := c.length()
		if err != nil {
			return err
		}
		if _, err := c.br.Discard(n); err != nil {
			return fmt.Errorf("dedup: reading feature sets: %w", errCorruptFeatures)
		}
		c.off += int64(n)
		c.pos++
	}
	return nil
}

// length reads the next record's length.
func (c *featCursor) length() (int, error) {
	if c.off >= c.end {
		return 0, fmt.Errorf("dedup: reading feature sets: %w (document %d past its end)", errCorruptFeatures, c.pos)
	}
	n, err := binary.ReadUvarint(c.br)
	if err != nil || n > uint64(c.end-c.off) {
		return 0, fmt.Errorf("dedup: reading feature sets: %w", errCorruptFeatures)
	}
	c.off += int64(uvarintLen(n))
	return int(n), nil
}

// read reads the feature set of document pos (at or after the cursor),
// into the buffers ids and ws (featureSet's slices point into them).
func (c *featCursor) read(pos int, ids *[]uint64, ws *[]feature.Feature) (featureSet, error) {
	if err := c.skipTo(pos); err != nil {
		return featureSet{}, err
	}
	if c.lens != nil {
		if pos >= c.lens.len() {
			return featureSet{}, fmt.Errorf("dedup: reading feature sets: %w (document %d past its end)", errCorruptFeatures, pos)
		}
		f, err := readRecord(c.f, &c.p, pos, c.off, *c.lens.at(pos), c.end, ids, ws)
		if err == nil {
			c.off += int64(*c.lens.at(pos))
			c.pos++
		}
		return f, err
	}
	n, err := c.length()
	if err != nil {
		return featureSet{}, err
	}
	if cap(c.p) < n {
		c.p = make([]byte, n)
	}
	c.p = c.p[:n]
	if _, err := io.ReadFull(c.br, c.p); err != nil {
		return featureSet{}, fmt.Errorf("dedup: reading feature sets: %w", err)
	}
	c.off += int64(n)
	c.pos++
	f, err := decodeFeatureSet(c.p, ids, ws)
	if err != nil {
		return f, fmt.Errorf("dedup: reading feature sets: %w (document %d)", err, pos)
	}
	return f, nil
}

// readRecord reads the record of document pos, n bytes at off (header
// included) in f, whose records end at end, through the scratch buffer
// *p, and decodes it into ids and ws (decodeFeatureSet).
func readRecord(f *os.File, p *[]byte, pos int, off int64, n uint32, end int64, ids *[]uint64, ws *[]feature.Feature) (featureSet, error) {
	if off+int64(n) > end {
		return featureSet{}, fmt.Errorf("dedup: reading feature sets: %w (document %d past its end)", errCorruptFeatures, pos)
	}
	if cap(*p) < int(n) {
		*p = make([]byte, n)
	}
	b := (*p)[:n]
	if _, err := f.ReadAt(b, off); err != nil {
		return featureSet{}, fmt.Errorf("dedup: reading feature sets: %w", err)
	}
	l, h := binary.Uvarint(b)
	if h <= 0 || uint64(h)+l != uint64(n) {
		return featureSet{}, fmt.Errorf("dedup: reading feature sets: %w (document %d)", errCorruptFeatures, pos)
	}
	fs, err := decodeFeatureSet(b[h:], ids, ws)
	if err != nil {
		return fs, fmt.Errorf("dedup: reading feature sets: %w (document %d)", err, pos)
	}
	return fs, nil
}

// diskFeatures are the feature sets of a run that stays in memory while
// they do not fit there (run.spillFeatures): stage 1 writes them to the
// feature file as it makes them, as an out-of-core run does, and after
// stage 1 the readers (verification, the queries of an earlier run's
// index, the store's adds with StoreFeatures) read those of the documents
// they need where they lie, in any order and from several goroutines at
// once: at the default threshold the candidates' documents are a small
// part of the corpus. If the rest of the run then passes its share of
// the budget too, the run goes out of core and its feature file becomes
// the out-of-core run's (startExternal).
type diskFeatures struct {
	f *featFile
	// offs[i] is where the record of the document at position i starts
	// (finish): 8 bytes a document.
	offs []int64
}

// finish completes the file after stage 1 and makes the records'
// offsets.
func (d *diskFeatures) finish() error {
	if err := d.f.flush(); err != nil {
		return err
	}
	d.offs = make([]int64, d.f.lens.len())
	var off int64
	for i := range d.offs {
		d.offs[i] = off
		off += int64(*d.f.lens.at(i))
	}
	return nil
}

// read reads the feature set of the document at position pos, through
// the scratch buffer *p, into ids and ws (featureSet's slices point into
// them). It is safe for concurrent use with distinct buffers.
func (d *diskFeatures) read(pos int, p *[]byte, ids *[]uint64, ws *[]feature.Feature) (featureSet, error) {
	if pos < 0 || pos >= len(d.offs) {
		return featureSet{}, fmt.Errorf("dedup: reading feature sets: %w (document %d past its end)", errCorruptFeatures, pos)
	}
	return readRecord(d.f.f, p, pos, d.offs[pos], *d.f.lens.at(pos), d.f.off, ids, ws)
}

// featFile returns the feature file stage 1 writes the documents'
// feature sets to, out of core or in memory (run.feats), or nil while
// they stay in memory.
func (r *run) featFile() *featFile {
	switch {
	case r.ext != nil:
		return r.ext.feats
	case r.feats != nil:
		return r.feats.f
	}
	return nil
}

// spillFeatures is the first step of a run in memory past its share of
// the budget, or past Options.ExactBudget feature ids in memory, with
// exact verification on: the feature sets, 8 bytes a shingle, most of
// what a document of a thousand words holds, go to the feature file in
// the work directory (those read so far, and the later ones as they are
// made), and the sketches, the join and verification stay in memory.
// Only if the rest passes the share too does the run go out of core.
func (r *run) spillFeatures() error {
	dir, _, err := r.workDir()
	if err != nil {
		return err
	}
	ff, err := r.writeFeatures(dir)
	if err != nil {
		return err
	}
	r.feats = &diskFeatures{f: ff}
	return nil
}

// closeFeatures closes the feature file of a run that stayed in memory
// (run.feats), and removes it unless the work files are kept.
func (r *run) closeFeatures() error {
	if r.feats == nil {
		return nil
	}
	err := r.feats.f.close()
	r.feats = nil
	if r.o.KeepWork {
		return err
	}
	var rerr error
	if r.work.owned {
		rerr = os.RemoveAll(r.work.dir)
	} else {
		rerr = os.Remove(filepath.Join(r.work.dir, fileFeatures))
	}
	if err == nil {
		err = rerr
	}
	return err
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
