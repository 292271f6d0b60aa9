package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
)

// Doc is a document as the index stores it.
type Doc struct {
	// Name is the caller's identifier of the document (unique): the index
	// keys it by ID(Name).
	Name string
	// Fingerprint is the exact fingerprint of the document's body
	// (sample.Sketched.Fingerprint), meaningful when HasFingerprint.
	// Stored, it makes the document findable by Identical: a body
	// identical to this one is recognized before any sketch is compared.
	Fingerprint    uint64
	HasFingerprint bool
	// Sketch is the document's sketch; its header must equal the index's.
	Sketch sketch.Sketch
	// Features, when not nil, is the sorted set of the document's feature
	// ids: stored, it lets verification use the exact Jaccard.
	Features []uint64
	// Compact marks Features as kept in short form: only the top 32 bits
	// of each id count. The record stores those (4 bytes instead of 8),
	// and a decoded record holds them with the low 32 bits zero. Verification against a set of
	// which either side is Compact compares top halves only (Verify).
	// NewDoc sets it when it keeps the ids of a short document that the
	// caller did not ask to keep (see NewDoc); false stores full ids.
	Compact bool
	// Weighted, when not nil, is the document's weighted feature set
	// sorted by id (for the weighted samplers CWS and ICWS): stored, it
	// lets verification use the exact weighted Jaccard Σmin/Σmax.
	Weighted []feature.Feature
}

// Record encoding, version 3 (what AppendDoc writes):
//
//	byte 3 | uvarint len(name) | name | byte flags |
//	[uint64 LE fingerprint, if flags&recFingerprint] |
//	uint32 LE len(sketch) | sketch encoding (package sketch, with its CRC) |
//	[uvarint n | n × uint64 LE of the sorted ids, if flags&recFeatures] |
//	[uvarint n | n × (uint64 LE id, float64 LE weight), if flags&recWeighted]
//
// The feature ids are fixed-width because hashed ids are uniform: the gap
// between neighbours in a sorted set of n ids is about 2^64/n, so a
// varint delta takes 8 bytes until n passes 2^15 and 9 below n = 2^8 —
// delta coding saved nothing, and fixed-width ids are read in place by the
// query path's verification (verifyRecord) without decoding.
//
// A version 3 record may instead hold its feature ids in short form
// (Doc.Compact), marked by the flag recCompact beside recFeatures:
//
//	[uvarint n | n × uint32 LE of the ids' top 32 bits, non-decreasing]
//
// That is how the index keeps the ids of a short document for exact
// verification at no more bytes than its sketch (NewDoc): a 30-word
// message's 26 ids take 105 bytes, its 128-sample sketch about 1 KB. Two
// different feature ids share their top half with probability 2^-32, so
// a short-form comparison of sets of n and m ids differs from the exact
// one with probability at most n·m·2^-32 (4·10^-6 at 128 ids each), and
// then by one shared feature too many. A record with recCompact is read as
// corrupt by releases before it, which never wrote the flag.
//
// Version 2 (still read) is version 3 with the ids delta-coded:
//
//	[uvarint n | n delta uvarints of the sorted ids, if flags&recFeatures] |
//	[uvarint n | n × (delta uvarint id, float64 LE weight), if flags&recWeighted]
//
// Version 1 (written before the index kept fingerprints; still read):
//
//	byte 1 | uvarint len(name) | name | uint32 LE len(sketch) | sketch |
//	uvarint nfeatures+1 (0: no features) | delta uvarints of sorted features
const (
	recordV1 = 1
	recordV2 = 2
	recordV3 = 3

	recFingerprint = 1 << 0
	recFeatures    = 1 << 1
	recWeighted    = 1 << 2
	// recCompact (with recFeatures) stores each feature id's top 32 bits.
	recCompact = 1 << 6
)

