package feature_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"slices"

	"github.com/neardup/neardup/feature"
)

func ExampleNew() {
	e, err := feature.New(feature.Options{K: 3, Wrap: true})
	if err != nil {
		log.Fatal(err)
	}
	fs := e.Extract(nil, []byte("Now is the time for all good men"))
	fmt.Println(len(fs), "shingles for 8 words (wrap-around)")
	// Output: 8 shingles for 8 words (wrap-around)
}

func ExampleExtractor_Extract() {
	e, _ := feature.New(feature.Options{K: 3})
	var fs []feature.Feature
	fs = e.Extract(fs[:0], []byte("Now is the time for all good men"))
	for i, f := range fs {
		fmt.Printf("%q weight %g\n", e.AppendText(nil, i), f.Weight)
	}
	// Output:
	// "now is the" weight 1
	// "is the time" weight 1
	// "the time for" weight 1
	// "time for all" weight 1
	// "for all good" weight 1
	// "all good men" weight 1
}

func ExampleExtractor_Extract_html() {
	page := []byte(`<!DOCTYPE html><html><head><title>Release notes</title>
<script>track()</script></head><body><h1>Version 2</h1><p>Faster <b>and</b> smaller.</p></body></html>`)
	e, _ := feature.New(feature.Options{Unit: feature.UnitWord, Weighting: feature.WeightCount})
	for i, f := range e.Extract(nil, page) {
		fmt.Printf("%s:%g ", e.AppendText(nil, i), f.Weight)
	}
	fmt.Println()
	// Output: release:2 notes:2 version:1.5 2:1.5 faster:1 and:1 smaller:1
}

func ExampleExtractor_Normalize() {
	e, _ := feature.New(feature.Options{Norm: feature.NormNFKC, Case: feature.CaseFold})
	fmt.Printf("%s\n", e.Normalize(nil, []byte("The ﬁrst STRASSE — “quoted”, ＦＵＬＬ-width!")))
	// Output: the first strasse quoted full width
}

func ExampleExtractor_AppendText() {
	e, _ := feature.New(feature.Options{Unit: feature.UnitChar, K: 4})
	e.Extract(nil, []byte("Hello"))
	fmt.Printf("%s\n", e.AppendText(nil, 1))
	// Output: ello
}

func ExampleExtractor_Occurrences() {
	e, _ := feature.New(feature.Options{K: 2, Weighting: feature.WeightCount})
	fs := e.Extract(nil, []byte("to be or not to be"))
	fmt.Println(e.Occurrences(), "shingles,", len(fs), "distinct")
	// Output: 5 shingles, 4 distinct
}

func ExampleOptions_Validate() {
	err := feature.Options{K: 100, Weighting: feature.WeightTFIDF}.Validate()
	fmt.Println(errors.Is(err, feature.ErrOptions))
	fmt.Println(err)
	// Output:
	// true
	// feature: invalid options: shingle size K=100 not in 1..64
	// feature: invalid options: tf-idf weighting needs an IDFTable
}

func ExampleOptions_String() {
	fmt.Println(feature.Options{})
	fmt.Println(feature.Options{Unit: feature.UnitWord, Weighting: feature.WeightCount, Norm: feature.NormNFKC})
	// Output:
	// shingle k=5 nowrap format=auto case=lower norm=none digits=keep punct=drop seed=0 weight=set tokenizer=unicode-v1
	// word k=1 nowrap format=auto case=lower norm=nfkc digits=keep punct=drop seed=0 weight=count title=2 heading=1.5 tokenizer=unicode-v1
}

func ExampleOptions_ConfigHash() {
	// Stable across runs and machines; sketch headers record it.
	// The words-v1 tokenizer keeps the hashes of the configurations
	// recorded before tokenizers were named.
	fmt.Printf("%016x\n", feature.Options{}.ConfigHash())
	fmt.Printf("%016x\n", feature.Options{}.IDHash())
	fmt.Printf("%016x\n", feature.Options{Tokenizer: feature.TokenizerWords}.ConfigHash())
	// Output:
	// 514465f727aa564f
	// e2326e8b8c0df4ea
	// 60df4eda0ebc6487
}

