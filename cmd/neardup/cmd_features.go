package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/progress"
)

// featFlags are the flags that choose a feature configuration. Commands
// that extract features (features, idf build, and any command that sketches
// documents) bind them with bind and turn them into feature.Options with
// options.
type featFlags struct {
	K            int
	Wrap         bool
	Unit         string
	Words        bool // --words, short for --unit word
	CharNGrams   int
	Weight       string
	IDF          string
	SublinearTF  bool
	RawIDF       bool
	TitleBoost   float64
	HeadingBoost float64
	Format       string // --markup
	Case         string
	Norm         string
	Digits       string
	Punct        string
	Tokenizer    string
	Seed         uint64
}

// bind registers the flags; withWeights adds the weighting flags.
func (f *featFlags) bind(cmd *cobra.Command, withWeights bool) {
	fl := cmd.Flags()
	fl.IntVarP(&f.K, "shingle", "k", feature.DefaultK, "words per shingle, at least 1")
	// -k was --shingle's shorthand, easily read as --k (samples): it still
	// works, with a warning.
	_ = fl.MarkShorthandDeprecated("shingle", "use --shingle (--k is the number of samples per sketch)")
	fl.BoolVar(&f.Wrap, "wrap", false, "wrap shingles around the end of the document (AltaVista: as many shingles as words)")
	fl.StringVar(&f.Unit, "unit", "shingle", "feature unit: shingle, word or char")
	fl.BoolVar(&f.Words, "words", false, "single words as features (short for --unit word)")
	fl.IntVar(&f.CharNGrams, "char-ngrams", 0, "character n-grams of this many runes as features (short for --unit char --shingle N)")
	fl.Uint64Var(&f.Seed, "feature-seed", 0, "seed of the Rabin polynomials that make feature ids")
	f.bindNorm(cmd)
	if withWeights {
		fl.StringVar(&f.Weight, "weight", "set", "weighting: set, count or tfidf")
		fl.StringVar(&f.IDF, "idf", "", "document-frequency table for --weight tfidf (from 'neardup idf build'); default: a first pass over the inputs")
		fl.BoolVar(&f.SublinearTF, "sublinear-tf", false, "tf-idf: use 1+ln(tf) for tf")
		fl.BoolVar(&f.RawIDF, "raw-idf", false, "tf-idf: use ln(N/df) instead of the smoothed ln((1+N)/(1+df))+1")
		fl.Float64Var(&f.TitleBoost, "title-boost", feature.DefaultTitleBoost, "count/tf-idf: weight multiplier of HTML title text")
		fl.Float64Var(&f.HeadingBoost, "heading-boost", feature.DefaultHeadingBoost, "count/tf-idf: weight multiplier of HTML heading text")
	}
}

// bindNorm registers only the normalization flags (format, case, Unicode,
// digits, punctuation).
func (f *featFlags) bindNorm(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.Format, "markup", "auto", "document markup: auto (HTML documents of the corpus, or sniffed), text or html")
	fl.StringVar(&f.Case, "case", "lower", "case normalization: lower, fold (full Unicode case folding) or keep")
	fl.StringVar(&f.Norm, "norm", "none", "Unicode normalization: none or nfkc")
	fl.StringVar(&f.Digits, "digits", "keep", "numbers: keep, drop or fold (every digit becomes 0)")
	fl.StringVar(&f.Punct, "punct", "drop", "punctuation: drop (a delimiter) or keep (tokens of their own)")
	fl.StringVar(&f.Tokenizer, "tokenizer", "default", "tokenizer: unicode-v1 (every Han, Hiragana and Katakana character and every Thai, Lao, Khmer and Myanmar grapheme cluster a token; other scripts by words) or words-v1 (runs of letters and digits, the tokenizer before unicode-v1); default: unicode-v1, or the one a reopened index records")
}

