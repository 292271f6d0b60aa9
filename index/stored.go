package index

import (
	"encoding/json"
	"fmt"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// configMeta is the metadata name of the recorded configuration.
//
// Version 3 (written now) adds the feature tokenizer's name
// (storedFeatures.Tokenizer). Version 2 is the JSON of storedConfig: the whole sketch
// configuration with the feature options by name, the sketch header it
// gives, the LSH parameters, threshold and slack. Version 1 (written
// before; no "version" field) held only {"header": sketch.Header, "lsh":
// lsh.Params}: Open still opens such an index, taking the feature options
// from its caller and checking them against the header's hash, and then
// records version 2.
const configMeta = "neardup.index.config"

const storedVersion = 3

type storedConfig struct {
	Version   int           `json:"version"`
	Sketch    storedSketch  `json:"sketch"`
	Header    sketch.Header `json:"header"`
	LSH       lsh.Params    `json:"lsh"`
	Threshold float64       `json:"threshold"`
	Slack     float64       `json:"slack"`
}

type storedSketch struct {
	Sampler    string           `json:"sampler"`
	K          int              `json:"k"`
	Seed       uint64           `json:"seed"`
	Modulus    uint64           `json:"modulus"`
	Block      int              `json:"block"`
	BufLen     int              `json:"buflen"`
	LogWeights bool             `json:"log_weights"`
	HMT        sketch.HMTParams `json:"hmt"`
	Features   storedFeatures   `json:"features"`
}

type storedFeatures struct {
	Format       string  `json:"format"`
	Case         string  `json:"case"`
	Norm         string  `json:"norm"`
	Digits       string  `json:"digits"`
	Punct        string  `json:"punct"`
	Unit         string  `json:"unit"`
	Shingle      int     `json:"shingle"`
	Wrap         bool    `json:"wrap"`
	Seed         uint64  `json:"seed"`
	Weighting    string  `json:"weighting"`
	SublinearTF  bool    `json:"sublinear_tf"`
	RawIDF       bool    `json:"raw_idf"`
	TitleBoost   float64 `json:"title_boost"`
	HeadingBoost float64 `json:"heading_boost"`
	// IDFTable is the checksum of the TF-IDF table (hex), "" for none.
	IDFTable string `json:"idf_table,omitempty"`
	// Tokenizer is the tokenizer's name (feature.Tokenizer.String); ""
	// (versions 1 and 2, written before tokenizers were named) means
	// "words-v1".
	Tokenizer string `json:"tokenizer,omitempty"`
}

// The names of package feature's enumerations, as its Parse functions
// accept them (a test checks they agree). Stored by name, so that the
// record reads the same to a person and survives a renumbering.
var (
	formatNames = []string{"auto", "text", "html"}
	caseNames   = []string{"lower", "fold", "keep"}
	normNames   = []string{"none", "nfkc"}
	digitNames  = []string{"keep", "drop", "fold"}
	punctNames  = []string{"drop", "keep"}
	unitNames   = []string{"shingle", "word", "char"}
	weightNames = []string{"set", "count", "tfidf"}
	tokNames    = []string{"default", "words-v1", "unicode-v1"}
)

func enumName(names []string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("?%d", v)
}

func enumValue(names []string, field, s string) (uint8, error) {
	for i, n := range names {
		if n == s {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("%w: stored configuration: unknown %s %q", ErrCorrupt, field, s)
}

// featureDefaults fills the zero fields of o that package feature fills
// (shingle size, boosts), so that recorded and given options compare.
func featureDefaults(o feature.Options) feature.Options {
	if o.K == 0 {
		o.K = feature.DefaultK
	}
	if o.Unit == feature.UnitWord {
		o.K = 1
	}
	if o.TitleBoost == 0 {
		o.TitleBoost = feature.DefaultTitleBoost
	}
	if o.HeadingBoost == 0 {
		o.HeadingBoost = feature.DefaultHeadingBoost
	}
	if o.Tokenizer == feature.TokenizerDefault {
		o.Tokenizer = feature.DefaultTokenizer
	}
	if o.Unit == feature.UnitChar {
		o.Tokenizer = feature.TokenizerWords
	}
	return o
}

func idfSum(o feature.Options) uint64 {
	if o.Weighting == feature.WeightTFIDF && o.IDFTable != nil {
		return o.IDFTable.Checksum()
	}
	return 0
}

// encodeStored returns the version 2 record of c (defaults filled in) and
// the header of its sketches.
func encodeStored(c Config, h sketch.Header) ([]byte, error) {
	f := featureDefaults(c.Sketch.Features)
	sf := storedFeatures{
		Format: enumName(formatNames, uint8(f.Format)), Case: enumName(caseNames, uint8(f.Case)),
		Norm: enumName(normNames, uint8(f.Norm)), Digits: enumName(digitNames, uint8(f.Digits)),
		Punct: enumName(punctNames, uint8(f.Punct)), Unit: enumName(unitNames, uint8(f.Unit)),
		Shingle: f.K, Wrap: f.Wrap, Seed: f.Seed, Weighting: enumName(weightNames, uint8(f.Weighting)),
		SublinearTF: f.SublinearTF, RawIDF: f.RawIDF, TitleBoost: f.TitleBoost, HeadingBoost: f.HeadingBoost,
		Tokenizer: enumName(tokNames, uint8(f.Tokenizer)),
	}
	if s := idfSum(f); s != 0 {
		sf.IDFTable = fmt.Sprintf("%016x", s)
	}
	s := c.Sketch
	return json.Marshal(storedConfig{
		Version: storedVersion,
		Sketch: storedSketch{Sampler: s.Algorithm.String(), K: s.K, Seed: s.Seed, Modulus: s.Modulus, Block: s.Block,
			BufLen: s.BufLen, LogWeights: s.LogWeights, HMT: s.HMT, Features: sf},
		Header: h, LSH: c.LSH, Threshold: c.Threshold, Slack: c.Slack,
	})
}

// recorded is a decoded configuration record.
type recorded struct {
	version int
	cfg     Config // version 1: the sketch settings the header gives, no features
	header  sketch.Header
	idf     uint64 // checksum of the TF-IDF table, 0 for none
}

func decodeStored(b []byte) (*recorded, error) {
	var sc storedConfig
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, fmt.Errorf("%w: stored configuration: %v", ErrCorrupt, err)
	}
	r := &recorded{version: sc.Version, header: sc.Header}
	switch sc.Version {
	case 0: // version 1
		r.version = 1
		h := sc.Header
		r.cfg = Config{Sketch: sample.Config{Algorithm: h.Algorithm, K: int(h.K), Seed: h.Seed}, LSH: sc.LSH}
		switch h.Algorithm {
		case sketch.LazyBitsBatched:
			r.cfg.Sketch.Block = int(h.Params)
		case sketch.Proportional:
			r.cfg.Sketch.Modulus = h.Params
		}
		r.cfg.EnsureDefaults()
		r.cfg.LSH = sc.LSH
		return r, nil
	case 2, storedVersion: // version 2 has no tokenizer: words-v1
	default:
		return nil, fmt.Errorf("%w: stored configuration version %d is newer than this program (%d)", ErrCorrupt, sc.Version, storedVersion)
	}
	alg, err := sketch.ParseAlgorithm(sc.Sketch.Sampler)
	if err != nil {
		return nil, fmt.Errorf("%w: stored configuration: %v", ErrCorrupt, err)
	}
	s := sc.Sketch
	f, err := s.Features.options()
	if err != nil {
		return nil, err
	}
	if s.Features.IDFTable != "" {
		if _, err := fmt.Sscanf(s.Features.IDFTable, "%x", &r.idf); err != nil {
			return nil, fmt.Errorf("%w: stored configuration: idf table %q", ErrCorrupt, s.Features.IDFTable)
		}
	}
	r.cfg = Config{
		Sketch: sample.Config{Algorithm: alg, K: s.K, Seed: s.Seed, Features: f, Modulus: s.Modulus, Block: s.Block,
			BufLen: s.BufLen, LogWeights: s.LogWeights, HMT: s.HMT},
		LSH: sc.LSH, Threshold: sc.Threshold, Slack: sc.Slack,
	}
	return r, nil
}

func (s storedFeatures) options() (feature.Options, error) {
	o := feature.Options{K: s.Shingle, Wrap: s.Wrap, Seed: s.Seed, SublinearTF: s.SublinearTF, RawIDF: s.RawIDF,
		TitleBoost: s.TitleBoost, HeadingBoost: s.HeadingBoost}
	for _, e := range []struct {
		names []string
		field string
		s     string
		dst   *uint8
	}{
		{formatNames, "format", s.Format, (*uint8)(&o.Format)}, {caseNames, "case", s.Case, (*uint8)(&o.Case)},
		{normNames, "norm", s.Norm, (*uint8)(&o.Norm)}, {digitNames, "digits", s.Digits, (*uint8)(&o.Digits)},
		{punctNames, "punct", s.Punct, (*uint8)(&o.Punct)}, {unitNames, "unit", s.Unit, (*uint8)(&o.Unit)},
		{weightNames, "weighting", s.Weighting, (*uint8)(&o.Weighting)},
	} {
		v, err := enumValue(e.names, e.field, e.s)
		if err != nil {
			return o, err
		}
		*e.dst = v
	}
	o.Tokenizer = feature.TokenizerWords // versions 1 and 2, and "" in version 3
	if s.Tokenizer != "" {
		v, err := enumValue(tokNames[1:], "tokenizer", s.Tokenizer)
		if err != nil {
			return o, err
		}
		o.Tokenizer = feature.Tokenizer(v + 1)
	}
	return o, nil
}

// mergeFeatures adopts the recorded feature options s (defaults filled in)
// into g field by field. idf is the recorded TF-IDF table's checksum: a
// given table must have it; none given leaves the table out (Open then
// works for everything but extraction, which needs the table).
func mergeFeatures(m *merger, s feature.Options, idf uint64, g *feature.Options) {
	mergeName(m, "features.format", formatNames, uint8(s.Format), (*uint8)(&g.Format))
	mergeName(m, "features.case", caseNames, uint8(s.Case), (*uint8)(&g.Case))
	mergeName(m, "features.norm", normNames, uint8(s.Norm), (*uint8)(&g.Norm))
	mergeName(m, "features.digits", digitNames, uint8(s.Digits), (*uint8)(&g.Digits))
	mergeName(m, "features.punct", punctNames, uint8(s.Punct), (*uint8)(&g.Punct))
	mergeName(m, "features.unit", unitNames, uint8(s.Unit), (*uint8)(&g.Unit))
	if g.Unit == feature.UnitChar && s.Unit == feature.UnitChar && g.Tokenizer != s.Tokenizer {
		g.Tokenizer = 0 // char n-grams have no tokenizer (feature.Options.Tokenizer)
	}
	mergeName(m, "features.tokenizer", tokNames, uint8(s.Tokenizer), (*uint8)(&g.Tokenizer))
	if g.Unit == feature.UnitWord && g.K != 0 && s.Unit == feature.UnitWord {
		g.K = s.K // words ignore the shingle size
	}
	mergeInt(m, "features.shingle", s.K, &g.K)
	mergeBool(m, "features.wrap", s.Wrap, &g.Wrap)
	mergeInt(m, "features.seed", s.Seed, &g.Seed)
	mergeName(m, "features.weighting", weightNames, uint8(s.Weighting), (*uint8)(&g.Weighting))
	mergeBool(m, "features.sublinear-tf", s.SublinearTF, &g.SublinearTF)
	mergeBool(m, "features.raw-idf", s.RawIDF, &g.RawIDF)
	mergeFloat(m, "features.title-boost", s.TitleBoost, &g.TitleBoost)
	mergeFloat(m, "features.heading-boost", s.HeadingBoost, &g.HeadingBoost)
	if got := idfSum(*g); g.IDFTable != nil && got != idf {
		stored := "none"
		if idf != 0 {
			stored = fmt.Sprintf("%016x", idf)
		}
		m.fail("features.idf", stored, fmt.Sprintf("%016x", got))
	}
}

// adopt returns the configuration of the recorded index when Open is given
// given: every zero field of given takes the recorded value, a non-zero one
// must equal it (else a *ConfigError), and a non-zero Threshold or Slack
// overrides the recorded one. rewrite reports a version 1 record, to be
// replaced by a version 2 one.
func (r *recorded) adopt(given Config) (out Config, rewrite bool, err error) {
	var m merger
	out = given
	mergeSketch(&m, r.cfg.Sketch, &out.Sketch)
	if r.version == 1 {
		// Only the hash of the feature options was recorded: the given
		// options (defaults for zero fields) must hash to it. The
		// index predates named tokenizers: words-v1 unless given.
		if out.Sketch.Features.Tokenizer == feature.TokenizerDefault {
			out.Sketch.Features.Tokenizer = feature.TokenizerWords
		}
		if got := out.Sketch.Features.ConfigHash(); m.err == nil && got != r.header.Features {
			m.fail("features", fmt.Sprintf("configuration %016x", r.header.Features), fmt.Sprintf("configuration %016x (%v)", got, out.Sketch.Features))
		}
	} else {
		mergeFeatures(&m, r.cfg.Sketch.Features, r.idf, &out.Sketch.Features)
	}
	mergeLSH(&m, r.cfg.LSH, &out.LSH)
	if out.Threshold == 0 {
		out.Threshold = r.cfg.Threshold
	}
	if out.Slack == 0 {
		out.Slack = r.cfg.Slack
	}
	if m.err != nil {
		return given, false, m.err
	}
	out.EnsureDefaults()
	if !complete(out.Sketch.Features) {
		return out, false, nil // no TF-IDF table given: the header cannot be rebuilt
	}
	smp, err := sample.New(out.Sketch)
	if err != nil {
		return given, false, fmt.Errorf("index: %w", err)
	}
	if h := smp.Header(); h != r.header {
		return given, false, headerError(r.header, h)
	}
	return out, r.version == 1, nil
}

// complete reports whether o can extract features (a TF-IDF weighting has
// its table).
func complete(o feature.Options) bool {
	return o.Weighting != feature.WeightTFIDF || o.IDFTable != nil
}

// headerError names the first header field in which the recorded header s
// and the one the adopted configuration gives, g, differ: a sampler whose
// output changed (a new version) cannot extend an index built with the old.
func headerError(s, g sketch.Header) error {
	e := &ConfigError{Field: "header", Stored: s.String(), Given: g.String()}
	switch {
	case s.Algorithm != g.Algorithm || s.Version != g.Version:
		e.Field = "sampler"
		e.Stored = fmt.Sprintf("%v version %d", s.Algorithm, s.Version)
		e.Given = fmt.Sprintf("%v version %d", g.Algorithm, g.Version)
	case s.Features != g.Features:
		e.Field = "features"
		e.Stored, e.Given = fmt.Sprintf("configuration %016x", s.Features), fmt.Sprintf("configuration %016x", g.Features)
	}
	return e
}