func ExampleParseTokenizer() {
	t, err := feature.ParseTokenizer("words-v1")
	fmt.Println(t == feature.TokenizerWords, err)
	e, _ := feature.New(feature.Options{Unit: feature.UnitWord}) // the default tokenizer, unicode-v1
	fmt.Printf("%s\n", e.Normalize(nil, []byte("Near-duplicate 文書の検出 ภาษาไทย")))
	w, _ := feature.New(feature.Options{Unit: feature.UnitWord, Tokenizer: t})
	fmt.Printf("%s\n", w.Normalize(nil, []byte("Near-duplicate 文書の検出 ภาษาไทย")))
	// Output:
	// true <nil>
	// near duplicate 文 書 の 検 出 ภ า ษ า ไ ท ย
	// near duplicate 文書の検出 ภาษาไทย
}

func ExampleParseWeighting() {
	w, err := feature.ParseWeighting("tfidf")
	fmt.Println(w == feature.WeightTFIDF, err)
	_, err = feature.ParseWeighting("bm25")
	fmt.Println(err)
	// Output:
	// true <nil>
	// feature: invalid options: unknown weighting "bm25" (want one of set, count, tfidf)
}

func ExampleNewIDFBuilder() {
	o := feature.Options{K: 2}
	e, _ := feature.New(o)
	b := feature.NewIDFBuilder(o.IDHash())
	for _, doc := range []string{"home about contact the cat sat", "home about contact a dog ran", "home about contact rain fell"} {
		b.Add(e.Extract(nil, []byte(doc)))
	}
	tab := b.Table(0)

	o.Weighting, o.IDFTable = feature.WeightTFIDF, tab
	et, _ := feature.New(o)
	for i, f := range et.Extract(nil, []byte("home about contact the cat sat")) {
		fmt.Printf("%-13q %.3f\n", et.AppendText(nil, i), f.Weight)
	}
	// Output:
	// "home about"  1.000
	// "about contact" 1.000
	// "contact the" 1.693
	// "the cat"     1.693
	// "cat sat"     1.693
}

func ExampleReadIDF() {
	o := feature.Options{}
	b := feature.NewIDFBuilder(o.IDHash())
	e, _ := feature.New(o)
	b.Add(e.Extract(nil, []byte("one two three four five six")))
	var file bytes.Buffer
	if _, err := b.Table(0).WriteTo(&file); err != nil {
		log.Fatal(err)
	}
	tab, err := feature.ReadIDF(&file)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tab.Docs(), "document,", tab.Len(), "features")
	// Output: 1 document, 2 features
}

func ExampleParseIDF() {
	_, err := feature.ParseIDF([]byte("ndidf\x00\x01 not really a table"))
	var fe *feature.IDFFormatError
	fmt.Println(errors.As(err, &fe), errors.Is(err, feature.ErrIDFFormat))
	// Output: true true
}

func ExampleIDFTable_DF() {
	o := feature.Options{Unit: feature.UnitWord}
	e, _ := feature.New(o)
	b := feature.NewIDFBuilder(o.IDHash())
	b.Add(e.Extract(nil, []byte("red green")))
	b.Add(e.Extract(nil, []byte("green blue")))
	tab := b.Table(0)
	green := e.Extract(nil, []byte("green"))[0].ID
	fmt.Println(tab.DF(green), "of", tab.Docs())
	// Output: 2 of 2
}

func ExampleParseUnit() {
	// The Parse functions read the names Options.String prints, for flags.
	u, _ := feature.ParseUnit("char")
	c, _ := feature.ParseCase("fold")
	d, _ := feature.ParseDigits("fold")
	o := feature.Options{Unit: u, K: 4, Case: c, Digits: d}
	fmt.Println(o)
	// Output: char k=4 nowrap format=auto case=fold norm=none digits=fold punct=drop seed=0 weight=set
}

