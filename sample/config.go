package sample

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
)

// Config says how documents are sketched: how features are extracted from a
// body, which sampler draws the sketch, with how many samples and which
// seed. It is the one description of a sketch configuration: New builds
// every sampler from it (the weighted ones of package weighted included),
// NewSketcher builds the extractor, fingerprinter and sampler of a worker
// from it, and an index records it on creation (package index).
//
// The zero Config is valid: 5-word shingles (feature.Options{}), one
// permutation hashing with 128 samples, seed 0. Fields a sampler does not
// use are ignored by it. A Config is a plain value; copy it freely. It is
// safe for concurrent use as long as nobody writes to it
// (Features.IDFTable is read-only).
type Config struct {
	// Algorithm is the sampler. The default is sketch.OPH. Weighted
	// samplers (sketch.CWS, ICWS, HMT, HMTDep) read the weights Features
	// gives (counts or TF-IDF); the others ignore weights.
	Algorithm sketch.Algorithm
	// K is the number of samples: slots of slot-wise samplers, the size
	// of a BottomK sample, comparable bins of HMT; ignored by
	// Proportional. The default is 128.
	K int
	// Seed selects the random functions; sketches compare only when made
	// with the same seed. The default is 0.
	Seed uint64
	// Features configures feature extraction (NewSketcher). Its
	// ConfigHash is written into every sketch header, so sketches of
	// different feature configurations never compare. The default is
	// feature.Options{}.
	Features feature.Options

	// Modulus is Proportional's modulus m: a feature is kept when its
	// hash is ≡ 0 mod m, so about n/m features are kept. The default is
	// 64.
	Modulus uint64
	// Block is LazyBitsBatched's block size m, 64 or 128. The default is
	// 128.
	Block int
	// BufLen is the per-slot candidate buffer of Prefix and LazyBits (book
	// 3.2 BUFLEN). It affects speed only, never the output; 1 acts as 2.
	// The default is 16.
	BufLen int
	// LogWeights says that weighted samplers read every Feature.Weight as
	// the natural logarithm of the weight (weighted.Options.LogWeights).
	// The default is false.
	LogWeights bool
	// HMT holds the parameters of the HMT and HMTDep samplers (α, τ, t,
	// L; HMT paper section 3.2). Zero fields take package weighted's
	// defaults: α = 0.5, τ = 1, t = 3, L = 4.
	HMT sketch.HMTParams
}

// Defaults of Config fields left zero.
const (
	DefaultK       = 128
	DefaultModulus = 64
	DefaultBlock   = 128
	DefaultBufLen  = 16
)

// EnsureDefaults sets the zero fields of c to their defaults.
func (c *Config) EnsureDefaults() {
	if c.Algorithm == sketch.Invalid {
		c.Algorithm = sketch.OPH
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Modulus == 0 {
		c.Modulus = DefaultModulus
	}
	if c.Block == 0 {
		c.Block = DefaultBlock
	}
	if c.BufLen == 0 {
		c.BufLen = DefaultBufLen
	}
	if c.HMT.Alpha == 0 {
		c.HMT.Alpha = 0.5
	}
	if c.HMT.Tau == 0 {
		c.HMT.Tau = 1
	}
	if c.HMT.Scales == 0 {
		c.HMT.Scales = 3
	}
	if c.HMT.L == 0 {
		c.HMT.L = 4
	}
}

// maxWeightedK is the largest K package weighted accepts.
const maxWeightedK = 1 << 20

// Validate reports every problem of c at once (each wrapping ErrParam, or
// feature.ErrOptions for the feature options), or nil. Zero fields are
// valid: they stand for their defaults.
func (c Config) Validate() error {
	c.EnsureDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrParam}, args...)...))
	}
	a := c.Algorithm
	switch {
	case !a.Valid():
		bad("unknown algorithm %v", a)
	case a.IsWeighted() && (c.K < 1 || c.K > maxWeightedK):
		bad("k = %d not in [1, %d]", c.K, maxWeightedK)
	case !a.IsWeighted() && a != sketch.Proportional && (c.K < 1 || c.K > MaxK):
		bad("k = %d not in [1, %d]", c.K, MaxK)
	}
	if a == sketch.Proportional && c.Modulus > 1<<62 {
		bad("modulus %d > 2^62", c.Modulus)
	}
	if a == sketch.LazyBitsBatched && c.Block != 64 && c.Block != 128 {
		bad("block %d not 64 or 128", c.Block)
	}
	if (a == sketch.Prefix || a == sketch.LazyBits || a == sketch.LazyBitsBatched) && (c.BufLen < 1 || c.BufLen > 1024) {
		bad("buffer length %d not in [1, 1024]", c.BufLen)
	}
	if a == sketch.HMT || a == sketch.HMTDep {
		p := c.HMT
		if !(p.Alpha > 0 && p.Alpha < 1) {
			bad("HMT alpha %v not in (0, 1)", p.Alpha)
		}
		if p.Scales < 2 || p.Scales > 63 {
			bad("HMT scales %d not in [2, 63]", p.Scales)
		}
		if p.Tau < 1 || p.Tau >= p.Scales {
			bad("HMT tau %d not in [1, scales = %d)", p.Tau, p.Scales)
		}
		if !(p.L >= 1 && p.L <= 4095) {
			bad("HMT L %v not in [1, 4095]", p.L)
		}
	}
	if err := c.Features.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// New returns the sampler c describes, with defaults for its zero fields:
// an unweighted sampler of this package or, for sketch.CWS, ICWS, HMT and
// HMTDep, one of package weighted. The header of its sketches records
// c.Features.ConfigHash(). It returns the errors of c.Validate, which wrap
// ErrParam.
//
// Samplers of this package use scratch space (see Sampler): make one per
// goroutine, or Clone it (Cloner). Weighted samplers are immutable and safe
// for concurrent use.
func New(c Config) (Sampler, error) {
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Algorithm.IsWeighted() {
		return newWeighted(c)
	}
	h := sketch.Header{Algorithm: c.Algorithm, Version: Version(c.Algorithm), Seed: c.Seed, K: uint32(c.K), Bits: 64, Features: c.Features.ConfigHash()}
	switch c.Algorithm {
	case sketch.MinHash:
		return newMinHash(h), nil
	case sketch.Prefix:
		return newPrefix(h, c.BufLen), nil
	case sketch.LazyBits:
		return newLazy(h, c.BufLen), nil
	case sketch.LazyBitsBatched:
		h.Params = uint64(c.Block)
		return newBatched(h, c.BufLen), nil
	case sketch.BottomK:
		return newBottomK(h), nil
	case sketch.Proportional:
		h.K, h.Params = 0, c.Modulus
		return newProportional(h), nil
	case sketch.OPH:
		return newOPH(h), nil
	case sketch.SuperMinHash:
		return newSuperMinHash(h), nil
	}
	return nil, fmt.Errorf("%w: algorithm %v", ErrParam, c.Algorithm)
}

// newWeighted builds a sampler of package weighted.
func newWeighted(c Config) (Sampler, error) {
	o := weighted.Options{K: c.K, Seed: c.Seed, LogWeights: c.LogWeights, Features: c.Features.ConfigHash(),
		Alpha: c.HMT.Alpha, Tau: c.HMT.Tau, Scales: c.HMT.Scales, L: c.HMT.L}
	var s Sampler
	var err error
	switch c.Algorithm {
	case sketch.CWS:
		s, err = weighted.NewCWS(o)
	case sketch.CWSOblivious:
		o.Beta = weighted.BetaOblivious
		s, err = weighted.NewCWS(o)
	case sketch.CWSUnary:
		o.Beta = weighted.BetaUnary
		s, err = weighted.NewCWS(o)
	case sketch.ICWS:
		s, err = weighted.NewICWS(o)
	case sketch.HMT, sketch.HMTDep:
		o.Independent = c.Algorithm == sketch.HMT
		s, err = weighted.NewHMT(o)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParam, err)
	}
	return s, nil
}

// Size returns the exact size of the feature set fs as a sampler of c
// sees it, the value sketch.Sketch.Size holds: the number of features for
// unweighted samplers (fs as an extractor gives it, each id once), and the
// total weight weighted.TotalWeight (present weights only) for weighted
// ones. Cost O(len(fs)) for weighted samplers, O(1) otherwise; no
// allocation.
func (c Config) Size(fs []feature.Feature) float64 {
	if c.Algorithm.IsWeighted() {
		return weighted.TotalWeight(fs, c.LogWeights)
	}
	return float64(len(fs))
}
