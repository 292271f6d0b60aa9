package feature

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestWordFlagsMatchTable checks the SWAR classifier against the
// normalizer's byte table for every ASCII byte at every position of a
// chunk, with digits as word bytes and without.
func TestWordFlagsMatchTable(t *testing.T) {
	for _, d := range []Digits{DigitsKeep, DigitsDrop, DigitsFold} {
		e, err := New(Options{Digits: d})
		if err != nil {
			t.Fatal(err)
		}
		n, a := e.n, e.fast
		for c := 0; c < 0x80; c++ {
			for pos := 0; pos < 8; pos++ {
				// The byte among neighbours of every kind.
				for _, fill := range []byte{0, ' ', 'a', 'Z', '9', '_', 0x7f} {
					x := bytes.Repeat([]byte{fill}, 8)
					x[pos] = byte(c)
					var v uint64
					for i := 7; i >= 0; i-- {
						v = v<<8 | uint64(x[i])
					}
					got := wordFlags(v, a.digits)
					for i := 0; i < 8; i++ {
						want := n.word[x[i]] != 0
						if (got>>(8*i+7))&1 == 1 != want || got>>(8*i)&0x7f != 0 {
							t.Fatalf("digits %v, chunk %q: flags %016x wrong at byte %d", d, x, got, i)
						}
					}
				}
			}
		}
	}
}

func TestTranspose8(t *testing.T) {
	s := rng.New(3)
	for trial := 0; trial < 1000; trial++ {
		x := s.Uint64()
		y := transpose8(x)
		for i := 0; i < 8; i++ {
			for j := 0; j < 8; j++ {
				if x>>(8*i+j)&1 != y>>(8*j+i)&1 {
					t.Fatalf("transpose8(%016x) = %016x: bit %d,%d", x, y, i, j)
				}
			}
		}
	}
}

// asciiDoc makes a random ASCII document that exercises the ASCII path:
// words of 1 to 40 bytes (so every length class: 1-8, 9-16, longer), of
// letters in both cases, digits and '_', separated by runs of white
// space, punctuation, control bytes and NUL, with a length that often
// falls on or next to a multiple of 64.
func asciiDoc(s *rng.Stream) []byte {
	const wordBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
	const delims = " \t\n\r,.;:!?-()[]{}<>\"'/\\@#$%^&*+=|~`\x00\x01\x1f\x7f"
	var b []byte
	words := int(s.Intn(300))
	if s.Intn(4) == 0 {
		words = int(s.Intn(8)) // short documents: fewer words than K
	}
	vocab := []string{"the", "of", "a", "Licence", "permission", "merchantability", "x_1", "2024"}
	for i := 0; i < words; i++ {
		if s.Intn(3) == 0 {
			b = append(b, vocab[s.Intn(uint64(len(vocab)))]...) // repeats make duplicate shingles
		} else {
			n := 1 + int(s.Intn(12))
			if s.Intn(8) == 0 {
				n = 1 + int(s.Intn(40))
			}
			for j := 0; j < n; j++ {
				b = append(b, wordBytes[s.Intn(uint64(len(wordBytes)))])
			}
		}
		for j := 1 + int(s.Intn(3)); j > 0; j-- {
			b = append(b, delims[s.Intn(uint64(len(delims)))])
		}
	}
	if s.Intn(2) == 0 && len(b) > 0 {
		// Trim to a multiple of 64 (or one off), often ending in a word.
		n := len(b) &^ 63
		if n == 0 {
			n = len(b)
		}
		b = b[:max(1, n-1+int(s.Intn(3)))%(len(b)+1)]
	}
	if s.Intn(3) == 0 {
		b = bytes.TrimLeft(b, delims) // starts with a word
	}
	return b
}