func ExampleIDFTable_AppendBinary() {
	o := feature.Options{Unit: feature.UnitWord}
	e, _ := feature.New(o)
	b := feature.NewIDFBuilder(o.IDHash())
	b.Add(e.Extract(nil, []byte("alpha beta gamma")))
	tab := b.Table(0)
	enc, _ := tab.AppendBinary(nil)
	back, err := feature.ParseIDF(enc)
	fmt.Println(err, back.Len(), back.Checksum() == tab.Checksum(), back.FeatureConfig() == o.IDHash())
	// Output: <nil> 3 true true
}

func ExampleExtractor_Options() {
	e, _ := feature.New(feature.Options{})
	o := e.Options()
	fmt.Println(o.K, o.TitleBoost, o.HeadingBoost)
	// Output: 5 2 1.5
}

func ExampleIDFBuilder_Add() {
	// Each document counts once per distinct id, whatever the weights.
	b := feature.NewIDFBuilder(feature.Options{}.IDHash())
	b.Add([]feature.Feature{{ID: 1, Weight: 3}, {ID: 2, Weight: 1}, {ID: 1, Weight: 1}})
	b.Add([]feature.Feature{{ID: 1, Weight: 1}})
	tab := b.Table(0)
	fmt.Println(b.Docs(), tab.DF(1), tab.DF(2), tab.DF(3))
	// Output: 2 2 1 0
}

func ExampleIDFBuilder_Table() {
	b := feature.NewIDFBuilder(feature.Options{}.IDHash())
	b.Add([]feature.Feature{{ID: 1}, {ID: 2}})
	b.Add([]feature.Feature{{ID: 1}, {ID: 3}})
	all, common := b.Table(0), b.Table(2) // minDF 2 drops features seen once
	fmt.Println(all.Len(), common.Len(), common.Docs(), common.DF(2))
	// Output: 3 1 2 0
}

func ExampleIDFTable_MarshalBinary() {
	o := feature.Options{}
	b := feature.NewIDFBuilder(o.IDHash())
	b.Add([]feature.Feature{{ID: 10}, {ID: 20}})
	tab := b.Table(0)
	enc, _ := tab.MarshalBinary()
	back, err := feature.ParseIDF(enc)
	fmt.Println(err, back.Docs(), back.Len(), back.FeatureConfig() == o.IDHash())
	enc[len(enc)-1] ^= 1 // damage the checksum
	_, err = feature.ParseIDF(enc)
	fmt.Println(errors.Is(err, feature.ErrIDFFormat))
	// Output:
	// <nil> 1 2 true
	// true
}

func ExampleOptions_IDHash() {
	// Format and weighting do not change feature ids; case folding does.
	base := feature.Options{}
	html := feature.Options{Format: feature.FormatHTML, Weighting: feature.WeightCount}
	keep := feature.Options{Case: feature.CaseKeep}
	fmt.Println(base.IDHash() == html.IDHash(), base.ConfigHash() == html.ConfigHash(), base.IDHash() == keep.IDHash())
	// Output: true false false
}

func ExampleParseFormat() {
	f, err := feature.ParseFormat("html")
	fmt.Println(f == feature.FormatHTML, err)
	_, err = feature.ParseFormat("pdf")
	fmt.Println(errors.Is(err, feature.ErrOptions))
	// Output:
	// true <nil>
	// true
}

func ExampleParseNorm() {
	n, _ := feature.ParseNorm("nfkc")
	p, _ := feature.ParsePunct("keep")
	fmt.Println(feature.Options{Unit: feature.UnitWord, Norm: n, Punct: p})
	// Output: word k=1 nowrap format=auto case=lower norm=nfkc digits=keep punct=keep seed=0 weight=set tokenizer=unicode-v1
}

// Kernels names the route Extract takes on this machine; every route gives
// the same features.
func ExampleKernels() {
	k := feature.Kernels()
	fmt.Println(slices.Contains([]string{"avx512", "avx2", "pclmulqdq", "go"}, k))
	// Output: true
}
