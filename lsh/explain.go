package lsh

// Band describes one supershingle of two sketches compared by Explain.
type Band struct {
	// Band is the supershingle's number, 0..B-1.
	Band int
	// Lo and Hi are the sample positions [Lo, Hi) hashed into it.
	Lo, Hi int
	// Agreeing is how many of those samples are equal in the two sketches;
	// the supershingles agree (barring hash collisions, or accidental
	// agreements of narrow KeyBits values) only when all R do.
	Agreeing int
	// A and B are the two supershingle values (truncated to KeyBits).
	A, B uint64
	// Match says whether A == B.
	Match bool
}

// SharedKey is a lookup key that two sketches share.
type SharedKey struct {
	// Index is the key's combination number, 0..NumKeys()-1.
	Index int
	// Bands are the M supershingles it combines, in increasing order
	// (Combination(Index)); the slice aliases the scheme's table: do not
	// modify it.
	Bands []uint8
	// Value is the 64-bit key, the same in both sketches.
	Value uint64
}

// Explanation tells why two sketches are, or are not, candidates under a
// scheme.
type Explanation struct {
	// Bands are the B supershingles side by side.
	Bands []Band
	// Agreements is the number of bands that match; the sketches are
	// candidates when it is at least M.
	Agreements int
	// Keys are the lookup keys the two share, in combination order.
	Keys []SharedKey
}

// Candidate reports whether the two sketches share a key, which is what
// makes them candidates in an index.
func (e *Explanation) Candidate() bool { return len(e.Keys) > 0 }

// Explain compares two sketches the way an index does and tells why they
// do or do not collide: their supershingles side by side with the number of
// agreeing samples in each, and the C(b, m) lookup keys they share with the
// bands each key combines. An empty sketch (a document without features)
// has no keys: the explanation is empty. Both sketches need at least R·B
// samples (ErrShortSketch). Cost: two Keys computations; allocates the
// explanation.
func (s *Scheme) Explain(a, b []uint64) (Explanation, error) {
	var e Explanation
	if len(a) == 0 || len(b) == 0 {
		return e, nil
	}
	ssa, err := s.Supershingles(nil, a)
	if err != nil {
		return e, err
	}
	ssb, err := s.Supershingles(nil, b)
	if err != nil {
		return e, err
	}
	r := s.p.R
	e.Bands = make([]Band, len(ssa))
	for i := range ssa {
		bd := Band{Band: i, Lo: i * r, Hi: (i + 1) * r, A: ssa[i], B: ssb[i], Match: ssa[i] == ssb[i]}
		for j := bd.Lo; j < bd.Hi; j++ {
			if a[j] == b[j] {
				bd.Agreeing++
			}
		}
		e.Bands[i] = bd
	}
	e.Agreements = s.Agreements(ssa, ssb)
	ka := s.Combine(nil, ssa)
	kb := s.Combine(nil, ssb)
	for c := range ka {
		if ka[c] == kb[c] {
			e.Keys = append(e.Keys, SharedKey{Index: c, Bands: s.Combination(c), Value: ka[c]})
		}
	}
	return e, nil
}
