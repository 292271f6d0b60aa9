package feature

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzNormalizeHTML feeds arbitrary bytes to the HTML normalizer (and the
// whole extractor) under several option sets: no panic, deterministic
// output, valid UTF-8 normalized text, and output bounded by the input size.
// Seed corpus in testdata/fuzz/FuzzNormalizeHTML. Run with
//
//	go test ./feature -run '^$' -fuzz FuzzNormalizeHTML -fuzztime 60s
func FuzzNormalizeHTML(f *testing.F) {
	for _, s := range []string{
		"<html><head><title>a &amp; b</title></head><body><h1>x</h1><p>y</p></body></html>",
		"<script>alert(1)</script><style>p{}</style>text",
		"<noscript><p>hidden</p></noscript><template>t</template>visible",
		"<!-- unterminated comment",
		"<title>unterminated title",
		"<h1><h2></h1>nested</h2>",
		"&#x10FFFF;&#0;&nGt;&amp&lt",
		"\xff\xfe<b>\x00bad</b>",
		"<script/>after",
		"ﬁ ｆｕｌｌ ﷺ",
	} {
		f.Add([]byte(s))
	}
	opts := []Options{
		{Format: FormatHTML},
		{Format: FormatHTML, Norm: NormNFKC, Case: CaseFold, Punct: PunctKeep, Weighting: WeightCount, Wrap: true},
		{Format: FormatHTML, Unit: UnitChar, K: 3},
		{},
	}
	exs := make([]*Extractor, len(opts))
	for i, o := range opts {
		e, err := New(o)
		if err != nil {
			f.Fatal(err)
		}
		exs[i] = e
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, e := range exs {
			text := e.Normalize(nil, doc)
			if !utf8.Valid(text) {
				t.Fatalf("%v: normalized text is not UTF-8: %q", e.o, text)
			}
			// NFKC expands a rune at most 18-fold (U+FDFA), each output
			// rune at most 4 bytes from at least 1 input byte, plus a
			// separating space: 64 bytes per input byte bounds it all.
			if len(text) > 64*len(doc)+16 {
				t.Fatalf("%v: %d bytes of text from %d input bytes", e.o, len(text), len(doc))
			}
			fs := e.Extract(nil, doc)
			if n := utf8.RuneCount(text); len(fs) > n+1 || e.Occurrences() > n+1 {
				t.Fatalf("%v: %d features, %d occurrences from %d runes of text", e.o, len(fs), e.Occurrences(), n)
			}
			again := e.Extract(nil, doc)
			if len(again) != len(fs) {
				t.Fatalf("%v: not deterministic", e.o)
			}
			for i := range fs {
				if fs[i] != again[i] || !(fs[i].Weight > 0) {
					t.Fatalf("%v: feature %d: %v then %v", e.o, i, fs[i], again[i])
				}
			}
			if !bytes.Equal(e.Normalize(nil, doc), text) {
				t.Fatalf("%v: Normalize not deterministic", e.o)
			}
		}
	})
}

// FuzzParseIDF feeds arbitrary bytes to the IDF table decoder: it never
// panics, and whatever it accepts re-encodes to exactly the same bytes (the
// format has one encoding per table).
//
//	go test ./feature -run '^$' -fuzz FuzzParseIDF -fuzztime 30s
func FuzzParseIDF(f *testing.F) {
	o := Options{K: 2}
	e, err := New(o)
	if err != nil {
		f.Fatal(err)
	}
	b := NewIDFBuilder(o.IDHash())
	for _, d := range []string{"a b c", "a b d", "x y"} {
		b.Add(e.Extract(nil, []byte(d)))
	}
	enc, _ := b.Table(0).MarshalBinary()
	f.Add(enc)
	empty, _ := NewIDFBuilder(0).Table(0).MarshalBinary()
	f.Add(empty)
	f.Add([]byte("ndidf\x00\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ParseIDF(data)
		if err != nil {
			return
		}
		again, _ := tab.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted %x but re-encodes to %x", data, again)
		}
		for i, id := range tab.ids {
			if tab.DF(id) != tab.dfs[i] || tab.dfs[i] == 0 || uint64(tab.dfs[i]) > tab.Docs() {
				t.Fatalf("entry %d inconsistent", i)
			}
		}
	})
}
