package sketch

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Errors about two sketches wrap
// ErrMismatch; test with errors.Is.
var (
	// ErrMismatch means two sketches were made differently and cannot be
	// compared; the wrapping error names the differing header field.
	ErrMismatch = errors.New("sketch: headers differ")
	// ErrCorrupt means an encoding failed its checksum or structure checks.
	ErrCorrupt = errors.New("sketch: corrupt encoding")
	// ErrTruncated means an encoding ended early.
	ErrTruncated = errors.New("sketch: truncated encoding")
	// ErrUnsupported means the operation is not defined for the sketch's
	// algorithm or compression (e.g. the union of densified b-bit sketches).
	ErrUnsupported = errors.New("sketch: unsupported for this sketch")
	// ErrInvalid means a sketch violates its own header (wrong number of
	// values, bad b, unsorted set sketch).
	ErrInvalid = errors.New("sketch: invalid sketch")
)

// Algorithm names the sampler that produced a sketch. The numbers are stable:
// they are written into encodings and must never be reused or renumbered.
type Algorithm uint8

// The algorithms. Values 1–8 are produced by package sample, 9–12 by package
// weighted. Zero is invalid.
const (
	Invalid         Algorithm = 0
	MinHash         Algorithm = 1  // k independent hash functions (book 3.2, first loop)
	Prefix          Algorithm = 2  // AltaVista 8-bit prefixes + ResolveBuf (book 3.2)
	LazyBits        Algorithm = 3  // lazy runs of leading zeros (book 4.1)
	LazyBitsBatched Algorithm = 4  // batched biased leading bit, blocks of m slots (book 4.2)
	BottomK         Algorithm = 5  // k smallest of one hash, without replacement (book 3)
	Proportional    Algorithm = 6  // hashes ≡ 0 mod m (book 3)
	OPH             Algorithm = 7  // one permutation hashing + optimal densification
	SuperMinHash    Algorithm = 8  // Ertl 2017
	CWS             Algorithm = 9  // consistent weighted sampling (Manasse–McSherry–Talwar)
	ICWS            Algorithm = 10 // improved CWS (Ioffe)
	HMT             Algorithm = 11 // Haeupler–Manasse–Talwar rounding + OPH
	HMTDep          Algorithm = 12 // HMT with dependent rounding
	CWSOblivious    Algorithm = 13 // CWS with MMT 3.5's oblivious 8-bit β
	CWSUnary        Algorithm = 14 // CWS with MMT 3.5's adaptive unary β
	maxAlgorithm              = CWSUnary
)

var algNames = [...]string{
	Invalid: "invalid", MinHash: "minhash", Prefix: "prefix", LazyBits: "lazybits",
	LazyBitsBatched: "lazybits-batched", BottomK: "bottomk", Proportional: "proportional",
	OPH: "oph", SuperMinHash: "superminhash", CWS: "cws", ICWS: "icws", HMT: "hmt",
	HMTDep: "hmt-dep", CWSOblivious: "cws-oblivious", CWSUnary: "cws-unary",
}

// String returns the algorithm's lower-case name ("minhash", "oph", …), the
// same name ParseAlgorithm accepts.
func (a Algorithm) String() string {
	if a <= maxAlgorithm {
		return algNames[a]
	}
	return fmt.Sprintf("algorithm(%d)", uint8(a))
}

// ParseAlgorithm returns the algorithm named s (as printed by String).
func ParseAlgorithm(s string) (Algorithm, error) {
	for i, n := range algNames {
		if i != 0 && n == s {
			return Algorithm(i), nil
		}
	}
	return Invalid, fmt.Errorf("sketch: unknown algorithm %q", s)
}

// Valid reports whether a is a known algorithm.
func (a Algorithm) Valid() bool { return a != Invalid && a <= maxAlgorithm }

// IsSet reports whether sketches of a are sorted hash sets (BottomK,
// Proportional) rather than k slot-wise samples.
func (a Algorithm) IsSet() bool { return a == BottomK || a == Proportional }

// IsWeighted reports whether a is a weighted sampler (package weighted).
func (a Algorithm) IsWeighted() bool { return a >= CWS && a <= CWSUnary }

// SlotWise reports whether sketches of a are k slot-wise samples compared
// position by position (and so can be b-bit compressed): every known
// algorithm but the set sketches (BottomK, Proportional) and HMT, HMTDep,
// whose values are blocks of bins aligned by scale.
func (a Algorithm) SlotWise() bool {
	return a.Valid() && !a.IsSet() && a != HMT && a != HMTDep
}