// options converts the flags (without the IDF table) to feature.Options;
// bad values are usage errors.
func (f *featFlags) options() (feature.Options, error) {
	o := feature.Options{K: f.K, Wrap: f.Wrap, Seed: f.Seed, SublinearTF: f.SublinearTF, RawIDF: f.RawIDF,
		TitleBoost: f.TitleBoost, HeadingBoost: f.HeadingBoost}
	// An empty string (a featFlags built in code) means the default.
	var errs []error
	parse := func(flag, v string, p func(string) error) {
		if v == "" {
			return
		}
		if err := p(v); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", flag, err))
		}
	}
	parse("markup", f.Format, func(v string) (err error) { o.Format, err = feature.ParseFormat(v); return })
	parse("norm", f.Norm, func(v string) (err error) { o.Norm, err = feature.ParseNorm(v); return })
	parse("punct", f.Punct, func(v string) (err error) { o.Punct, err = feature.ParsePunct(v); return })
	parse("case", f.Case, func(v string) (err error) { o.Case, err = feature.ParseCase(v); return })
	parse("digits", f.Digits, func(v string) (err error) { o.Digits, err = feature.ParseDigits(v); return })
	parse("unit", f.Unit, func(v string) (err error) { o.Unit, err = feature.ParseUnit(v); return })
	parse("weight", f.Weight, func(v string) (err error) { o.Weighting, err = feature.ParseWeighting(v); return })
	parse("tokenizer", f.Tokenizer, func(v string) (err error) { o.Tokenizer, err = feature.ParseTokenizer(v); return })
	if len(errs) > 0 {
		return o, &UsageError{Err: errors.Join(errs...)}
	}
	if f.K < 1 {
		return o, usagef("--shingle %d: want at least 1 word per shingle", f.K)
	}
	switch {
	case f.Words && f.CharNGrams != 0:
		return o, usagef("--words and --char-ngrams exclude each other")
	case f.Words && f.Unit != "" && f.Unit != "shingle" && f.Unit != "word":
		return o, usagef("--words and --unit %s exclude each other", f.Unit)
	case f.Words:
		o.Unit = feature.UnitWord
	case f.CharNGrams != 0 && f.Unit != "" && f.Unit != "shingle" && f.Unit != "char":
		return o, usagef("--char-ngrams and --unit %s exclude each other", f.Unit)
	case f.CharNGrams < 0:
		return o, usagef("--char-ngrams %d: must be positive", f.CharNGrams)
	case f.CharNGrams > 0:
		o.Unit, o.K = feature.UnitChar, f.CharNGrams
	}
	if o.Weighting != feature.WeightTFIDF && (f.IDF != "" || f.SublinearTF || f.RawIDF) {
		return o, usagef("--idf, --sublinear-tf and --raw-idf need --weight tfidf")
	}
	return o, nil
}

// check validates o, ignoring a missing IDF table (loaded later).
func checkFeatOptions(o feature.Options) error {
	if o.Weighting == feature.WeightTFIDF && o.IDFTable == nil {
		o.Weighting = feature.WeightCount
	}
	if err := o.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// featExtractors extracts features with the corpus's knowledge of which
// documents are HTML: with --markup auto, a document the corpus reader
// marks as HTML (HTML files, WARC responses) is read as HTML, any other is
// sniffed. Both extractors give the same ids for the same words.
type featExtractors struct {
	auto, html *feature.Extractor
}

func newFeatExtractors(o feature.Options) (*featExtractors, error) {
	x := &featExtractors{}
	var err error
	if x.auto, err = feature.New(o); err != nil {
		return nil, usagef("%v", err)
	}
	x.html = x.auto
	if o.Format == feature.FormatAuto {
		o.Format = feature.FormatHTML
		if x.html, err = feature.New(o); err != nil {
			return nil, usagef("%v", err)
		}
	}
	return x, nil
}

// pick returns the extractor for d.
func (x *featExtractors) pick(d *corpus.Document) *feature.Extractor {
	if d.HTML {
		return x.html
	}
	return x.auto
}

// featCorpusFlags choose how inputs are read: the corpus flags every
// command that reads a corpus shares.
type featCorpusFlags struct {
	IDField, TextField string
	// MaxRecordBytes is corpus.Options.MaxRecordBytes (0: the default).
	MaxRecordBytes byteSize
	// Format is --format, the container format of every input
	// (corpus.ParseFormat); "" or "auto" detects it per input.
	Format string
}

// corpusFormatUsage is the help text of --format.
const corpusFormatUsage = "input format: auto (detected per input; a walked directory's files are one document each unless JSONL, JSON, WARC or Parquet by name or magic bytes), jsonl, json (an object, an array of objects, or objects one after another), text, html, warc, parquet, or file (every input file is one document)"

func (c *featCorpusFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.IDField, "id-field", "id", "JSONL field (dotted path) holding the document id")
	cmd.Flags().StringVar(&c.TextField, "text-field", "text", "JSONL field (dotted path) holding the document text")
	c.MaxRecordBytes = corpus.DefaultMaxRecordBytes
	cmd.Flags().Var(&c.MaxRecordBytes, "max-record-bytes", "reject larger records (a JSONL line, a WARC block, a whole file, a Parquet value; any format) with reason too-large and go on")
	cmd.Flags().StringVar(&c.Format, "format", "auto", corpusFormatUsage)
}

