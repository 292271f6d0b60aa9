package sketch

import "fmt"

// DistinctCounter counts the distinct features of a stream in bounded
// memory: the stream is cut into parts (a batch of documents' features, a
// shard), each part is sketched under one header, and Add merges the part's
// sketch into a running union (Union: slot-wise minima, the k smallest of
// bottom-k, …). A consistent sampler draws the same sample for a feature
// wherever it occurs, so the union of the parts' sketches is the sketch of
// the union of the parts — the whole stream — and Cardinality estimates
// its size (Flajolet–Martin and its relatives; "distinct elements" lecture
// notes). Counting distinct documents is the same with one feature per
// document (its exact fingerprint).
//
// The zero value is not usable; make one with NewDistinctCounter. Not safe
// for concurrent use: give each goroutine its own and Merge them at the
// end (the result does not depend on how the stream was split). Memory:
// one sketch. Add and Merge cost one Union (O(k), allocating the new
// union).
type DistinctCounter struct {
	h Header
	u *Sketch // nil until something is added
}

// NewDistinctCounter returns an empty counter for sketches with header h.
// The algorithm must allow unions and a cardinality estimate: an
// unweighted 64-bit sketch (MinHash, Prefix, LazyBits, LazyBitsBatched,
// OPH, SuperMinHash, BottomK, Proportional); others give ErrUnsupported.
func NewDistinctCounter(h Header) (*DistinctCounter, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if h.Bits != 64 || h.Params&ParamXORPair != 0 || h.Algorithm.IsWeighted() {
		return nil, fmt.Errorf("%w: counting with %v b=%d sketches", ErrUnsupported, h.Algorithm, h.Bits)
	}
	return &DistinctCounter{h: h}, nil
}

// Header returns the header of the sketches the counter takes.
func (d *DistinctCounter) Header() Header { return d.h }

// Add merges the sketch values of one part of the stream (drawn under the
// counter's header) into the union. Empty values (a part without
// features) change nothing. The counter copies what it keeps; vals may be
// reused after the call.
func (d *DistinctCounter) Add(vals []uint64) error {
	if len(vals) == 0 {
		return nil
	}
	s := &Sketch{Header: d.h, Values: vals}
	if d.u == nil {
		if err := s.Validate(); err != nil {
			return err
		}
		d.u = s.Clone()
		return nil
	}
	u, err := Union(d.u, s)
	if err != nil {
		return err
	}
	d.u = u
	return nil
}

// Merge adds everything o has counted; o is unchanged. The counters must
// share a header.
func (d *DistinctCounter) Merge(o *DistinctCounter) error {
	if err := d.h.Check(o.h); err != nil {
		return err
	}
	if o.u == nil {
		return nil
	}
	return d.Add(o.u.Values)
}

// Union returns the sketch of everything added so far, or nil when nothing
// was. The sketch belongs to the counter and stays valid until the next
// Add or Merge.
func (d *DistinctCounter) Union() *Sketch { return d.u }

// Cardinality estimates the number of distinct features added so far
// (Cardinality of the union; 0 when nothing was added).
func (d *DistinctCounter) Cardinality() (float64, error) {
	if d.u == nil {
		return 0, nil
	}
	return Cardinality(d.u)
}
