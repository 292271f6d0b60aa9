package feature

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/neardup/neardup/internal/rng"
)

// Format says how a document's bytes are read.
type Format uint8

const (
	// FormatAuto sniffs each document: after a byte-order mark, white space
	// and leading HTML comments, a document that starts with "<!doctype
	// html", "<html", "<head", "<body", "<title" or "<meta" (any case) is
	// HTML, anything else is plain text. Plain text that merely starts with
	// '<' (a licence template "<one line to give ...>", a Markdown file with
	// a comment) stays plain text. The default.
	FormatAuto Format = iota
	// FormatText treats every document as plain text.
	FormatText
	// FormatHTML treats every document as HTML.
	FormatHTML
)

// Case says how letters are case-normalized.
type Case uint8

const (
	// CaseLower maps every letter to lower case, rune by rune
	// (unicode.ToLower; ASCII by table). The default; it is the ground-truth
	// tokenization of the testdata licences corpus.
	CaseLower Case = iota
	// CaseFold applies full Unicode case folding (golang.org/x/text/cases:
	// "ß" and "SS" both become "ss", final sigma equals sigma) to non-ASCII
	// text; ASCII is lowered by table.
	CaseFold
	// CaseKeep leaves case alone.
	CaseKeep
)

// Norm says which Unicode normalization is applied to non-ASCII text.
type Norm uint8

const (
	// NormNone applies no Unicode normalization. The default, because the
	// ground-truth tokenization of our test corpus has none.
	NormNone Norm = iota
	// NormNFKC applies compatibility composition (golang.org/x/text/unicode/
	// norm NFKC): ligatures, full-width forms, "Ⓒ" and "™" become their plain
	// letters. Pure-ASCII text is already in NFKC and skips the step.
	NormNFKC
)

// Digits says what happens to numbers (Unicode category N).
type Digits uint8

const (
	// DigitsKeep keeps numbers as word characters. The default.
	DigitsKeep Digits = iota
	// DigitsDrop treats numbers as delimiters.
	DigitsDrop
	// DigitsFold keeps numbers but maps every digit to '0', so "2023" and
	// "2024" (copyright years, version numbers) give the same token.
	DigitsFold
)

// Punct says what happens to punctuation and symbols.
type Punct uint8

const (
	// PunctDrop makes every run of white space and punctuation one
	// delimiter. The default.
	PunctDrop Punct = iota
	// PunctKeep makes each punctuation or symbol rune a token of its own
	// (white space still only delimits).
	PunctKeep
)

// Unit says what a feature is made of.
type Unit uint8

const (
	// UnitShingle makes a feature of every K consecutive words (book 2.4).
	// The default.
	UnitShingle Unit = iota
	// UnitWord makes a feature of every word (K is ignored; it is a
	// 1-shingle).
	UnitWord
	// UnitChar makes a feature of every K consecutive runes of the
	// normalized text (words joined by one space).
	UnitChar
)

// Weighting says how a feature's weight is computed.
type Weighting uint8

const (
	// WeightSet gives every distinct feature weight 1 (a set; book 2.4).
	// Markup boosts are ignored. The default.
	WeightSet Weighting = iota
	// WeightCount gives each feature its number of occurrences, each
	// occurrence multiplied by its markup boost (a multiset; book ch. 5).
	WeightCount
	// WeightTFIDF gives tf × idf, tf being the boosted count (optionally
	// sublinear) and idf coming from Options.IDFTable (book ch. 5, TF-IDF).
	WeightTFIDF
)

// Tokenizer says how text is cut into tokens (words) before shingling.
type Tokenizer uint8

const (
	// TokenizerDefault is the zero value: DefaultTokenizer.
	TokenizerDefault Tokenizer = iota
	// TokenizerWords ("words-v1") makes a token of every maximal run of
	// letters, numbers and '_', whatever the script: a Chinese, Japanese
	// or Thai clause is one token. It is the tokenizer of every
	// configuration before tokenizers were named, and of an index recorded
	// without one.
	TokenizerWords
	// TokenizerUnicode ("unicode-v1") cuts scripts written without spaces
	// by Unicode's script property: every Han, Hiragana and Katakana letter
	// or number is a token of its own (so k-token shingles of Chinese and
	// Japanese text are character k-grams), and so is every Thai, Lao,
	// Khmer and Myanmar grapheme cluster (a letter with the combining marks
	// after it). Other scripts (Latin, Cyrillic, Greek, Hangul, Arabic,
	// Devanagari, ...) keep TokenizerWords' words, except that a combining
	// mark (Unicode category M) continues the token before it instead of
	// ending it, as UAX #29 word boundaries have it (WB4). On ASCII text it
	// gives exactly TokenizerWords' tokens, by the same fast path. The
	// default.
	TokenizerUnicode
)

