package feature

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"

	"github.com/neardup/neardup/feature/featuretest"
	"github.com/neardup/neardup/internal/rng"
)

// checkTokens compares the extractor's normalized text (tokens joined by
// spaces) and its features with the reference tokens of doc: the features
// must be exactly those of an ASCII document whose tokens are hashed the
// same way, which the word-unit ids check (a word's id is its token's).
func checkTokens(t *testing.T, e *Extractor, doc string) {
	t.Helper()
	want := featuretest.UnicodeTokens(doc)
	got := string(e.Normalize(nil, []byte(doc)))
	if got != strings.Join(want, " ") {
		t.Fatalf("tokens of %q:\n got %q\nwant %q", doc, got, strings.Join(want, " "))
	}
}

func TestTokenizerReference(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{
		"近似重复文档的检测。Near-duplicate detection!",
		"重複した文書を検出します。カタカナ語ー、ｶﾀｶﾅ",
		"การตรวจหาเอกสารที่ซ้ำกัน ทำ",
		"ພາສາລາວ ຄຳ ភាសាខ្មែរ မြန်မာစာ",
		"한국어 문서 Ελληνικά русский café cafe\u0301 हिन्दी",
		"abc漢字def ４２ 2024年 x\u0301",
		"\u0301leading mark, 〇〆々",
	} {
		checkTokens(t, e, doc)
	}
	// On the multilingual fixture, too.
	for _, d := range loadFixture(t) {
		checkTokens(t, e, d.Text)
	}
}

// TestTokenizerGraphemes checks the rule's Thai, Lao, Khmer and Myanmar
// tokens against the grapheme clusters of UAX #29 (github.com/rivo/uniseg)
// on the fixture's real text: every token of those scripts is one
// cluster.
func TestTokenizerGraphemes(t *testing.T) {
	sea := func(s string) bool {
		r, _ := utf8.DecodeRuneInString(s)
		return unicode.In(r, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
	}
	n := 0
	for _, d := range loadFixture(t) {
		for _, tok := range featuretest.UnicodeTokens(d.Text) {
			if !sea(tok) {
				continue
			}
			n++
			if c, rest, _, _ := uniseg.FirstGraphemeClusterInString(tok, -1); c != tok {
				// A cluster may hold more than one of our tokens only at
				// a spacing letter UAX #29 attaches; report it.
				t.Errorf("%s: token %q is not one grapheme cluster (%q + %q)", d.ID, tok, c, rest)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Thai, Lao, Khmer or Myanmar text in the fixture")
	}
}

// FuzzTokenizer compares the unicode-v1 tokenizer with the reference on
// arbitrary (mostly random Unicode) text. Run with
//
//	go test ./feature -run '^$' -fuzz FuzzTokenizer -fuzztime 60s
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{
		"近似重复文档的检测。Near-duplicate", "カタカナ語ー", "การตรวจหาเอกสารที่ซ้ำกัน", "ຄຳ ភាសាខ្មែរ မြန်မာ",
		"cafe\u0301 x\u0301y", "abc漢def", "\xff\xfe漢", "ꩠꩡ 𠀀𠀁 ㇰ",
	} {
		f.Add(s)
	}
	e, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	w, err := New(Options{Unit: UnitWord})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if SniffHTML([]byte(doc)) {
			return // the reference reads plain text
		}
		checkTokens(t, e, doc)
		// Every word id is its token's: equal tokens, equal ids.
		ids := map[string]uint64{}
		fs := w.Extract(nil, []byte(doc))
		for i, f := range fs {
			txt := string(w.AppendText(nil, i))
			if old, ok := ids[txt]; ok && old != f.ID {
				t.Fatalf("token %q has two ids", txt)
			}
			ids[txt] = f.ID
		}
		if len(ids) != len(fs) {
			t.Fatalf("%d features for %d distinct tokens", len(fs), len(ids))
		}
	})
}

// fixtureDoc is one document of testdata/multilingual.jsonl.
type fixtureDoc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

