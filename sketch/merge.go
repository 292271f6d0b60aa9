package sketch

import (
	"fmt"
	"math/bits"

	"github.com/neardup/neardup/internal/rng"
)

// OPHEmpty marks an empty bin of an OPH sketch before densification.
const OPHEmpty = ^uint64(0)

// densifyKey separates the densification probes from the OPH feature hash.
const densifyKey = 0x64656e73 // "dens"

// OPHBin returns the bin of hash x among k bins: the high word of x·k, so
// bins are contiguous ranges of hash values and the order within a bin is
// the order of x.
func OPHBin(x uint64, k int) int {
	hi, _ := bits.Mul64(x, uint64(k))
	return int(hi)
}

// Densify fills the empty bins (value OPHEmpty) of a one-permutation-hashing
// sketch in place, by optimal densification (Shrivastava 2017): empty bin j
// probes bins t_1, t_2, … drawn from a hash of (seed, j, attempt) and copies
// the first bin that is non-empty in its own right. The probe sequence does
// not depend on the data, so every slot is the minimum of a fixed total
// order on features — (rank of the feature's bin in j's sequence, hash) — and
// P(a_j = b_j) = J exactly, for every slot. If every bin is empty the values
// are left unchanged. Cost: expected O(k/c) probes per empty bin with c
// non-empty bins.
func Densify(seed uint64, vals []uint64) {
	k := len(vals)
	key := rng.Key(seed, densifyKey)
	for j, x := range vals {
		if x != OPHEmpty {
			continue
		}
		for a := uint64(1); ; a++ {
			var t int
			if a <= 64*uint64(k)+64 {
				t = OPHBin(rng.Hash2(key, uint64(j), a), k)
			} else {
				// Past the cap (all but impossible unless every bin is
				// empty), probe cyclically: still data-independent.
				t = int((uint64(j) + a) % uint64(k))
				if a > 64*uint64(k)+64+uint64(k) {
					break // every bin empty
				}
			}
			if y := vals[t]; y != OPHEmpty && OPHBin(y, k) == t {
				vals[j] = y
				break
			}
		}
	}
}

// Union returns a sketch of A ∪ B from sketches of A and B, when the
// algorithm allows it:
//
//   - MinHash, Prefix, LazyBits, LazyBitsBatched, SuperMinHash: slot-wise
//     minimum (each slot is the minimum of a per-feature value);
//   - OPH: slot-wise minimum of the bins' own minima, then densified again;
//   - BottomK: the k smallest of the merged sets; Proportional: the merged
//     set.
//
// b-bit, XOR-pair and weighted sketches give ErrUnsupported; mismatched
// headers ErrMismatch. The result's Size is its Cardinality estimate (0 when
// unavailable). The result is newly allocated.
func Union(a, b *Sketch) (*Sketch, error) {
	if err := a.Header.Check(b.Header); err != nil {
		return nil, err
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	h := a.Header
	if h.Bits != 64 || h.Params&ParamXORPair != 0 || h.Algorithm.IsWeighted() {
		return nil, fmt.Errorf("%w: union of %v b=%d sketches", ErrUnsupported, h.Algorithm, h.Bits)
	}
	out := &Sketch{Header: h}
	switch {
	case len(a.Values) == 0:
		out.Values = append([]uint64(nil), b.Values...)
	case len(b.Values) == 0:
		out.Values = append([]uint64(nil), a.Values...)
	case h.Algorithm.IsSet():
		limit := len(a.Values) + len(b.Values)
		if h.Algorithm == BottomK {
			limit = int(h.K)
		}
		out.Values = mergeSorted(make([]uint64, 0, min(limit, len(a.Values)+len(b.Values))), a.Values, b.Values, limit)
	case h.Algorithm == OPH:
		k := len(a.Values)
		out.Values = make([]uint64, k)
		for j := range out.Values {
			out.Values[j] = min(own(a.Values[j], j, k), own(b.Values[j], j, k))
		}
		Densify(h.Seed, out.Values)
	default:
		out.Values = make([]uint64, len(a.Values))
		for j := range out.Values {
			out.Values[j] = min(a.Values[j], b.Values[j])
		}
	}
	if c, err := Cardinality(out); err == nil {
		out.Size = c
	}
	return out, nil
}

// own returns x if it is bin j's own minimum, else OPHEmpty.
func own(x uint64, j, k int) uint64 {
	if x != OPHEmpty && OPHBin(x, k) == j {
		return x
	}
	return OPHEmpty
}

func mergeSorted(dst, a, b []uint64, limit int) []uint64 {
	i, j := 0, 0
	for len(dst) < limit && (i < len(a) || j < len(b)) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			dst = append(dst, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			dst = append(dst, b[j])
			j++
		default:
			dst = append(dst, a[i])
			i++
			j++
		}
	}
	return dst
}