func (a Algorithm) hmt() bool { return a == HMT || a == HMTDep }

// Params flags. The low 62 bits of Header.Params are algorithm-specific:
//
//	Proportional:    the modulus m (a hash is kept when hash % m == 0)
//	LazyBitsBatched: the block size m (64 or 128)
//	others:          0 unless the producing package documents otherwise
//
// The top bit marks an XOR-pair compressed sketch (CompressPairs): value i is
// the b-bit remix of v_2i XOR v_2i+1, so slots match with probability J².
//
// HMT and HMTDep sketches pack their HMTParams (α, τ, t, L) into Params; see
// HMTParams.Pack and Header.HMT.
const (
	ParamXORPair uint64 = 1 << 63
	paramMask    uint64 = 1<<62 - 1
)

// Header says how a sketch was made. Two sketches are comparable only when
// their headers are equal (see Check). The zero Header is invalid. A Header
// is a small value; copy it freely.
type Header struct {
	Algorithm Algorithm
	// Version is the algorithm's version: it changes whenever the sampler's
	// output for the same input changes, so old sketches are never compared
	// with new ones.
	Version uint8
	// Seed selects the random functions.
	Seed uint64
	// K is the number of samples (slots) for slot-wise algorithms and the
	// maximum set size for BottomK; 0 for Proportional.
	K uint32
	// Bits is b for b-bit sketches (1, 2, 4, 8, 16, 32) or 64 for full values.
	Bits uint8
	// Features is a hash of the feature configuration (shingle size,
	// normalization…), set by whoever extracts features; 0 if unspecified.
	Features uint64
	// Params is algorithm-specific, see ParamXORPair.
	Params uint64
}

// Check returns nil when sketches with headers h and o are comparable, and
// otherwise an error wrapping ErrMismatch that names the first differing
// field.
func (h Header) Check(o Header) error {
	switch {
	case h.Algorithm != o.Algorithm:
		return fmt.Errorf("%w: algorithm %v vs %v", ErrMismatch, h.Algorithm, o.Algorithm)
	case h.Version != o.Version:
		return fmt.Errorf("%w: version %d vs %d", ErrMismatch, h.Version, o.Version)
	case h.Seed != o.Seed:
		return fmt.Errorf("%w: seed %#x vs %#x", ErrMismatch, h.Seed, o.Seed)
	case h.K != o.K:
		return fmt.Errorf("%w: k %d vs %d", ErrMismatch, h.K, o.K)
	case h.Bits != o.Bits:
		return fmt.Errorf("%w: bits %d vs %d", ErrMismatch, h.Bits, o.Bits)
	case h.Features != o.Features:
		return fmt.Errorf("%w: features %#x vs %#x", ErrMismatch, h.Features, o.Features)
	case h.Params != o.Params:
		return fmt.Errorf("%w: params %#x vs %#x", ErrMismatch, h.Params, o.Params)
	}
	return nil
}

// Validate reports whether h is well formed: a known algorithm and a valid
// b; for HMT and HMTDep also full 64-bit values, valid packed HMTParams and
// K = 2 + t·B (see Header.HMT).
func (h Header) Validate() error {
	if !h.Algorithm.Valid() {
		return fmt.Errorf("%w: unknown algorithm %d", ErrInvalid, h.Algorithm)
	}
	if h.Algorithm == HMT || h.Algorithm == HMTDep {
		_, _, err := h.HMT()
		return err
	}
	if !validBits(h.Bits) {
		return fmt.Errorf("%w: bits %d not in {1,2,4,8,16,32,64}", ErrInvalid, h.Bits)
	}
	if h.Params&ParamXORPair != 0 && h.Bits == 64 {
		return fmt.Errorf("%w: XOR-pair sketch must be b-bit", ErrInvalid)
	}
	return nil
}

func validBits(b uint8) bool {
	switch b {
	case 1, 2, 4, 8, 16, 32, 64:
		return true
	}
	return false
}

func (h Header) String() string {
	return fmt.Sprintf("%v/v%d seed=%#x k=%d b=%d features=%#x params=%#x",
		h.Algorithm, h.Version, h.Seed, h.K, h.Bits, h.Features, h.Params)
}
