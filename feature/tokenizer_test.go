package feature

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// refUnicodeTokens is the unicode-v1 tokenizer written straight from its rule
// (Options.Tokenizer), rune by rune, at the default options (lower case,
// digits kept, punctuation dropped), as the test's independent reference:
// a letter or number of Han, Hiragana, Katakana, Thai, Lao, Khmer or
// Myanmar starts a token of its own; any other letter, number or '_'
// continues a token of such runes or starts one; a combining mark (or
// SARA AM, U+0E33 and U+0EB3) continues the token before it; everything
// else ends the token.
func refUnicodeTokens(s string) []string {
	var toks []string
	var cur []rune
	alone := false
	flush := func() {
		if len(cur) > 0 {
			toks = append(toks, string(cur))
		}
		cur, alone = nil, false
	}
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			flush()
		case len(cur) > 0 && (unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) || r == 'ำ' || r == 'ຳ'):
			cur = append(cur, r)
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) &&
			(unicode.IsLetter(r) || unicode.IsNumber(r)):
			flush()
			cur, alone = append(cur, unicode.ToLower(r)), true
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_':
			if alone {
				flush()
			}
			cur = append(cur, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return toks
}

// checkTokens compares the extractor's normalized text (tokens joined by
// spaces) and its features with the reference tokens of doc: the features
// must be exactly those of an ASCII document whose tokens are hashed the
// same way, which the word-unit ids check (a word's id is its token's).
func checkTokens(t *testing.T, e *Extractor, doc string) {
	t.Helper()
	want := refUnicodeTokens(doc)
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
		for _, tok := range refUnicodeTokens(d.Text) {
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

// The ranges of commonCJK are letters of the segmented scripts, without case.
func TestCommonCJK(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if commonCJK(r) && !(unicode.IsLetter(r) && segmented(r) && unicode.ToLower(r) == r) {
			t.Fatalf("%U is in commonCJK's ranges but not a caseless letter of a segmented script", r)
		}
	}
}
