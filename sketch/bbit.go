package sketch

import (
	"fmt"

	"github.com/neardup/neardup/internal/rng"
)

// remixKey separates the b-bit remix from every sampler's hashing.
const remixKey = 0x62626974 // "bbit"

// remix maps a full sample value of slot i to a fresh pseudo-random word, so
// that the low b bits of distinct samples agree with probability 2^-b and
// different slots use different mappings (book 2.4).
func remix(seed uint64, i int, v uint64) uint64 {
	return rng.Hash2(seed^remixKey, v, uint64(i))
}

// Compress returns the b-bit version of a slot-wise full-value sketch s:
// value i becomes the low b bits of a per-slot remix of s.Values[i], for b in
// {1, 2, 4, 8, 16, 32}. Two compressed slots agree with probability
// Q = J + (1−J)/2^b, which Jaccard inverts (book 2.4); use about twice as
// many samples at b = 1 for the accuracy of full values. Set sketches, HMT
// sketches (see Algorithm.SlotWise; CompressHMT compresses those) and
// already-compressed sketches give
// ErrUnsupported; CWS and ICWS sketches compress like any slot-wise one. Cost: one hash per value;
// the result is newly allocated.
func Compress(s *Sketch, b int) (*Sketch, error) {
	if err := checkCompress(s, b); err != nil {
		return nil, err
	}
	out := &Sketch{Header: s.Header, Size: s.Size, Values: make([]uint64, len(s.Values))}
	out.Header.Bits = uint8(b)
	mask := uint64(1)<<b - 1
	for i, v := range s.Values {
		out.Values[i] = remix(s.Header.Seed, i, v) & mask
	}
	return out, nil
}

// CompressPairs is an XOR-pair variant of Compress: value i is the low b
// bits of the remix of Values[2i] XOR Values[2i+1], so a slot
// matches (beyond chance) only when both samples match, with probability J²
// for independent slots. Jaccard on such sketches corrects for chance,
// estimates J² and reports its square root; JaccardSquared reports J² itself.
// k must be even. The book has b-bit samples (2.4, Compress) but no XOR of
// pairs; this variant is this package's own.
func CompressPairs(s *Sketch, b int) (*Sketch, error) {
	if err := checkCompress(s, b); err != nil {
		return nil, err
	}
	if len(s.Values)%2 != 0 || s.Header.K%2 != 0 {
		return nil, fmt.Errorf("%w: XOR pairs need even k, have %d", ErrUnsupported, s.Header.K)
	}
	out := &Sketch{Header: s.Header, Size: s.Size, Values: make([]uint64, len(s.Values)/2)}
	out.Header.Bits = uint8(b)
	out.Header.Params |= ParamXORPair
	mask := uint64(1)<<b - 1
	for i := range out.Values {
		out.Values[i] = remix(s.Header.Seed, i, s.Values[2*i]^s.Values[2*i+1]) & mask
	}
	return out, nil
}

// JaccardSquared estimates J² from two XOR-pair sketches (CompressPairs)
// with the corrected estimator (2^b Q − 1)/(2^b − 1), unclamped below so it
// stays unbiased; StdErr = sqrt(Q(1−Q)/(k/2))·2^b/(2^b−1).
func JaccardSquared(a, b *Sketch) (Estimate, error) {
	if err := a.Header.Check(b.Header); err != nil {
		return Estimate{}, err
	}
	if a.Header.Params&ParamXORPair == 0 {
		return Estimate{}, fmt.Errorf("%w: not an XOR-pair sketch", ErrUnsupported)
	}
	if len(a.Values) != len(b.Values) || len(a.Values) == 0 {
		return Estimate{}, fmt.Errorf("%w: value counts %d, %d", ErrInvalid, len(a.Values), len(b.Values))
	}
	j, err := BBitUnclamped(a, b)
	if err != nil {
		return Estimate{}, err
	}
	eq := 0
	for i, v := range a.Values {
		if v == b.Values[i] {
			eq++
		}
	}
	return Estimate{J: j, StdErr: fromMatches(eq, len(a.Values), a.Header.Bits).StdErr}, nil
}

func checkCompress(s *Sketch, b int) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if !s.Header.Algorithm.SlotWise() {
		// Set sketches are sorted hashes; HMT sketches carry their scale and
		// weight in Values[0:2], which b bits cannot hold.
		return fmt.Errorf("%w: b-bit compression of %v sketches", ErrUnsupported, s.Header.Algorithm)
	}
	if s.Header.Bits != 64 {
		return fmt.Errorf("%w: already %d-bit", ErrUnsupported, s.Header.Bits)
	}
	if b == 64 || !validBits(uint8(b)) || b < 1 {
		return fmt.Errorf("%w: b = %d not in {1,2,4,8,16,32}", ErrUnsupported, b)
	}
	return nil
}
