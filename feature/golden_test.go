package feature

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// goldenDocs are small documents whose feature ids the golden file pins.
var goldenDocs = []string{
	"Now is the time for all good men to come to the aid of the party.",
	"Permission is hereby granted, free of charge, to any person obtaining a copy",
	"<!DOCTYPE html><html><head><title>Héllo &amp; Wörld</title></head><body><h1>News</h1><p>Fo<b>o</b> bar, baz!</p></body></html>",
	"tiny doc",
}

// goldenConfigs are the configurations of golden.json: the words-v1
// tokenizer, which every configuration had when it was written.
var goldenConfigs = []Options{
	{Tokenizer: TokenizerWords},
	{Wrap: true, K: 3, Tokenizer: TokenizerWords},
	{Unit: UnitWord, Weighting: WeightCount, Tokenizer: TokenizerWords},
	{Unit: UnitChar, K: 4, Seed: 42, Tokenizer: TokenizerWords},
	{Norm: NormNFKC, Case: CaseFold, Digits: DigitsFold, Punct: PunctKeep, Weighting: WeightCount, Tokenizer: TokenizerWords},
}

// unicodeDocs and unicodeConfigs are the documents and configurations of
// golden_unicode.json: the unicode-v1 tokenizer (the default) on text of
// scripts written with and without spaces.
var unicodeDocs = append(goldenDocs[:len(goldenDocs):len(goldenDocs)],
	"近似重复文档的检测。 Near-duplicate detection!",
	"重複した文書を検出します。カタカナ語ー",
	"การตรวจหาเอกสารที่ซ้ำกัน ພາສາລາວ ភាសាខ្មែរ မြန်မာစာ",
	"한국어 문서 Ελληνικά русский café",
)

var unicodeConfigs = []Options{
	{},
	{Wrap: true, K: 3},
	{Unit: UnitWord, Weighting: WeightCount},
	{Norm: NormNFKC, Case: CaseFold, Digits: DigitsFold, Punct: PunctKeep, Weighting: WeightCount},
}

type goldenEntry struct {
	Config     string   `json:"config"`
	IDHash     string   `json:"id_hash"`
	ConfigHash string   `json:"config_hash"`
	Doc        int      `json:"doc"`
	Features   []string `json:"features"` // "id:weight"
}

func goldenEntries(t *testing.T, configs []Options, docs []string) []goldenEntry {
	var out []goldenEntry
	for _, o := range configs {
		e, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range docs {
			g := goldenEntry{Config: o.String(), IDHash: fmt.Sprintf("%016x", o.IDHash()),
				ConfigHash: fmt.Sprintf("%016x", o.ConfigHash()), Doc: i}
			for _, f := range e.Extract(nil, []byte(d)) {
				g.Features = append(g.Features, fmt.Sprintf("%016x:%g", f.ID, f.Weight))
			}
			out = append(out, g)
		}
	}
	return out
}

// TestGolden pins feature ids, weights and configuration hashes: stored
// sketches and IDF tables depend on them. Regenerate (only for a deliberate,
// versioned change) with go test ./feature -run Golden -update.
func TestGolden(t *testing.T) {
	t.Run("words-v1", func(t *testing.T) { checkGolden(t, "golden.json", goldenConfigs, goldenDocs) })
	t.Run("unicode-v1", func(t *testing.T) { checkGolden(t, "golden_unicode.json", unicodeConfigs, unicodeDocs) })
}

func checkGolden(t *testing.T, file string, configs []Options, docs []string) {
	path := filepath.Join("testdata", file)
	got, err := json.MarshalIndent(goldenEntries(t, configs, docs), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		_ = os.WriteFile(path+".got", got, 0o644)
		t.Fatalf("feature ids changed; compare %s with %s.got (rerun with -update only for a deliberate change)", path, path)
	}
}