// DefaultTokenizer is the tokenizer of Options whose Tokenizer is zero.
const DefaultTokenizer = TokenizerUnicode

// Default values of Options fields left zero.
const (
	DefaultK            = 5
	DefaultTitleBoost   = 2.0
	DefaultHeadingBoost = 1.5
)

// Options configure an Extractor. The zero value is the default
// configuration: auto-detected format, lower case, no Unicode normalization,
// digits kept, punctuation dropped, 5-word shingles without wrap-around,
// set weights, seed 0. That default is exactly the ground-truth tokenization
// of the testdata licences corpus (lower-case; tokens are maximal runs of
// letters, numbers and '_'; 5-word shingles; a shorter document is one
// shingle).
//
// Options are plain values: copy them freely. They are safe for concurrent
// use as long as nobody writes to them (IDFTable is read-only).
type Options struct {
	// Format says how documents are read. Default FormatAuto.
	Format Format
	// Case says how letters are case-normalized. Default CaseLower.
	Case Case
	// Norm is the Unicode normalization. Default NormNone.
	Norm Norm
	// Digits says what numbers do. Default DigitsKeep.
	Digits Digits
	// Punct says what punctuation does. Default PunctDrop.
	Punct Punct

	// Tokenizer says how text is cut into tokens. Zero means
	// DefaultTokenizer (TokenizerUnicode). It does not apply to UnitChar,
	// whose units are runes (withDefaults makes it TokenizerWords there).
	Tokenizer Tokenizer

	// Unit is what a feature is made of. Default UnitShingle.
	Unit Unit
	// K is the shingle size: words for UnitShingle, runes for UnitChar.
	// Zero means DefaultK (5). Must be at most 64.
	K int
	// Wrap makes shingles wrap around, AltaVista style (book 2.4): the last
	// words are followed by the first, so a document has exactly as many
	// shingles (before deduplication) as words. Without Wrap a document of
	// n >= K words has n-K+1 shingles and one of n < K words has one
	// shingle of all its words. Default false.
	Wrap bool
	// Seed selects the Rabin polynomials that make feature ids. Features
	// are comparable only between extractors with the same Seed (and the
	// same IDHash). Default 0.
	Seed uint64

	// Weighting is how weights are computed. Default WeightSet.
	Weighting Weighting
	// SublinearTF replaces tf by 1+ln(tf) under WeightTFIDF. Default false.
	SublinearTF bool
	// RawIDF uses idf = ln(N/df) (features missing from the table count as
	// df = 1) instead of the default smoothed idf = ln((1+N)/(1+df)) + 1.
	// With RawIDF a feature in every document gets weight 0 and is dropped.
	// Default false.
	RawIDF bool
	// IDFTable holds the document frequencies for WeightTFIDF (required
	// then, ignored otherwise). It must have been built with features of the
	// same IDHash.
	IDFTable *IDFTable
	// TitleBoost multiplies the weight of every occurrence of a feature
	// that touches the HTML <title> (WeightCount, WeightTFIDF). Zero means
	// DefaultTitleBoost (2); must be >= 1 (1 turns it off).
	TitleBoost float64
	// HeadingBoost multiplies occurrences touching <h1>…<h6>, like
	// TitleBoost. Zero means DefaultHeadingBoost (1.5); must be >= 1.
	HeadingBoost float64
}

// Errors of this package. Validation errors wrap ErrOptions.
var (
	ErrOptions        = errors.New("feature: invalid options")
	ErrConfigMismatch = errors.New("feature: idf table was built with a different feature configuration")
)

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.Unit == UnitWord {
		o.K = 1
	}
	if o.Tokenizer == TokenizerDefault {
		o.Tokenizer = DefaultTokenizer
	}
	if o.Unit == UnitChar {
		o.Tokenizer = TokenizerWords // runes are the units: tokens do not matter
	}
	if o.TitleBoost == 0 {
		o.TitleBoost = DefaultTitleBoost
	}
	if o.HeadingBoost == 0 {
		o.HeadingBoost = DefaultHeadingBoost
	}
	return o
}

// MaxK is the largest shingle size.
const MaxK = 64

