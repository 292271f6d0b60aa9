package index

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// Config is what an index is built with: how documents are sketched, how
// sketches are cut into lookup keys, and when a candidate is a match. Open
// records it in the store when it creates an index, and adopts the
// recorded one when it opens an existing index (see Open), so an index is
// reopened without repeating any of it.
//
// The zero Config is valid: OPH sketches of 128 samples over 5-word
// shingles (sample.Config's defaults), the LSH scheme ChooseLSH picks for
// the threshold, threshold 0.8, slack DefaultSlack.
type Config struct {
	// Sketch is the sketch configuration (sampler, k, seed, features). Its
	// sampler must give slot-wise samples (sketch.Algorithm.SlotWise:
	// supershingles need them): OPH, MinHash, SuperMinHash, Prefix,
	// LazyBits, LazyBitsBatched, or the weighted CWS and ICWS.
	Sketch sample.Config
	// LSH are the supershingle parameters; LSH.K() samples are taken from
	// the front of each sketch, so Sketch.K must be at least LSH.K(). The
	// default (the zero Params) is ChooseLSH(Threshold, Sketch.K,
	// Sketch.Seed).
	LSH lsh.Params
	// Threshold is the similarity at or above which a candidate is a match.
	// The default is 0.8. Unlike the fields above it does not change the
	// keys: a value given to Open overrides the recorded one for that
	// Index without contradicting it.
	Threshold float64
	// Slack widens verification by sketch estimate; see Accept. The
	// default is DefaultSlack; a negative value means none. Like
	// Threshold, a value given to Open overrides the recorded one.
	Slack float64
	// BloomFP is the false-positive rate of the Bloom filter in front of
	// the exact fingerprints (see Identical), used when the filter is
	// made; it is not recorded. The default is 1e-6: a false positive
	// costs one store lookup, never a wrong answer.
	BloomFP float64
	// Identity is the secret key of the identity fingerprint (package
	// identity: 128 keyed bits and the length), which decides
	// that two bodies are identical. The default, the zero Key, has a
	// new index draw a key at random (identity.NewKey) and record it; a
	// reopened index adopts the recorded key, and a non-zero key that
	// contradicts it is a *ConfigError. Give one only to make several
	// indexes (the shards of one dedup run) compare fingerprints; keep it
	// as secret as the store.
	Identity identity.Key
}

// DefaultThreshold is the default Config.Threshold.
const DefaultThreshold = 0.8

// EnsureDefaults sets the zero fields of c to their defaults. The LSH
// default depends on Threshold and Sketch.K: when ChooseLSH cannot choose
// (a k too small for the threshold), LSH stays zero and Validate says why.
func (c *Config) EnsureDefaults() {
	c.Sketch.EnsureDefaults()
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.Slack == 0 {
		c.Slack = DefaultSlack
	}
	if c.BloomFP == 0 {
		c.BloomFP = 1e-6
	}
	if c.LSH == (lsh.Params{}) {
		if p, err := ChooseLSH(c.Threshold, c.Sketch.K, c.Sketch.Seed); err == nil {
			c.LSH = p
		}
	}
}

// Validate reports every problem of c at once, or nil. Zero fields are
// valid: they stand for their defaults.
func (c Config) Validate() error {
	c.EnsureDefaults()
	var errs []error
	if err := c.Sketch.Validate(); err != nil {
		errs = append(errs, err)
	}
	if a := c.Sketch.Algorithm; a.Valid() && !a.SlotWise() {
		errs = append(errs, fmt.Errorf("index: sampler %v does not give slot-wise samples, which supershingles need (oph, minhash, superminhash, prefix, lazybits, lazybits-batched; weighted: cws, icws)", a))
	}
	if !(c.Threshold > 0 && c.Threshold <= 1) {
		errs = append(errs, fmt.Errorf("index: threshold %v outside (0, 1]", c.Threshold))
	}
	if !(c.BloomFP > 0 && c.BloomFP < 1) {
		errs = append(errs, fmt.Errorf("index: Bloom filter false-positive rate %v outside (0, 1)", c.BloomFP))
	}
	switch {
	case c.LSH == (lsh.Params{}):
		_, err := ChooseLSH(c.Threshold, c.Sketch.K, c.Sketch.Seed)
		errs = append(errs, err)
	case c.LSH.Validate() != nil:
		errs = append(errs, fmt.Errorf("index: %w", c.LSH.Validate()))
	case c.LSH.K() > c.Sketch.K:
		errs = append(errs, fmt.Errorf("index: the LSH scheme %v needs %d samples, sketches have k = %d", c.LSH, c.LSH.K(), c.Sketch.K))
	}
	return errors.Join(errs...)
}