func TestIDFRoundTripAndWeights(t *testing.T) {
	o := Options{K: 2}
	e, _ := New(o)
	b := NewIDFBuilder(o.IDHash())
	docs := []string{"a b c d", "a b x y", "a b c z", "q r s t"}
	var fs []Feature
	for _, d := range docs {
		fs = e.Extract(fs[:0], []byte(d))
		b.Add(append(fs, fs...)) // repeated ids in one document count once
	}
	tab := b.Table(0)
	if tab.Docs() != 4 || tab.Len() != 9 {
		t.Fatalf("docs %d len %d, want 4 and 9", tab.Docs(), tab.Len())
	}
	ab := e.Extract(nil, []byte("a b"))[0].ID
	bc := e.Extract(nil, []byte("b c"))[0].ID
	if tab.DF(ab) != 3 || tab.DF(bc) != 2 || tab.DF(12345) != 0 {
		t.Fatalf("df(a b)=%d df(b c)=%d", tab.DF(ab), tab.DF(bc))
	}
	if b.Table(2).Len() != 2 {
		t.Fatalf("minDF 2 keeps %d, want 2", b.Table(2).Len())
	}

	var buf bytes.Buffer
	if _, err := tab.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	enc := buf.Bytes()
	back, err := ReadIDF(bytes.NewReader(enc))
	if err != nil {
		t.Fatal(err)
	}
	if back.Checksum() != tab.Checksum() || back.FeatureConfig() != o.IDHash() || back.DF(ab) != 3 {
		t.Fatal("round trip changed the table")
	}
	// Every single-bit corruption is detected (CRC-32C), never a panic.
	for i := range enc {
		c := bytes.Clone(enc)
		c[i] ^= 0x10
		if _, err := ParseIDF(c); err == nil {
			t.Fatalf("corruption at byte %d undetected", i)
		}
	}
	for n := 0; n < len(enc); n++ {
		if _, err := ParseIDF(enc[:n]); err == nil {
			t.Fatalf("truncation to %d bytes undetected", n)
		}
	}
	c := bytes.Clone(enc)
	c[len(idfMagic)] = 9
	if _, err := ParseIDF(c); !errors.Is(err, ErrIDFVersion) {
		t.Fatalf("want ErrIDFVersion, got %v", err)
	}
	var fe *IDFFormatError
	if _, err := ParseIDF([]byte("not an idf table at all")); !errors.As(err, &fe) || !errors.Is(err, ErrIDFFormat) {
		t.Fatalf("want *IDFFormatError, got %v", err)
	}

	// TF-IDF weights: tf x smoothed idf, sublinear tf, raw idf.
	for _, c := range []struct {
		sub, raw bool
		want     func(tf, df, n float64) float64
	}{
		{false, false, func(tf, df, n float64) float64 { return tf * (math.Log((1+n)/(1+df)) + 1) }},
		{true, false, func(tf, df, n float64) float64 { return (1 + math.Log(tf)) * (math.Log((1+n)/(1+df)) + 1) }},
		{false, true, func(tf, df, n float64) float64 { return tf * math.Log(n/math.Max(df, 1)) }},
	} {
		et, err := New(Options{K: 2, Weighting: WeightTFIDF, IDFTable: back, SublinearTF: c.sub, RawIDF: c.raw})
		if err != nil {
			t.Fatal(err)
		}
		fs := et.Extract(nil, []byte("a b a b c q"))
		want := map[string]float64{
			"a b": c.want(2, 3, 4), "b a": c.want(1, 0, 4), "b c": c.want(1, 2, 4), "c q": c.want(1, 0, 4),
		}
		if len(fs) != len(want) {
			t.Fatalf("%+v: %d features", c, len(fs))
		}
		for i, f := range fs {
			txt := string(et.AppendText(nil, i))
			if math.Abs(f.Weight-want[txt]) > 1e-12 {
				t.Errorf("sub=%v raw=%v %q: weight %v, want %v", c.sub, c.raw, txt, f.Weight, want[txt])
			}
		}
	}
	// Raw idf drops a feature found in every document (weight 0).
	all := NewIDFBuilder(o.IDHash())
	all.Add(e.Extract(nil, []byte("a b")))
	all.Add(e.Extract(nil, []byte("a b z")))
	er, _ := New(Options{K: 2, Weighting: WeightTFIDF, IDFTable: all.Table(0), RawIDF: true})
	if fs := er.Extract(nil, []byte("a b c")); len(fs) != 1 || string(er.AppendText(nil, 0)) != "b c" {
		t.Fatalf("raw idf kept a zero-weight feature: %v", fs)
	}
}

// TestBoilerplateDownweighted shows what TF-IDF is for: a footer shared by
// every page of a site weighs less than the page's own text.
func TestBoilerplateDownweighted(t *testing.T) {
	footer := " copyright example corp all rights reserved terms of use privacy policy"
	pages := []string{
		"the cat sat on the mat and looked at the door" + footer,
		"a dog ran across the field chasing a red ball" + footer,
		"rain fell all night over the quiet grey harbour town" + footer,
	}
	o := Options{K: 3}
	e, _ := New(o)
	b := NewIDFBuilder(o.IDHash())
	for _, p := range pages {
		b.Add(e.Extract(nil, []byte(p)))
	}
	et, _ := New(Options{K: 3, Weighting: WeightTFIDF, IDFTable: b.Table(0)})
	fs := et.Extract(nil, []byte(pages[0]))
	var own, shared float64
	for i, f := range fs {
		if bytes.Contains([]byte(footer), et.AppendText(nil, i)) {
			shared = f.Weight
		} else {
			own = f.Weight
		}
	}
	if !(shared > 0 && own > 1.5*shared) {
		t.Fatalf("own-text weight %v vs boilerplate weight %v", own, shared)
	}
}