// Validate reports every problem of o at once (each wrapping ErrOptions),
// or nil.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrOptions}, args...)...))
	}
	if o.Format > FormatHTML {
		bad("unknown format %d", o.Format)
	}
	if o.Case > CaseKeep {
		bad("unknown case mode %d", o.Case)
	}
	if o.Norm > NormNFKC {
		bad("unknown normalization %d", o.Norm)
	}
	if o.Digits > DigitsFold {
		bad("unknown digits mode %d", o.Digits)
	}
	if o.Punct > PunctKeep {
		bad("unknown punctuation mode %d", o.Punct)
	}
	if o.Unit > UnitChar {
		bad("unknown unit %d", o.Unit)
	}
	if o.Tokenizer > TokenizerUnicode {
		bad("unknown tokenizer %d", o.Tokenizer)
	}
	if o.K < 0 || o.K > MaxK {
		bad("shingle size K=%d not in 1..%d", o.K, MaxK)
	}
	if o.Weighting > WeightTFIDF {
		bad("unknown weighting %d", o.Weighting)
	}
	if o.Weighting == WeightTFIDF && o.IDFTable == nil {
		bad("tf-idf weighting needs an IDFTable")
	}
	for _, b := range []struct {
		name string
		v    float64
	}{{"TitleBoost", o.TitleBoost}, {"HeadingBoost", o.HeadingBoost}} {
		if b.v != 0 && !(b.v >= 1 && b.v <= 1e6) {
			bad("%s=%v not in [1, 1e6] (0 means default)", b.name, b.v)
		}
	}
	if len(errs) == 0 && o.Weighting == WeightTFIDF && o.IDFTable.FeatureConfig() != o.IDHash() {
		errs = append(errs, fmt.Errorf("%w (table %016x, options %016x)", ErrConfigMismatch, o.IDFTable.FeatureConfig(), o.IDHash()))
	}
	return errors.Join(errs...)
}

// configVersion changes whenever the meaning of a configuration (the ids or
// weights it produces) changes, so hashes of old configurations never match
// new outputs.
const configVersion = 1

// IDHash returns a stable 64-bit summary of everything that determines
// feature ids from a token sequence (case, normalization, digits,
// punctuation, tokenizer, unit, K, Wrap, Seed, and the algorithm version), but not
// weights. Ids of extractors with equal IDHash are comparable; IDF tables
// record it. Format is left out on purpose: it decides how bytes become
// text, not what ids text gets, so the same words in a .txt file and an
// HTML page get the same ids.
func (o Options) IDHash() uint64 {
	o = o.withDefaults()
	w := uint64(0)
	if o.Wrap {
		w = 1
	}
	if o.Tokenizer != TokenizerWords {
		// A tokenizer after words-v1 adds its number; words-v1 keeps the
		// hash every configuration had before tokenizers were named, so
		// that recorded indexes and IDF tables keep matching.
		return rng.Key(0x666561747572653a, // "feature:"
			configVersion, uint64(o.Case), uint64(o.Norm),
			uint64(o.Digits), uint64(o.Punct), uint64(o.Unit), uint64(o.K), w, o.Seed, 0x746f6b656e697a65, uint64(o.Tokenizer))
	}
	return rng.Key(0x666561747572653a, // "feature:"
		configVersion, uint64(o.Case), uint64(o.Norm),
		uint64(o.Digits), uint64(o.Punct), uint64(o.Unit), uint64(o.K), w, o.Seed)
}

// ConfigHash returns a stable 64-bit summary of the whole configuration:
// IDHash plus the weighting, its options, the boosts and the checksum of
// the IDF table. Sketch headers record it so sketches of different feature
// configurations are never compared.
func (o Options) ConfigHash() uint64 {
	o = o.withDefaults()
	var sub, raw, table uint64
	if o.Weighting == WeightTFIDF {
		if o.SublinearTF {
			sub = 1
		}
		if o.RawIDF {
			raw = 1
		}
		if o.IDFTable != nil {
			table = o.IDFTable.Checksum()
		}
	}
	var tb, hb uint64
	if o.Weighting != WeightSet {
		tb, hb = math.Float64bits(o.TitleBoost), math.Float64bits(o.HeadingBoost)
	}
	return rng.Key(o.IDHash(), uint64(o.Weighting), sub, raw, table, tb, hb)
}