// options returns the corpus options the flags choose; an unknown
// --format is a usage error listing the valid ones.
func (c featCorpusFlags) options() (corpus.Options, error) {
	o := corpus.Options{IDField: c.IDField, TextField: c.TextField, MaxRecordBytes: int64(c.MaxRecordBytes)}
	if c.Format != "" {
		f, err := corpus.ParseFormat(c.Format)
		if err != nil {
			return corpus.Options{}, usagef("--format %s: want auto, jsonl, json, text, html, warc, parquet or file", c.Format)
		}
		o.Format = f
	}
	return o, nil
}

// openFeatCorpus opens paths with rejections logged to stderr. A named
// input that does not exist is an error.
func openFeatCorpus(env *Env, paths []string, c featCorpusFlags, cmdName string) (*corpus.Reader, error) {
	return openFeatCorpusLog(env, paths, c, cmdName, nil)
}

// openFeatCorpusLog is openFeatCorpus that also notes every rejected
// record in rejects (when not nil), for --max-rejected.
func openFeatCorpusLog(env *Env, paths []string, c featCorpusFlags, cmdName string, rejects *rejectLog) (*corpus.Reader, error) {
	if err := checkInputs(paths); err != nil {
		return nil, err
	}
	co, err := c.options()
	if err != nil {
		return nil, err
	}
	co.Stdin = env.Stdin
	co.OnReject = func(e *corpus.RecordError) {
		if rejects != nil {
			rejects.observe(e)
		}
		fmt.Fprintf(env.Stderr, "neardup %s: rejected: %v\n", cmdName, e)
	}
	co.OnWarning = func(e *corpus.RecordError) {
		fmt.Fprintf(env.Stderr, "neardup %s: warning: %v\n", cmdName, e)
	}
	r, err := corpus.Open(paths, co)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return r, nil
}

// featProgress reports a corpus pass by bytes read (internal/progress: a
// bar on an interactive stderr, a log line every few seconds otherwise).
type featProgress struct {
	r    *corpus.Reader
	bar  *progress.Bar
	docs int64
}

func newFeatProgress(env *Env, r *corpus.Reader, what string) *featProgress {
	o := progress.Options{W: env.Stderr, Interactive: env.Interactive, NoSummary: true}
	return &featProgress{r: r, bar: progress.New(o, "neardup "+what, r.TotalBytes(), "bytes")}
}

// doc records one document done.
func (p *featProgress) doc() {
	if p.docs++; p.docs&63 == 0 {
		p.bar.Set(p.r.BytesRead())
	}
}

func (p *featProgress) finish() {
	p.bar.Set(p.r.BytesRead())
	p.bar.Finish()
}

// featLoadIDF returns the table for tf-idf weighting: read from path,
// or counted in a first pass over the inputs.
func featLoadIDF(ctx context.Context, env *Env, path string, paths []string, c featCorpusFlags, o feature.Options, cmdName string) (*feature.IDFTable, error) {
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		t, err := feature.ReadIDF(bufio.NewReader(f))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if t.FeatureConfig() != o.IDHash() {
			return nil, usagef("%s: %w (rebuild it with the same feature flags)", path, feature.ErrConfigMismatch)
		}
		return t, nil
	}
	for _, p := range paths {
		if p == "-" {
			return nil, usagef("--weight tfidf on standard input needs --idf FILE (the inputs are read twice otherwise)")
		}
	}
	if len(paths) == 0 {
		return nil, usagef("--weight tfidf on standard input needs --idf FILE (the inputs are read twice otherwise)")
	}
	b, _, err := featCountDF(ctx, env, paths, c, o, cmdName)
	if err != nil {
		return nil, err
	}
	return b.Table(0), nil
}

// featCountDF makes one pass over the inputs and counts document frequencies.
func featCountDF(ctx context.Context, env *Env, paths []string, c featCorpusFlags, o feature.Options, cmdName string) (*feature.IDFBuilder, corpus.Stats, error) {
	o.Weighting, o.IDFTable = feature.WeightSet, nil
	x, err := newFeatExtractors(o)
	if err != nil {
		return nil, corpus.Stats{}, err
	}
	r, err := openFeatCorpus(env, paths, c, cmdName)
	if err != nil {
		return nil, corpus.Stats{}, err
	}
	defer r.Close()
	b := feature.NewIDFBuilder(o.IDHash())
	p := newFeatProgress(env, r, cmdName+" (document frequencies)")
	var fs []feature.Feature
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return nil, corpus.Stats{}, err
		}
		d := r.Doc()
		fs = x.pick(d).Extract(fs[:0], d.Body)
		b.Add(fs)
		p.doc()
	}
	p.finish()
	if err := r.Err(); err != nil {
		return nil, corpus.Stats{}, err
	}
	return b, r.Stats(), nil
}

