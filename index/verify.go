package index

import (
	"encoding/binary"
	"fmt"

	"github.com/neardup/neardup/sketch"
)

// stored is a candidate's record made ready for verification against any
// number of queries: its sketch decoded into a reused buffer and, for a
// version 3 record of a set, its feature ids left in the record's bytes
// and read in place (Index.verifyStored) — the query path's verification
// decodes no feature set and allocates nothing. Other records (versions 1
// and 2, weighted sets) are decoded whole.
type stored struct {
	d    Doc
	v    view
	fast bool
}

// load parses rec, which must stay unchanged while s is used.
func (s *stored) load(rec []byte) error {
	v, err := parse(rec)
	if err != nil {
		return err
	}
	s.v = v
	s.fast = v.version == recordV3 && v.flags&recWeighted == 0
	if !s.fast {
		return v.decode(&s.d)
	}
	if err := s.d.Sketch.UnmarshalBinary(v.sketch); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	s.d.Features, s.d.Weighted = nil, nil
	return nil
}

// name returns the record's document name.
func (s *stored) name() string {
	if s.fast {
		return string(s.v.name)
	}
	return s.d.Name
}

// verifyStored is Verify(q, the document of s), with the same result.
func (x *Index) verifyStored(q *Doc, s *stored) (Comparison, bool, error) {
	if !s.fast {
		return x.Verify(q, &s.d)
	}
	est, err := sketch.Jaccard(&q.Sketch, &s.d.Sketch)
	if err != nil {
		return Comparison{}, false, fmt.Errorf("index: %q and %q: %w", q.Name, s.v.name, err)
	}
	c := Comparison{Estimate: est, Exact: -1}
	if q.Features != nil && s.v.flags&recFeatures != 0 {
		var inter, union int
		var ok bool
		switch {
		case s.v.flags&recCompact != 0:
			inter, union, ok = overlapFixed(q.Features, s.v.features, 4, topHalf)
		case q.Compact:
			inter, union, ok = overlapFixed(q.Features, s.v.features, 8, topHalf)
		default: // the common case, kept free of the width and mask
			inter, union, ok = overlapFixed64(q.Features, s.v.features)
		}
		if !ok {
			return Comparison{}, false, fmt.Errorf("index: the record of %q: %w", s.v.name, corrupt("features out of order"))
		}
		c.Exact = 1
		if union > 0 {
			c.Exact = float64(inter) / float64(union)
		}
	}
	return c, x.Accept(c), nil
}

// overlapFixed64 is overlapFixed(a, sec, 8, all bits): the query path's
// verification of a full feature section, written out for speed.
func overlapFixed64(a []uint64, sec []byte) (inter, union int, ok bool) {
	n, w := binary.Uvarint(sec)
	b := sec[w:]
	nb := int(n)
	at := func(j int) uint64 { return binary.LittleEndian.Uint64(b[8*j:]) }
	i, j := 0, 0
	for i < len(a) || j < nb {
		switch {
		case j == nb || (i < len(a) && a[i] < at(j)):
			union++
			i = skipRun64(a, i)
		case i == len(a) || at(j) < a[i]:
			union++
			if j, ok = skipFixed64(b, j, nb); !ok {
				return 0, 0, false
			}
		default:
			inter++
			union++
			i = skipRun64(a, i)
			if j, ok = skipFixed64(b, j, nb); !ok {
				return 0, 0, false
			}
		}
	}
	return inter, union, true
}

// skipRun64 returns the index past the run of values equal to a[i].
func skipRun64(a []uint64, i int) int {
	v := a[i]
	for i++; i < len(a) && a[i] == v; i++ {
	}
	return i
}

// skipFixed64 is skipRun64 over n uint64 LE values in b; ok is false when
// the value after the run is smaller than the run's.
func skipFixed64(b []byte, j, n int) (int, bool) {
	v := binary.LittleEndian.Uint64(b[8*j:])
	for j++; j < n; j++ {
		if w := binary.LittleEndian.Uint64(b[8*j:]); w != v {
			return j, w > v
		}
	}
	return j, true
}

// topHalf masks a feature id to the part a compact record keeps.
const topHalf uint64 = 0xFFFFFFFF00000000

// overlapFixed is sketch.Overlap(a masked, b) for b the feature section of
// a version 3 record (a uvarint count, then the sorted ids as uint64 LE,
// or as the uint32 LE top halves of a compact section when width is 4, its
// length checked by parse), read in place; each of a's ids is compared as
// a[i]&mask (topHalf against a compact section or for a compact a). ok is
// false when b's ids are out of order.
func overlapFixed(a []uint64, sec []byte, width int, mask uint64) (inter, union int, ok bool) {
	n, w := binary.Uvarint(sec)
	b := fixedIDs{b: sec[w:], width: width}
	nb := int(n)
	i, j := 0, 0
	for i < len(a) || j < nb {
		switch {
		case j == nb || (i < len(a) && a[i]&mask < b.at(j)):
			union++
			i = skipRun(a, i, mask)
		case i == len(a) || b.at(j) < a[i]&mask:
			union++
			if j, ok = b.skip(j, nb); !ok {
				return 0, 0, false
			}
		default:
			inter++
			union++
			i = skipRun(a, i, mask)
			if j, ok = b.skip(j, nb); !ok {
				return 0, 0, false
			}
		}
	}
	return inter, union, true
}

// skipRun returns the index past the run of values equal to a[i] (under
// mask).
func skipRun(a []uint64, i int, mask uint64) int {
	v := a[i] & mask
	for i++; i < len(a) && a[i]&mask == v; i++ {
	}
	return i
}

// fixedIDs reads the ids of a fixed-width feature section in place.
type fixedIDs struct {
	b     []byte
	width int // 8, or 4 for top halves
}

func (f fixedIDs) at(j int) uint64 {
	if f.width == 4 {
		return uint64(binary.LittleEndian.Uint32(f.b[4*j:])) << 32
	}
	return binary.LittleEndian.Uint64(f.b[8*j:])
}

// skip is skipRun over the n ids; ok is false when the id after the run
// is smaller than the run's.
func (f fixedIDs) skip(j, n int) (int, bool) {
	v := f.at(j)
	for j++; j < n; j++ {
		if w := f.at(j); w != v {
			return j, w > v
		}
	}
	return j, true
}

// exactJaccard is sketch.ExactJaccard of the documents' feature sets, on
// the ids' top halves when either set is Compact. No allocation.
func exactJaccard(a, b *Doc) float64 {
	if !a.Compact && !b.Compact {
		return sketch.ExactJaccard(a.Features, b.Features)
	}
	inter, union := overlapMasked(a.Features, b.Features, topHalf)
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// overlapMasked is sketch.Overlap of the sets a and b with every id
// masked (sorted ids stay sorted under a mask of top bits).
func overlapMasked(a, b []uint64, mask uint64) (inter, union int) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i]&mask < b[j]&mask):
			union++
			i = skipRun(a, i, mask)
		case i == len(a) || b[j]&mask < a[i]&mask:
			union++
			j = skipRun(b, j, mask)
		default:
			inter++
			union++
			i = skipRun(a, i, mask)
			j = skipRun(b, j, mask)
		}
	}
	return inter, union
}