var (
	formatNames = [...]string{"auto", "text", "html"}
	caseNames   = [...]string{"lower", "fold", "keep"}
	normNames   = [...]string{"none", "nfkc"}
	digitNames  = [...]string{"keep", "drop", "fold"}
	punctNames  = [...]string{"drop", "keep"}
	unitNames   = [...]string{"shingle", "word", "char"}
	weightNames = [...]string{"set", "count", "tfidf"}
	// TokenizerNames are the tokenizers' names, by value ("default" for
	// the zero value); an index records its tokenizer by name.
	tokenizerNames = [...]string{"default", "words-v1", "unicode-v1"}
)

// String returns the tokenizer's name: "words-v1", "unicode-v1", or
// "default" for the zero value.
func (t Tokenizer) String() string { return name(tokenizerNames[:], uint8(t)) }

// ParseTokenizer parses "words-v1" or "unicode-v1" (or "default").
func ParseTokenizer(s string) (Tokenizer, error) {
	v, err := parse(tokenizerNames[:], "tokenizer", s)
	return Tokenizer(v), err
}

func name(names []string, i uint8) string {
	if int(i) < len(names) {
		return names[i]
	}
	return fmt.Sprintf("?%d", i)
}

// String describes the configuration in one stable human-readable line,
// e.g. "shingle k=5 nowrap format=auto case=lower norm=none digits=keep
// punct=drop seed=0 weight=set tokenizer=unicode-v1". The words-v1
// tokenizer, which every configuration had before tokenizers were named,
// is not written, so that those lines read as they always did.
func (o Options) String() string {
	o = o.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "%s k=%d", name(unitNames[:], uint8(o.Unit)), o.K)
	if o.Wrap {
		b.WriteString(" wrap")
	} else {
		b.WriteString(" nowrap")
	}
	fmt.Fprintf(&b, " format=%s case=%s norm=%s digits=%s punct=%s seed=%d weight=%s",
		name(formatNames[:], uint8(o.Format)), name(caseNames[:], uint8(o.Case)),
		name(normNames[:], uint8(o.Norm)), name(digitNames[:], uint8(o.Digits)),
		name(punctNames[:], uint8(o.Punct)), o.Seed, name(weightNames[:], uint8(o.Weighting)))
	if o.Weighting != WeightSet {
		fmt.Fprintf(&b, " title=%g heading=%g", o.TitleBoost, o.HeadingBoost)
	}
	if o.Tokenizer != TokenizerWords {
		fmt.Fprintf(&b, " tokenizer=%v", o.Tokenizer)
	}
	if o.Weighting == WeightTFIDF {
		if o.SublinearTF {
			b.WriteString(" tf=sublinear")
		} else {
			b.WriteString(" tf=raw")
		}
		if o.RawIDF {
			b.WriteString(" idf=raw")
		} else {
			b.WriteString(" idf=smooth")
		}
		if o.IDFTable != nil {
			fmt.Fprintf(&b, " idftable=%016x", o.IDFTable.Checksum())
		}
	}
	return b.String()
}

// ParseFormat, ParseCase, ... turn the names String uses back into values
// (for command-line flags).
func ParseFormat(s string) (Format, error) {
	v, err := parse(formatNames[:], "format", s)
	return Format(v), err
}

// ParseCase parses "lower", "fold" or "keep".
func ParseCase(s string) (Case, error) { v, err := parse(caseNames[:], "case", s); return Case(v), err }

// ParseNorm parses "none" or "nfkc".
func ParseNorm(s string) (Norm, error) { v, err := parse(normNames[:], "norm", s); return Norm(v), err }

// ParseDigits parses "keep", "drop" or "fold".
func ParseDigits(s string) (Digits, error) {
	v, err := parse(digitNames[:], "digits", s)
	return Digits(v), err
}

// ParsePunct parses "drop" or "keep".
func ParsePunct(s string) (Punct, error) {
	v, err := parse(punctNames[:], "punct", s)
	return Punct(v), err
}

// ParseUnit parses "shingle", "word" or "char".
func ParseUnit(s string) (Unit, error) { v, err := parse(unitNames[:], "unit", s); return Unit(v), err }

// ParseWeighting parses "set", "count" or "tfidf".
func ParseWeighting(s string) (Weighting, error) {
	v, err := parse(weightNames[:], "weighting", s)
	return Weighting(v), err
}

func parse(names []string, what, s string) (uint8, error) {
	for i, n := range names {
		if strings.EqualFold(n, s) {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown %s %q (want one of %s)", ErrOptions, what, s, strings.Join(names, ", "))
}