// ChooseLSH returns the supershingle parameters neardup uses by default for
// a threshold and k samples: lsh.Choose with false negatives weighted 49
// times more than false positives (a missed duplicate cannot be recovered;
// an extra candidate only costs a verification), which puts P(threshold)
// near 0.98 at every threshold. The keys are seeded with seed.
func ChooseLSH(threshold float64, k int, seed uint64) (lsh.Params, error) {
	c, err := lsh.Choose(lsh.ChooseOptions{Threshold: math.Min(threshold, 0.99), FPWeight: 0.02, FNWeight: 0.98, MaxSamples: k, Seed: seed})
	if err != nil {
		return lsh.Params{}, fmt.Errorf("index: %w", err)
	}
	return c.Params, nil
}

// ConfigError reports that the configuration given to Open contradicts the
// one the index in the store was built with. Field names the setting in
// the vocabulary of Config ("sampler", "k", "seed", "features.shingle",
// "lsh.r", ...; see Open); Stored and Given are the two values as text. It
// matches ErrConfig under errors.Is.
type ConfigError struct {
	Field, Stored, Given string
}

// Error returns the one-line "k: the index was built with 64, not 128".
func (e *ConfigError) Error() string {
	return e.Field + ": the index was built with " + e.Stored + ", not " + e.Given
}

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// merger adopts stored values for the zero fields of a given config and
// records the first contradiction.
type merger struct{ err error }

func (m *merger) fail(field, stored, given string) {
	if m.err == nil {
		m.err = &ConfigError{Field: field, Stored: stored, Given: given}
	}
}

func mergeInt[T ~int | ~uint64 | ~uint8](m *merger, field string, stored T, given *T) {
	switch {
	case *given == 0:
		*given = stored
	case *given != stored:
		m.fail(field, fmt.Sprint(stored), fmt.Sprint(*given))
	}
}

func mergeFloat(m *merger, field string, stored float64, given *float64) {
	switch {
	case *given == 0:
		*given = stored
	case *given != stored:
		m.fail(field, strconv.FormatFloat(stored, 'g', -1, 64), strconv.FormatFloat(*given, 'g', -1, 64))
	}
}

func mergeBool(m *merger, field string, stored bool, given *bool) {
	switch {
	case !*given:
		*given = stored
	case !stored:
		m.fail(field, "false", "true")
	}
}

func mergeName(m *merger, field string, names []string, stored uint8, given *uint8) {
	switch {
	case *given == 0:
		*given = stored
	case *given != stored:
		m.fail(field, enumName(names, stored), enumName(names, *given))
	}
}

// mergeSketch adopts stored sketch settings into g and reports the first
// contradiction. Features are merged separately (mergeFeatures).
func mergeSketch(m *merger, s sample.Config, g *sample.Config) {
	if g.Algorithm == sketch.Invalid {
		g.Algorithm = s.Algorithm
	} else if g.Algorithm != s.Algorithm {
		m.fail("sampler", s.Algorithm.String(), g.Algorithm.String())
	}
	mergeInt(m, "k", s.K, &g.K)
	mergeInt(m, "seed", s.Seed, &g.Seed)
	mergeInt(m, "modulus", s.Modulus, &g.Modulus)
	mergeInt(m, "block", s.Block, &g.Block)
	mergeInt(m, "buflen", s.BufLen, &g.BufLen)
	mergeBool(m, "log-weights", s.LogWeights, &g.LogWeights)
	mergeFloat(m, "hmt.alpha", s.HMT.Alpha, &g.HMT.Alpha)
	mergeInt(m, "hmt.tau", s.HMT.Tau, &g.HMT.Tau)
	mergeInt(m, "hmt.scales", s.HMT.Scales, &g.HMT.Scales)
	mergeFloat(m, "hmt.l", s.HMT.L, &g.HMT.L)
}

// mergeLSH adopts stored LSH parameters field by field.
func mergeLSH(m *merger, s lsh.Params, g *lsh.Params) {
	if g.KeyBits == 64 {
		g.KeyBits = 0
	}
	if g.SampleBits == 64 {
		g.SampleBits = 0
	}
	if s.KeyBits == 64 {
		s.KeyBits = 0
	}
	if s.SampleBits == 64 {
		s.SampleBits = 0
	}
	mergeInt(m, "lsh.r", s.R, &g.R)
	mergeInt(m, "lsh.b", s.B, &g.B)
	mergeInt(m, "lsh.m", s.M, &g.M)
	mergeInt(m, "lsh.keybits", s.KeyBits, &g.KeyBits)
	mergeInt(m, "lsh.samplebits", s.SampleBits, &g.SampleBits)
	mergeInt(m, "lsh.seed", s.Seed, &g.Seed)
}
