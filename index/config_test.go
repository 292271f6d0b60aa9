package index

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// An index reopens with no settings, and a contradicting setting is a
// one-line *ConfigError naming both values; Threshold and Slack override.
func TestReopenAdoptsConfig(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	built := Config{Sketch: sample.Config{Algorithm: sketch.MinHash, K: 64, Seed: 9, Features: feature.Options{K: 3, Case: feature.CaseFold}}, Threshold: 0.9}
	x := mustOpen(t, st, built)
	_, sets := corpus(1, nil, 9)
	d := mkDoc(t, x, "only", sets[0], true)
	mustAdd(t, x, d)
	st.Close()

	st, err = store.OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x = mustOpen(t, st, Config{})
	c := x.Config()
	if c.Sketch.Algorithm != sketch.MinHash || c.Sketch.K != 64 || c.Sketch.Seed != 9 || c.Sketch.Features.K != 3 ||
		c.Sketch.Features.Case != feature.CaseFold || c.Threshold != 0.9 || c.LSH != x.Scheme().Params() {
		t.Fatalf("adopted %+v", c)
	}
	if got, ok, err := x.Get(bg, "only"); err != nil || !ok || !slices.Equal(got.Sketch.Values, d.Sketch.Values) {
		t.Fatalf("Get after reopen: %v %v", ok, err)
	}
	if s, err := x.NewSketcher(); err != nil || s.Header() != x.Header() {
		t.Fatalf("NewSketcher of the adopted config: %v", err)
	}
	if x2, err := Open(bg, st, Config{Threshold: 0.5, Slack: -1, Sketch: sample.Config{K: 64}}); err != nil || x2.Config().Threshold != 0.5 || x2.Config().Slack != -1 {
		t.Fatalf("threshold override: %v", err)
	}
	if x3 := mustOpen(t, st, Config{}); x3.Config().Threshold != 0.9 {
		t.Fatalf("an override was recorded: threshold %v", x3.Config().Threshold)
	}

	for _, c := range []struct {
		given Config
		msg   string
	}{
		{Config{Sketch: sample.Config{K: 128}}, "k: the index was built with 64, not 128"},
		{Config{Sketch: sample.Config{Algorithm: sketch.OPH}}, "sampler: the index was built with minhash, not oph"},
		{Config{Sketch: sample.Config{Seed: 1}}, "seed: the index was built with 9, not 1"},
		{Config{Sketch: sample.Config{Features: feature.Options{K: 5}}}, "features.shingle: the index was built with 3, not 5"},
		{Config{Sketch: sample.Config{Features: feature.Options{Case: feature.CaseKeep}}}, "features.case: the index was built with fold, not keep"},
		{Config{Sketch: sample.Config{Features: feature.Options{Wrap: true}}}, "features.wrap: the index was built with false, not true"},
		{Config{LSH: lsh.Params{R: 99}}, "lsh.r: the index was built with " + itoa(x.Scheme().Params().R) + ", not 99"},
	} {
		_, err := Open(bg, st, c.given)
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) || err.Error() != c.msg || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%+v) = %v, want %q", c.given, err, c.msg)
		}
	}
	got, ok, err := Stored(bg, st)
	if err != nil || !ok || got.Sketch.K != 64 || got.Sketch.Features.Case != feature.CaseFold {
		t.Fatalf("Stored: %+v %v %v", got, ok, err)
	}
	if _, ok, err := Stored(bg, store.NewMemory()); ok || err != nil {
		t.Fatalf("Stored of an empty store: %v %v", ok, err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// An index recorded by the previous release (configuration version 1:
// header and LSH only, version 1 records) opens with the right feature
// options, is upgraded, and refuses other feature options.
func TestReopenVersion1(t *testing.T) {
	st := store.NewMemory()
	cfg := minhashConfig(64, 3, lsh.Banding(4, 16), 0)
	cfg.Sketch.Features.Tokenizer = feature.TokenizerWords // the only one then
	smp, _ := sample.New(cfg.Sketch)
	x := &Index{cfg: cfg, hdr: smp.Header()} // only for mkDoc
	_, sets := corpus(2, nil, 6)
	d := mkDoc(t, x, "old", sets[0], true)
	d.HasFingerprint = false
	v1, _ := json.Marshal(struct {
		Header sketch.Header `json:"header"`
		LSH    lsh.Params    `json:"lsh"`
	}{smp.Header(), cfg.LSH})
	b := st.NewBatch()
	b.PutMeta(configMeta, v1)
	b.PutDoc(ID("old"), appendV1(nil, d))
	keys, _ := lsh.MustNew(cfg.LSH).Keys(nil, d.Sketch.Values)
	for _, k := range keys {
		b.AddPosting(k, ID("old"))
	}
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	_, err := Open(bg, st, Config{Sketch: sample.Config{Features: feature.Options{K: 4}}})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "features" {
		t.Fatalf("other features on a version 1 index: %v", err)
	}
	if _, err := Open(bg, st, Config{Sketch: sample.Config{K: 32}}); !errors.As(err, &ce) || ce.Field != "k" {
		t.Fatalf("other k on a version 1 index: %v", err)
	}
	x = mustOpen(t, st, Config{})
	if x.Config().Sketch.Algorithm != sketch.MinHash || x.Config().LSH != cfg.LSH {
		t.Fatalf("adopted %+v", x.Config())
	}
	ms, err := x.Query(bg, nil, mkDoc(t, x, "q", sets[0], true), "")
	if err != nil || len(ms) != 1 || ms[0].Name != "old" || ms[0].Exact != 1 {
		t.Fatalf("query of a version 1 index: %+v %v", ms, err)
	}
	raw, _, _ := st.Meta(bg, configMeta, nil)
	if !strings.Contains(string(raw), `"version":3`) || !strings.Contains(string(raw), `"tokenizer":"words-v1"`) {
		t.Fatalf("not upgraded: %s", raw)
	}
	mustAdd(t, x, mkDoc(t, x, "old", sets[1], true)) // replaces a version 1 record
	checkClean(t, x)
}

// A new index records the default tokenizer (unicode-v1); one recorded by
// the previous release (version 2, no tokenizer) keeps words-v1 on reopen,
// and a given tokenizer that contradicts the recorded one is refused.
func TestReopenTokenizer(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, Config{})
	raw, _, _ := st.Meta(bg, configMeta, nil)
	if !strings.Contains(string(raw), `"version":3`) || !strings.Contains(string(raw), `"tokenizer":"unicode-v1"`) ||
		x.Header().Features != (feature.Options{}).ConfigHash() {
		t.Fatalf("new index records %s", raw)
	}
	if _, err := Open(bg, st, Config{Sketch: sample.Config{Features: feature.Options{Tokenizer: feature.TokenizerWords}}}); err == nil ||
		err.Error() != "features.tokenizer: the index was built with unicode-v1, not words-v1" {
		t.Fatalf("other tokenizer: %v", err)
	}

	// The record a version 2 program wrote: no tokenizer, words-v1 ids.
	old := store.NewMemory()
	words := Config{Sketch: sample.Config{Features: feature.Options{Tokenizer: feature.TokenizerWords}}}
	mustOpen(t, old, words)
	raw, _, _ = old.Meta(bg, configMeta, nil)
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber() // the header's 64-bit hash
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 2
	delete(m["sketch"].(map[string]any)["features"].(map[string]any), "tokenizer")
	v2, _ := json.Marshal(m)
	b := old.NewBatch()
	b.PutMeta(configMeta, v2)
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	x = mustOpen(t, old, Config{})
	if x.Config().Sketch.Features.Tokenizer != feature.TokenizerWords || x.Header().Features != words.Sketch.Features.ConfigHash() {
		t.Fatalf("version 2 index reopened with %v", x.Config().Sketch.Features)
	}
	if got, _, err := Stored(bg, old); err != nil || got.Sketch.Features.Tokenizer != feature.TokenizerWords {
		t.Fatalf("Stored of a version 2 index: %v %v", got.Sketch.Features, err)
	}
	if _, err := Open(bg, old, Config{Sketch: sample.Config{Features: feature.Options{Tokenizer: feature.TokenizerUnicode}}}); err == nil ||
		err.Error() != "features.tokenizer: the index was built with words-v1, not unicode-v1" {
		t.Fatalf("unicode-v1 on a words-v1 index: %v", err)
	}
	m["version"] = 4
	v4, _ := json.Marshal(m)
	b = old.NewBatch()
	b.PutMeta(configMeta, v4)
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bg, old, Config{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("version 4: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	err := Config{Sketch: sample.Config{Algorithm: sketch.BottomK, K: 8}, Threshold: 2, LSH: lsh.Banding(4, 4)}.Validate()
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Fatalf("Validate: %v, want three problems", err)
	}
	if _, err := Open(bg, store.NewMemory(), Config{Sketch: sample.Config{K: 4}, LSH: lsh.Banding(4, 4)}); err == nil {
		t.Fatal("Open accepted an LSH scheme longer than the sketches")
	}
}

// The names the stored configuration uses are the ones package feature
// parses, in its numbering.
func TestStoredNames(t *testing.T) {
	for _, c := range []struct {
		names []string
		parse func(string) (uint8, error)
	}{
		{formatNames, func(s string) (uint8, error) { v, err := feature.ParseFormat(s); return uint8(v), err }},
		{caseNames, func(s string) (uint8, error) { v, err := feature.ParseCase(s); return uint8(v), err }},
		{normNames, func(s string) (uint8, error) { v, err := feature.ParseNorm(s); return uint8(v), err }},
		{digitNames, func(s string) (uint8, error) { v, err := feature.ParseDigits(s); return uint8(v), err }},
		{punctNames, func(s string) (uint8, error) { v, err := feature.ParsePunct(s); return uint8(v), err }},
		{unitNames, func(s string) (uint8, error) { v, err := feature.ParseUnit(s); return uint8(v), err }},
		{weightNames, func(s string) (uint8, error) { v, err := feature.ParseWeighting(s); return uint8(v), err }},
		{tokNames, func(s string) (uint8, error) { v, err := feature.ParseTokenizer(s); return uint8(v), err }},
	} {
		for i, n := range c.names {
			if v, err := c.parse(n); err != nil || int(v) != i {
				t.Errorf("%q: parsed as %d, %v; stored as %d", n, v, err, i)
			}
		}
	}
	// Every feature option survives the record.
	o := feature.Options{Format: feature.FormatHTML, Case: feature.CaseKeep, Norm: feature.NormNFKC, Digits: feature.DigitsFold,
		Punct: feature.PunctKeep, Unit: feature.UnitChar, K: 7, Wrap: true, Seed: 5, Weighting: feature.WeightCount, TitleBoost: 3, HeadingBoost: 1,
		Tokenizer: feature.TokenizerWords} // char n-grams have no other
	c := Config{Sketch: sample.Config{Algorithm: sketch.CWS, Features: o}}
	c.EnsureDefaults()
	raw, err := encodeStored(c, sketch.Header{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeStored(raw)
	if err != nil || r.cfg.Sketch.Features != o || r.cfg.Sketch.Algorithm != sketch.CWS {
		t.Fatalf("round trip: %+v %v", r.cfg.Sketch.Features, err)
	}
}