type featuresOptions struct {
	Paths   []string
	Feature featFlags
	Corpus  featCorpusFlags
	Text    bool
}

func newFeaturesCmd(env *Env) *cobra.Command {
	var opts featuresOptions
	cmd := &cobra.Command{
		Use:   "features [FILE|DIR|-]...",
		Short: "Print each document's features (shingle fingerprints and weights) as JSONL",
		Long: `features normalizes each document (HTML to visible text, case, delimiters),
cuts it into k-word shingles (or words, or character n-grams), and prints one
JSON line per document: {"id": ..., "features": [{"id": "<16 hex>", "weight": w}]},
with the shingle text and the document's tokens when --text is given. Features are listed once each,
in order of first occurrence. Inputs are files, directories, JSONL, WARC or
Parquet (optionally gzip/zstd compressed); "-" or no argument reads stdin.`,
		Example: `  neardup features testdata/licenses/docs.jsonl.gz | head -1
  neardup features --text --shingle 3 page.html
  neardup features --weight count --unit word notes.txt
  neardup idf build corpus.jsonl --idf idf.bin && neardup features --weight tfidf --idf idf.bin corpus.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return runFeatures(cmd.Context(), env, opts)
		},
	}
	opts.Feature.bind(cmd, true)
	opts.Corpus.bind(cmd)
	cmd.Flags().BoolVar(&opts.Text, "text", false, "include each feature's (normalized) text and the document's tokens")
	jsonLinesFlag(cmd)
	return cmd
}

type featJSON struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
	Text   *string `json:"text,omitempty"`
}

type featDocJSON struct {
	ID       string     `json:"id"`
	Features []featJSON `json:"features"`
	// Tokens are the document's tokens as the tokenizer cut them (with
	// --text).
	Tokens []string `json:"tokens,omitempty"`
}

func runFeatures(ctx context.Context, env *Env, opts featuresOptions) error {
	o, err := opts.Feature.options()
	if err != nil {
		return err
	}
	if err := checkFeatOptions(o); err != nil {
		return err
	}
	if o.Weighting == feature.WeightTFIDF {
		if o.IDFTable, err = featLoadIDF(ctx, env, opts.Feature.IDF, opts.Paths, opts.Corpus, o, "features"); err != nil {
			return err
		}
	}
	x, err := newFeatExtractors(o)
	if err != nil {
		return err
	}
	r, err := openFeatCorpus(env, opts.Paths, opts.Corpus, "features")
	if err != nil {
		return err
	}
	defer r.Close()
	out := bufio.NewWriterSize(env.Stdout, 1<<16)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	p := newFeatProgress(env, r, "features")
	var (
		fs   []feature.Feature
		rec  featDocJSON
		text []byte
		hex  [16]byte
	)
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := r.Doc()
		e := x.pick(d)
		fs = e.Extract(fs[:0], d.Body)
		rec.ID = d.ID
		rec.Features = rec.Features[:0]
		for i, f := range fs {
			fj := featJSON{ID: string(featHex16(hex[:0], f.ID)), Weight: f.Weight}
			if opts.Text {
				text = e.AppendText(text[:0], i)
				s := string(text)
				fj.Text = &s
			}
			rec.Features = append(rec.Features, fj)
		}
		if opts.Text {
			// After AppendText: Normalize invalidates it.
			text = e.Normalize(text[:0], d.Body)
			rec.Tokens = strings.Fields(string(text))
		}
		if err := enc.Encode(&rec); err != nil {
			return err
		}
		p.doc()
	}
	p.finish()
	if err := r.Err(); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "neardup features: %v; %s\n", r.Stats(), o)
	return nil
}

// featHex16 appends x as 16 lower-case hex digits.
func featHex16(dst []byte, x uint64) []byte {
	const digits = "0123456789abcdef"
	for s := 60; s >= 0; s -= 4 {
		dst = append(dst, digits[(x>>uint(s))&15])
	}
	return dst
}