func loadFixture(t testing.TB) []fixtureDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "multilingual", "docs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fixtureDoc
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var d fixtureDoc
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// TestRuneClass checks runeClass against package unicode for every rune
// of the Basic Multilingual Plane above ASCII: each class other than
// rcSlow must be the general switch's answer, and rcSlow must be kept for
// the runes that need it (numbers, letters that a case range may lower,
// SARA AM, U+FFFD).
func TestRuneClass(t *testing.T) {
	cased := func(r rune) bool {
		for _, cr := range unicode.CaseRanges {
			if cr.Lo <= uint32(r) && uint32(r) <= cr.Hi && cr.Delta[unicode.LowerCase] != 0 {
				return true
			}
		}
		return false
	}
	counts := map[uint8]int{}
	for r := rune(0x80); r < 1<<16; r++ {
		c := runeClass[r]
		counts[c]++
		letter, number := unicode.IsLetter(r), unicode.IsNumber(r)
		mark, punct := unicode.In(r, unicode.M), unicode.IsPunct(r) || unicode.IsSymbol(r)
		var ok bool
		switch c {
		case rcAlone:
			ok = letter && segmented(r) && unicode.ToLower(r) == r
		case rcWord:
			ok = letter && !segmented(r) && unicode.ToLower(r) == r
		case rcMark:
			ok = mark
		case rcPunct:
			ok = punct && r != utf8.RuneError
		case rcDelim:
			ok = !letter && !number && !mark && !punct
		case rcSlow:
			ok = number || (letter && cased(r)) || r == 0x0E33 || r == 0x0EB3 || r == utf8.RuneError
		}
		if !ok {
			t.Fatalf("%U: class %d is wrong (letter %v, number %v, mark %v, punct %v, segmented %v, lower %U)",
				r, c, letter, number, mark, punct, segmented(r), unicode.ToLower(r))
		}
	}
	if counts[rcAlone] < 20000 || counts[rcWord] < 10000 {
		t.Errorf("classes: %v", counts)
	}
}

// TestTokenizerEveryRune tokenizes every rune of the Basic Multilingual
// Plane after an ASCII letter, after a Han letter and after a Thai letter,
// and before each of them, and compares with the reference.
func TestTokenizerEveryRune(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r := rune(0x80); r < 1<<16; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		x := string(r)
		checkTokens(t, e, "a"+x+"漢"+x+"ก"+x+x+"z "+x+"́"+x+"กำ"+x)
	}
}

// hash3 is tokHasher.hash of three bytes.
func TestHash3(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := e.n.hash
	s := rng.New(3)
	for i := 0; i < 100000; i++ {
		v := s.Uint64() & 0xFFFFFF
		b := []byte{byte(v), byte(v >> 8), byte(v >> 16)}
		if got, want := h.hash3(v), h.hash(b); got != want {
			t.Fatalf("hash3(%x) = %x, want %x", b, got, want)
		}
	}
}

// TestRunsEqualGeneral checks tokenizeFrom's loop over runs of segmented
// letters against its general switch (useRuns off), for options the
// reference does not cover (punctuation kept, digits folded or dropped,
// case kept, HTML zones with boosts, words-v1), on random text of Han,
// kana, Thai, CJK and ASCII punctuation, marks, digits and Latin words:
// the same normalized text, features, occurrences and feature texts.
func TestRunsEqualGeneral(t *testing.T) {
	alphabet := []string{"漢", "字", "か", "ナ", "ー", "、", "。", "「", "」", "ก", "\u0e33", "\u0e48", "\u0301",
		"４", "2", "〇", "x", "Ab", " ", "\n", ".", ",", "-", "ä", "Ω", "한", "\u3000", "😀", "\xff", "𠀀"}
	s := rng.New(rng.Key(27, 1))
	doc := func() []byte {
		var b []byte
		for range 1 + s.Intn(60) {
			b = append(b, alphabet[s.Intn(uint64(len(alphabet)))]...)
		}
		return b
	}
	for _, o := range []Options{{}, {Punct: PunctKeep}, {Digits: DigitsFold}, {Digits: DigitsDrop, K: 2},
		{Case: CaseKeep, Unit: UnitWord}, {Weighting: WeightCount, K: 3}, {Tokenizer: TokenizerWords},
		{Norm: NormNFKC, Case: CaseFold, Wrap: true}} {
		fast, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		slow, _ := New(o)
		for trial := 0; trial < 300; trial++ {
			d := doc()
			if trial%4 == 0 {
				d = fmt.Appendf(nil, "<html><title>%s</title><h1>%s</h1><p>%s</p></html>", doc(), doc(), d)
			}
			useRuns = false
			wantText := string(slow.Normalize(nil, d))
			want := slow.Extract(nil, d)
			useRuns = true
			gotText := string(fast.Normalize(nil, d))
			got := fast.Extract(nil, d)
			name := fmt.Sprintf("%+v %q", o, d)
			if gotText != wantText {
				t.Fatalf("%s: normalized %q, general switch %q", name, gotText, wantText)
			}
			if !slices.Equal(got, want) || fast.Occurrences() != slow.Occurrences() {
				t.Fatalf("%s: features %v, general switch %v", name, got, want)
			}
			for i := range got {
				if g, w := fast.AppendText(nil, i), slow.AppendText(nil, i); !bytes.Equal(g, w) {
					t.Fatalf("%s: text of feature %d is %q, general switch %q", name, i, g, w)
				}
			}
		}
	}
}