// AppendDoc appends the stored encoding of d (record version 3) to dst.
// It fails only when d.Sketch is invalid, and then appends nothing.
func AppendDoc(dst []byte, d *Doc) ([]byte, error) {
	if err := d.Sketch.Validate(); err != nil {
		return dst, err
	}
	dst = append(dst, recordV3)
	dst = binary.AppendUvarint(dst, uint64(len(d.Name)))
	dst = append(dst, d.Name...)
	var flags byte
	if d.HasFingerprint {
		flags |= recFingerprint
	}
	if d.Features != nil {
		flags |= recFeatures
		if d.Compact {
			flags |= recCompact
		}
	}
	if d.Weighted != nil {
		flags |= recWeighted
	}
	dst = append(dst, flags)
	if d.HasFingerprint {
		dst = binary.LittleEndian.AppendUint64(dst, d.Fingerprint)
	}
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, _ = d.Sketch.AppendBinary(dst) // validated above
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	if d.Features != nil {
		dst = binary.AppendUvarint(dst, uint64(len(d.Features)))
		if d.Compact {
			for _, f := range d.Features {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(f>>32))
			}
		} else {
			for _, f := range d.Features {
				dst = binary.LittleEndian.AppendUint64(dst, f)
			}
		}
	}
	if d.Weighted != nil {
		dst = binary.AppendUvarint(dst, uint64(len(d.Weighted)))
		for _, f := range d.Weighted {
			dst = binary.LittleEndian.AppendUint64(dst, f.ID)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f.Weight))
		}
	}
	return dst, nil
}

// DecodeDoc decodes a record made by AppendDoc (or by the version 1
// and 2 encodings of earlier releases). The result does not alias rec. Damage
// gives an error wrapping ErrCorrupt.
func DecodeDoc(rec []byte) (*Doc, error) {
	d := new(Doc)
	return d, decodeDoc(rec, d)
}

// view is a parsed record whose slices alias the record's bytes.
type view struct {
	version  byte
	name     []byte
	flags    byte
	fp       uint64
	sketch   []byte // the sketch's encoding
	features []byte // versions 2 and 3: the set features' section (count included); version 1: the whole tail
	weighted []byte // versions 2 and 3: the weighted features' section (count included)
}

func corrupt(what string) error { return fmt.Errorf("%w: %s", ErrCorrupt, what) }

// parse splits rec into its parts without decoding the sketch or the
// features. Cost O(1) for version 3; versions 1 and 2 add a walk over the
// feature sections' varints.
func parse(rec []byte) (view, error) {
	var v view
	if len(rec) == 0 {
		return v, corrupt("empty record")
	}
	v.version = rec[0]
	rec = rec[1:]
	n, w := binary.Uvarint(rec)
	if w <= 0 || n > uint64(len(rec)-w) {
		return v, corrupt("name")
	}
	v.name = rec[w : w+int(n)]
	rec = rec[w+int(n):]
	switch v.version {
	case recordV1:
		if len(rec) < 4 || uint64(binary.LittleEndian.Uint32(rec)) > uint64(len(rec)-4) {
			return v, corrupt("sketch length")
		}
		n = uint64(binary.LittleEndian.Uint32(rec))
		v.sketch = rec[4 : 4+n]
		v.features = rec[4+n:]
		return v, nil
	case recordV2, recordV3:
	default:
		return v, corrupt(fmt.Sprintf("unknown record version %d", v.version))
	}
	if len(rec) < 1 {
		return v, corrupt("flags")
	}
	v.flags = rec[0]
	rec = rec[1:]
	if v.flags&^(recFingerprint|recFeatures|recWeighted|recCompact) != 0 ||
		(v.flags&recCompact != 0 && (v.version != recordV3 || v.flags&recFeatures == 0)) {
		return v, corrupt("flags")
	}
	if v.flags&recFingerprint != 0 {
		if len(rec) < 8 {
			return v, corrupt("fingerprint")
		}
		v.fp = binary.LittleEndian.Uint64(rec)
		rec = rec[8:]
	}
	if len(rec) < 4 || uint64(binary.LittleEndian.Uint32(rec)) > uint64(len(rec)-4) {
		return v, corrupt("sketch length")
	}
	n = uint64(binary.LittleEndian.Uint32(rec))
	v.sketch = rec[4 : 4+n]
	rec = rec[4+n:]
	var err error
	width := 0 // version 2: uvarints
	if v.version == recordV3 {
		width = 8
	}
	if v.flags&recFeatures != 0 {
		w := width
		if v.flags&recCompact != 0 {
			w = 4
		}
		if v.features, rec, err = section(rec, 0, w); err != nil {
			return v, err
		}
	}
	if v.flags&recWeighted != 0 {
		if v.weighted, rec, err = section(rec, 8, width); err != nil {
			return v, err
		}
	}
	if len(rec) != 0 {
		return v, corrupt("trailing bytes")
	}
	return v, nil
}

