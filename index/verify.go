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
		inter, union, ok := overlapFixed(q.Features, s.v.features)
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

// overlapFixed is sketch.Overlap(a, b) for b the feature section of a
// version 3 record (a uvarint count, then the sorted ids as uint64 LE,
// its length checked by parse), read in place. ok is false when b's ids
// are out of order.
func overlapFixed(a []uint64, sec []byte) (inter, union int, ok bool) {
	n, w := binary.Uvarint(sec)
	b := sec[w:]
	nb := int(n)
	at := func(j int) uint64 { return binary.LittleEndian.Uint64(b[8*j:]) }
	i, j := 0, 0
	for i < len(a) || j < nb {
		switch {
		case j == nb || (i < len(a) && a[i] < at(j)):
			union++
			i = skipRun(a, i)
		case i == len(a) || at(j) < a[i]:
			union++
			if j, ok = skipFixed(b, j, nb); !ok {
				return 0, 0, false
			}
		default:
			inter++
			union++
			i = skipRun(a, i)
			if j, ok = skipFixed(b, j, nb); !ok {
				return 0, 0, false
			}
		}
	}
	return inter, union, true
}

// skipRun returns the index past the run of values equal to a[i].
func skipRun(a []uint64, i int) int {
	v := a[i]
	for i++; i < len(a) && a[i] == v; i++ {
	}
	return i
}

// skipFixed is skipRun over n uint64 LE values in b; ok is false when the
// value after the run is smaller than the run's.
func skipFixed(b []byte, j, n int) (int, bool) {
	v := binary.LittleEndian.Uint64(b[8*j:])
	for j++; j < n; j++ {
		if w := binary.LittleEndian.Uint64(b[8*j:]); w != v {
			return j, w > v
		}
	}
	return j, true
}