// TestASCIIPathEqualsGeneral is the oracle test of the one-pass ASCII
// route: for random ASCII documents and every option it handles, Extract
// gives exactly the features (ids, weights, order), occurrences and
// feature texts of the general path (tokenize, hashTokens, emit), on one
// extractor that alternates documents of both kinds.
func TestASCIIPathEqualsGeneral(t *testing.T) {
	s := rng.New(rng.Key(14, 1))
	html := []string{"<html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p></body></html>"}
	var opts []Options
	for _, k := range []int{1, 2, 3, 5, 8, 64} {
		for _, wrap := range []bool{false, true} {
			opts = append(opts, Options{K: k, Wrap: wrap})
		}
	}
	for _, w := range []Weighting{WeightCount, WeightTFIDF} {
		o := Options{Weighting: w, K: 3}
		if w == WeightTFIDF {
			o.IDFTable = NewIDFBuilder(o.IDHash()).Table(0)
		}
		opts = append(opts, o)
	}
	for _, c := range []Case{CaseFold, CaseKeep} {
		opts = append(opts, Options{Case: c})
	}
	for _, d := range []Digits{DigitsDrop, DigitsFold} {
		opts = append(opts, Options{Digits: d, Wrap: true})
	}
	opts = append(opts, Options{Unit: UnitWord, Weighting: WeightCount}, Options{Format: FormatText, Seed: 9},
		Options{Norm: NormNFKC, Case: CaseFold, K: 4})
	trials := 150
	if testing.Short() {
		trials = 30
	}
	for _, o := range opts {
		fast, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if fast.fast == nil {
			t.Fatalf("%v: no ASCII path", o)
		}
		slow, _ := New(o)
		slow.fast = nil
		for trial := 0; trial < trials; trial++ {
			doc := asciiDoc(&s)
			switch s.Intn(8) {
			case 0:
				doc = fmt.Appendf(nil, html[0], asciiDoc(&s), asciiDoc(&s), doc)
			case 1:
				doc = append(doc, "Ünïcode straße"...) // the general path
			case 2:
				doc = append(doc, " 近似重复文档的检测。検出します、ภาษาไทย"...) // the general path's rune classes
			}
			want := slow.Extract([]Feature{{ID: 1, Weight: 7}}, doc)
			got := fast.Extract([]Feature{{ID: 1, Weight: 7}}, doc)
			name := fmt.Sprintf("%v: %q", o, doc)
			if len(got) != len(want) {
				t.Fatalf("%s: %d features, general path %d", name, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: feature %d is %v, general path %v", name, i, got[i], want[i])
				}
			}
			if fast.Occurrences() != slow.Occurrences() {
				t.Fatalf("%s: %d occurrences, general path %d", name, fast.Occurrences(), slow.Occurrences())
			}
			for i := 0; i < len(got)-1; i++ {
				if g, w := fast.AppendText(nil, i), slow.AppendText(nil, i); !bytes.Equal(g, w) {
					t.Fatalf("%s: text of feature %d is %q, general path %q", name, i, g, w)
				}
			}
		}
	}
}

// TestASCIIPathLongWords checks words around the table's length limits
// (8, 16 bytes) and far beyond, alone and in shingles.
func TestASCIIPathLongWords(t *testing.T) {
	fast, _ := New(Options{K: 2})
	slow, _ := New(Options{K: 2})
	slow.fast = nil
	for n := 1; n <= 300; n++ {
		w := strings.Repeat("Ab9_", n)[:n]
		for _, doc := range []string{w, "x " + w, w + " y z", w + " " + w + " " + w} {
			got := fast.Extract(nil, []byte(doc))
			want := slow.Extract(nil, []byte(doc))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%q: %v, general path %v", doc, got, want)
			}
		}
	}
}

// FuzzASCIIPath checks the ASCII route against the general path on
// arbitrary bytes (non-ASCII input takes the general path on both sides),
// for a few option sets. Run with
//
//	go test ./feature -run '^$' -fuzz FuzzASCIIPath -fuzztime 60s
func FuzzASCIIPath(f *testing.F) {
	for _, s := range []string{"", "a", "Hello, World!", "x_1 2024 merchantability\x00\x7f", strings.Repeat("ab ", 30),
		"<html><title>t</title><p>a b c</p></html>", "supercalifragilisticexpialidocious is a long word"} {
		f.Add([]byte(s))
	}
	opts := []Options{{}, {K: 3, Wrap: true, Weighting: WeightCount}, {Unit: UnitWord, Digits: DigitsFold, Case: CaseKeep}}
	var fast, slow []*Extractor
	for _, o := range opts {
		a, err := New(o)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := New(o)
		b.fast = nil
		fast, slow = append(fast, a), append(slow, b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for i := range fast {
			got, want := fast[i].Extract(nil, doc), slow[i].Extract(nil, doc)
			if fmt.Sprint(got) != fmt.Sprint(want) || fast[i].Occurrences() != slow[i].Occurrences() {
				t.Fatalf("%v %q: %v (%d occurrences), general path %v (%d)", opts[i], doc, got, fast[i].Occurrences(), want, slow[i].Occurrences())
			}
			if len(got) > 0 {
				if g, w := fast[i].AppendText(nil, len(got)-1), slow[i].AppendText(nil, len(want)-1); !bytes.Equal(g, w) {
					t.Fatalf("%v %q: last feature's text %q, general path %q", opts[i], doc, g, w)
				}
			}
		}
	})
}