// section splits off a feature section of rec: a uvarint count, then that
// many entries of an id (width bytes, or a uvarint when width is 0) and
// extra bytes.
func section(rec []byte, extra, width int) (sec, rest []byte, err error) {
	n, w := binary.Uvarint(rec)
	if w <= 0 || n > uint64(len(rec)) {
		return nil, rec, corrupt("feature count")
	}
	off := w
	if width > 0 {
		if n > uint64(len(rec)-off)/uint64(width+extra) {
			return nil, rec, corrupt("features")
		}
		off += int(n) * (width + extra)
		return rec[:off], rec[off:], nil
	}
	for i := uint64(0); i < n; i++ {
		_, w := binary.Uvarint(rec[off:])
		if w <= 0 || len(rec)-off-w < extra {
			return nil, rec, corrupt("features")
		}
		off += w + extra
	}
	return rec[:off], rec[off:], nil
}

func decodeDoc(rec []byte, d *Doc) error {
	v, err := parse(rec)
	if err != nil {
		return err
	}
	return v.decode(d)
}

// decode fills d from v, reusing d's slices.
func (v *view) decode(d *Doc) error {
	d.Name = string(v.name)
	d.Fingerprint, d.HasFingerprint = v.fp, v.flags&recFingerprint != 0
	d.Compact = v.flags&recCompact != 0
	if err := d.Sketch.UnmarshalBinary(v.sketch); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if v.version == recordV1 {
		return decodeV1Features(v.features, d)
	}
	d.Features, d.Weighted = d.Features[:0], d.Weighted[:0]
	ids := sectionIDs{width: 0}
	if v.version == recordV3 {
		ids.width = 8
	}
	if v.flags&recFeatures == 0 {
		d.Features = nil
	} else {
		if d.Compact {
			ids.width = 4
		}
		n := ids.start(v.features)
		d.Features = slices.Grow(d.Features, n)
		for range n {
			x, _, ok := ids.next(0)
			if !ok {
				return corrupt("features out of order")
			}
			d.Features = append(d.Features, x)
		}
		if d.Features == nil {
			d.Features = []uint64{}
		}
	}
	if v.flags&recWeighted == 0 {
		d.Weighted = nil
	} else {
		ids.width = 8
		if v.version != recordV3 {
			ids.width = 0
		}
		n := ids.start(v.weighted)
		d.Weighted = slices.Grow(d.Weighted, n)
		for range n {
			x, w, ok := ids.next(8)
			if !ok {
				return corrupt("weighted features out of order")
			}
			d.Weighted = append(d.Weighted, feature.Feature{ID: x, Weight: math.Float64frombits(binary.LittleEndian.Uint64(w))})
		}
		if d.Weighted == nil {
			d.Weighted = []feature.Feature{}
		}
	}
	return nil
}

// sectionIDs reads the ids of a feature section checked by parse: fixed
// width (version 3: 8 bytes, or 4 of a compact section, read as the id's
// top half; each id at least the one before) or delta uvarints (version
// 2, width 0).
type sectionIDs struct {
	width int
	prev  uint64
	rest  []byte
}

// start begins a section and returns its count.
func (s *sectionIDs) start(sec []byte) int {
	n, w := binary.Uvarint(sec)
	s.rest, s.prev = sec[w:], 0
	return int(n)
}

// next returns the next id and the extra bytes that follow it in its
// entry; ok is false when a fixed-width id is below the one before.
func (s *sectionIDs) next(extra int) (x uint64, tail []byte, ok bool) {
	w := s.width
	switch w {
	case 8:
		x = binary.LittleEndian.Uint64(s.rest)
	case 4:
		x = uint64(binary.LittleEndian.Uint32(s.rest)) << 32
	default:
		x, w = binary.Uvarint(s.rest)
		x += s.prev
	}
	if s.width > 0 && x < s.prev {
		return 0, nil, false
	}
	tail, s.rest = s.rest[w:w+extra], s.rest[w+extra:]
	s.prev = x
	return x, tail, true
}

func decodeV1Features(rec []byte, d *Doc) error {
	d.Weighted = nil
	n, w := binary.Uvarint(rec)
	if w <= 0 {
		return corrupt("feature count")
	}
	rec = rec[w:]
	if n == 0 {
		d.Features = nil
		if len(rec) != 0 {
			return corrupt("trailing bytes")
		}
		return nil
	}
	n--
	if n > uint64(len(rec)) {
		return corrupt("feature count")
	}
	d.Features = d.Features[:0]
	prev := uint64(0)
	for i := uint64(0); i < n; i++ {
		v, w := binary.Uvarint(rec)
		if w <= 0 {
			return corrupt("features")
		}
		prev += v
		d.Features = append(d.Features, prev)
		rec = rec[w:]
	}
	if d.Features == nil {
		d.Features = []uint64{}
	}
	if len(rec) != 0 {
		return corrupt("trailing bytes")
	}
	return nil
}
