package feature

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/rabin"
)

type licDoc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type licPair struct {
	A       string  `json:"a"`
	B       string  `json:"b"`
	Jaccard float64 `json:"jaccard"`
	Inter   int     `json:"inter"`
	SizeA   int     `json:"size_a"`
	SizeB   int     `json:"size_b"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r interface{ Read([]byte) (int, error) } = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = z
	}
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// idSets extracts the default features of every document as a sorted id
// slice.
func idSets(t *testing.T, docs []licDoc) map[string][]uint64 {
	t.Helper()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	sets := make(map[string][]uint64, len(docs))
	var fs []Feature
	for _, d := range docs {
		fs = e.Extract(fs[:0], []byte(d.Text))
		ids := make([]uint64, len(fs))
		for i, f := range fs {
			if f.Weight != 1 {
				t.Fatalf("%s: set weight %v", d.ID, f.Weight)
			}
			ids[i] = f.ID
		}
		slices.Sort(ids)
		if len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Fatalf("%s: duplicate ids in a set", d.ID)
		}
		sets[d.ID] = ids
	}
	return sets
}

func interSize(a, b []uint64) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// checkGroundTruth compares exact Jaccard of our id sets with the corpus's
// listed pairs (sizes and intersections exactly, Jaccard to 1e-6), and
// checks that every unlisted pair is below the listing threshold 0.5.
func checkGroundTruth(t *testing.T, docs []licDoc, pairs []licPair) {
	sets := idSets(t, docs)
	listed := make(map[[2]string]bool, len(pairs))
	for _, p := range pairs {
		a, b := sets[p.A], sets[p.B]
		if a == nil || b == nil {
			t.Fatalf("pair %s/%s: document missing", p.A, p.B)
		}
		in := interSize(a, b)
		j := float64(in) / float64(len(a)+len(b)-in)
		if len(a) != p.SizeA || len(b) != p.SizeB || in != p.Inter || math.Abs(j-p.Jaccard) > 1e-6 {
			t.Errorf("%s vs %s: sizes %d,%d inter %d J=%.6f; ground truth %d,%d inter %d J=%.6f",
				p.A, p.B, len(a), len(b), in, j, p.SizeA, p.SizeB, p.Inter, p.Jaccard)
		}
		listed[[2]string{p.A, p.B}] = true
		listed[[2]string{p.B, p.A}] = true
	}
	for x := range docs {
		for y := x + 1; y < len(docs); y++ {
			a, b := sets[docs[x].ID], sets[docs[y].ID]
			in := interSize(a, b)
			j := float64(in) / float64(len(a)+len(b)-in)
			if j >= 0.5 && !listed[[2]string{docs[x].ID, docs[y].ID}] {
				t.Errorf("%s vs %s: J=%.6f >= 0.5 but not in the ground truth", docs[x].ID, docs[y].ID, j)
			}
		}
	}
}

// TestLicencesGroundTruth checks that the default options reproduce the
// ground-truth 5-shingle sets of the licences corpus exactly, on the slice
// copied into testdata/licenses.
func TestLicencesGroundTruth(t *testing.T) {
	docs := readJSONL[licDoc](t, "testdata/licenses/docs.jsonl")
	pairs := readJSONL[licPair](t, "testdata/licenses/pairs.jsonl")
	if len(docs) < 10 || len(pairs) < 20 {
		t.Fatalf("testdata too small: %d docs, %d pairs", len(docs), len(pairs))
	}
	checkGroundTruth(t, docs, pairs)
}

// TestLicencesFullCorpus runs the same check on the whole sample corpus the
// repository ships in testdata/licenses (skipped if absent or in -short).
func TestLicencesFullCorpus(t *testing.T) {
	dir := filepath.Join("..", "testdata", "licenses")
	if _, err := os.Stat(filepath.Join(dir, "docs.jsonl.gz")); err != nil || testing.Short() {
		t.Skip("repository sample corpus not available or -short")
	}
	docs := readJSONL[licDoc](t, filepath.Join(dir, "docs.jsonl.gz"))
	pairs := readJSONL[licPair](t, filepath.Join(dir, "pairs.jsonl.gz"))
	checkGroundTruth(t, docs, pairs)
}

// refTokens is a direct, slow reference of the default tokenization: lower
// case, tokens are maximal runs of letters, numbers and '_'.
func refTokens(s string) []string {
	return strings.FieldsFunc(strings.Map(unicode.ToLower, s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_')
	})
}

// refShingles lists the k-word shingles of toks as strings, with or
// without wrap-around, per the book's definition.
func refShingles(toks []string, k int, wrap bool) []string {
	n := len(toks)
	if n == 0 {
		return nil
	}
	if !wrap {
		if n < k {
			return []string{strings.Join(toks, " ")}
		}
		var out []string
		for i := 0; i+k <= n; i++ {
			out = append(out, strings.Join(toks[i:i+k], " "))
		}
		return out
	}
	var out []string
	for i := 0; i < n; i++ {
		w := make([]string, k)
		for j := range w {
			w[j] = toks[(i+j)%n]
		}
		out = append(out, strings.Join(w, " "))
	}
	return out
}

// randomDoc makes a document over a tiny vocabulary (so shingles repeat)
// with mixed case, punctuation, digits and non-ASCII letters.
func randomDoc(s *rng.Stream, words int) string {
	vocab := []string{"a", "B", "cat", "Dog", "é", "Straße", "x_1", "42", "ÆON", "ﬁne"}
	seps := []string{" ", "  ", ", ", ".\n", " -- ", "\t", "!?", "·"}
	var b strings.Builder
	for i := 0; i < words; i++ {
		b.WriteString(vocab[s.Intn(uint64(len(vocab)))])
		b.WriteString(seps[s.Intn(uint64(len(seps)))])
	}
	return b.String()
}

// TestShinglesMatchReference is the oracle test: for random documents and
// every k and wrap mode, the features are in one-to-one correspondence with
// the distinct reference shingle strings (same count, AppendText gives the
// string), and occurrences equal the number of reference shingles.
func TestShinglesMatchReference(t *testing.T) {
	s := rng.New(rng.Key(7, 1))
	for _, wrap := range []bool{false, true} {
		for _, k := range []int{1, 2, 3, 5, 8} {
			e, err := New(Options{K: k, Wrap: wrap})
			if err != nil {
				t.Fatal(err)
			}
			for trial := 0; trial < 60; trial++ {
				doc := randomDoc(&s, int(s.Intn(30)))
				ref := refShingles(refTokens(doc), k, wrap)
				fs := e.Extract(nil, []byte(doc))
				if e.Occurrences() != len(ref) {
					t.Fatalf("k=%d wrap=%v %q: %d occurrences, reference %d", k, wrap, doc, e.Occurrences(), len(ref))
				}
				distinct := map[string]bool{}
				for _, r := range ref {
					distinct[r] = true
				}
				if len(fs) != len(distinct) {
					t.Fatalf("k=%d wrap=%v %q: %d features, %d distinct reference shingles", k, wrap, doc, len(fs), len(distinct))
				}
				for i := range fs {
					txt := string(e.AppendText(nil, i))
					if !distinct[txt] {
						t.Fatalf("k=%d wrap=%v %q: feature text %q is no reference shingle", k, wrap, doc, txt)
					}
					delete(distinct, txt)
				}
			}
		}
	}
}

// TestSlidingEqualsRehash checks the O(1) sliding window against hashing
// each shingle from scratch: the id of a shingle is the fingerprint, with
// the window polynomial, of the concatenated fingerprints of its words with
// the token polynomial.
func TestSlidingEqualsRehash(t *testing.T) {
	e, err := New(Options{Seed: 99, K: 4, Wrap: true})
	if err != nil {
		t.Fatal(err)
	}
	tokT := rabin.New(rabin.RandomPrimitive(rng.Key(99, labelTokenPoly)))
	winT := rabin.New(rabin.RandomPrimitive(rng.Key(99, labelWindowPoly)))
	if tokT.Poly() == winT.Poly() {
		t.Fatal("token and window polynomials must differ (book 2.2)")
	}
	doc := "one two three four five six seven eight nine ten one two three"
	toks := refTokens(doc)
	fs := e.Extract(nil, []byte(doc))
	want := map[uint64]bool{}
	for i := range toks {
		fp := winT.Hash(nil)
		for j := 0; j < 4; j++ {
			fp = winT.ExtendUint64(fp, tokT.Hash([]byte(toks[(i+j)%len(toks)])))
		}
		want[fp] = true
	}
	if len(fs) != len(want) {
		t.Fatalf("%d features, want %d", len(fs), len(want))
	}
	for _, f := range fs {
		if !want[f.ID] {
			t.Fatalf("id %016x is not a rehashed shingle", f.ID)
		}
	}
}

func TestShortDocument(t *testing.T) {
	e, _ := New(Options{})
	fs := e.Extract(nil, []byte("Hello, World!"))
	if len(fs) != 1 || string(e.AppendText(nil, 0)) != "hello world" {
		t.Fatalf("short document: %v %q", fs, e.AppendText(nil, 0))
	}
	if got := e.Extract(nil, []byte(" \n ... ")); len(got) != 0 {
		t.Fatalf("no tokens should give no features, got %v", got)
	}
	// A short document's shingle differs from the same words inside a
	// longer one and from a prefix of them.
	a := e.Extract(nil, []byte("hello world"))
	b := e.Extract(nil, []byte("hello"))
	if a[0].ID == b[0].ID {
		t.Fatal("different short documents share an id")
	}
}

func TestCountWeights(t *testing.T) {
	e, _ := New(Options{K: 2, Weighting: WeightCount})
	fs := e.Extract(nil, []byte("a b a b a b c"))
	// shingles: "a b" x3, "b a" x2, "b c" x1
	want := map[string]float64{"a b": 3, "b a": 2, "b c": 1}
	if len(fs) != 3 {
		t.Fatalf("got %d features", len(fs))
	}
	for i, f := range fs {
		if w := want[string(e.AppendText(nil, i))]; w != f.Weight {
			t.Errorf("%q weight %v, want %v", e.AppendText(nil, i), f.Weight, w)
		}
	}
}

func TestNormalizeOptions(t *testing.T) {
	cases := []struct {
		o        Options
		in, want string
	}{
		{Options{}, "Hello, WORLD! x_y 2024 ½ ﬁne Ⓒ", "hello world x_y 2024 ½ ﬁne"},
		{Options{Norm: NormNFKC}, "ﬁne Ⓒ ＡＢＣ ™", "fine c abc tm"},
		{Options{Case: CaseKeep}, "Hello WORLD", "Hello WORLD"},
		{Options{Case: CaseFold}, "STRASSE straße ΣΑΣ σας", "strasse strasse σασ σασ"},
		{Options{Digits: DigitsDrop}, "v1.2 in 2024 x9y", "v in x y"},
		{Options{Digits: DigitsFold}, "(c) 2023, 2024 ٣", "c 0000 0000 0"},
		{Options{Punct: PunctKeep}, "Hi, there... «ok» $5", "hi , there . . . « ok » $ 5"},
		{Options{}, "invalid \xff\xfe utf8", "invalid utf8"},
	}
	for _, c := range cases {
		e, err := New(c.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(e.Normalize(nil, []byte(c.in))); got != c.want {
			t.Errorf("%v: Normalize(%q) = %q, want %q", c.o, c.in, got, c.want)
		}
	}
}

func TestSniffHTML(t *testing.T) {
	for in, want := range map[string]bool{
		"<!DOCTYPE html><p>x":                   true,
		"\ufeff  <html lang=en>":                true,
		"<!-- generated -->\n<HTML>":            true,
		"<head><title>x</title>":                true,
		"<title>x</title>":                      true,
		"<one line to give the program's name>": false,
		"<!-- This file is automatically added": false,
		"<!-- c -->\n# Markdown":                false,
		"<htmlish>":                             false,
		"Copyright <year> <name>":               false,
		"":                                      false,
	} {
		if got := SniffHTML([]byte(in)); got != want {
			t.Errorf("SniffHTML(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestHTMLVisibleText(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>The &amp; Title</title>
<style>p { color: red }</style><script>var hidden = "script text";</script>
<meta name="x" content="meta text"></head>
<body><noscript>no script text</noscript><template><p>template text</p></template>
<h1>Main <em>Heading</em></h1><!-- a comment -->
<p>fo<b>o</b>bar&nbsp;baz &lt;tag&gt; caf&eacute;</p><div>block</div><div>split</div>
<iframe>frame text</iframe><p>end&#33;</p></body></html>`
	e, _ := New(Options{})
	got := string(e.Normalize(nil, []byte(page)))
	want := "the title main heading foobar baz tag café block split end"
	if got != want {
		t.Fatalf("visible text\n got %q\nwant %q", got, want)
	}
	// Plain text keeps what HTML drops.
	e2, _ := New(Options{Format: FormatText})
	if txt := string(e2.Normalize(nil, []byte(page))); !strings.Contains(txt, "script text") {
		t.Fatalf("FormatText dropped markup content: %q", txt)
	}
}

func TestMarkupBoosts(t *testing.T) {
	page := []byte(`<html><head><title>alpha</title></head><body><h2>beta</h2><p>gamma gamma</p></body></html>`)
	e, _ := New(Options{Unit: UnitWord, Weighting: WeightCount, TitleBoost: 3, HeadingBoost: 2})
	fs := e.Extract(nil, page)
	want := map[string]float64{"alpha": 3, "beta": 2, "gamma": 2}
	if len(fs) != len(want) {
		t.Fatalf("got %d features", len(fs))
	}
	for i, f := range fs {
		if w := want[string(e.AppendText(nil, i))]; w != f.Weight {
			t.Errorf("%q weight %v, want %v", e.AppendText(nil, i), f.Weight, w)
		}
	}
	// A shingle touching the title takes the title boost (the largest).
	e2, _ := New(Options{K: 2, Weighting: WeightCount})
	fs = e2.Extract(fs[:0], page)
	for i, f := range fs {
		txt := string(e2.AppendText(nil, i))
		want := map[string]float64{"alpha beta": DefaultTitleBoost, "beta gamma": DefaultHeadingBoost, "gamma gamma": 1}[txt]
		if f.Weight != want {
			t.Errorf("%q weight %v, want %v", txt, f.Weight, want)
		}
	}
	// Set weights ignore boosts.
	e3, _ := New(Options{K: 2})
	for _, f := range e3.Extract(nil, page) {
		if f.Weight != 1 {
			t.Fatalf("set weight %v", f.Weight)
		}
	}
}

func TestCharNGrams(t *testing.T) {
	e, _ := New(Options{Unit: UnitChar, K: 3})
	fs := e.Extract(nil, []byte("Ab, aB!"))
	// normalized "ab ab": grams "ab ", "b a", " ab", "ab " again
	if e.Occurrences() != 3 || len(fs) != 3 {
		t.Fatalf("occurrences %d, features %d", e.Occurrences(), len(fs))
	}
	var got []string
	for i := range fs {
		got = append(got, string(e.AppendText(nil, i)))
	}
	if strings.Join(got, "|") != "ab |b a| ab" {
		t.Fatalf("grams %q", got)
	}
	ew, _ := New(Options{Unit: UnitChar, K: 3, Wrap: true})
	ew.Extract(nil, []byte("héllo"))
	if ew.Occurrences() != 5 {
		t.Fatalf("wrapped char grams: %d occurrences, want 5 (one per rune)", ew.Occurrences())
	}
	fs = e.Extract(fs[:0], []byte("é"))
	if len(fs) != 1 || string(e.AppendText(nil, 0)) != "é" {
		t.Fatalf("short char document: %v", fs)
	}
}

func TestSeedsAndConfigs(t *testing.T) {
	doc := []byte("the quick brown fox jumps over the lazy dog")
	ids := func(o Options) []uint64 {
		e, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, f := range e.Extract(nil, doc) {
			out = append(out, f.ID)
		}
		return out
	}
	a, b, c := ids(Options{}), ids(Options{}), ids(Options{Seed: 1})
	if !slices.Equal(a, b) {
		t.Fatal("same options, different ids")
	}
	if interSize(sorted(a), sorted(c)) != 0 {
		t.Fatal("different seeds share ids")
	}
	hashes := map[uint64]string{}
	for _, o := range []Options{{}, {Seed: 1}, {K: 4}, {Wrap: true}, {Unit: UnitWord}, {Unit: UnitChar},
		{Case: CaseFold}, {Norm: NormNFKC}, {Digits: DigitsFold}, {Punct: PunctKeep}} {
		h := o.IDHash()
		if prev, ok := hashes[h]; ok {
			t.Fatalf("IDHash collision: %v and %s", o, prev)
		}
		hashes[h] = o.String()
	}
	if (Options{}).IDHash() != (Options{K: 5, Format: FormatHTML}).IDHash() {
		t.Fatal("defaults must hash like explicit defaults, and Format must not change ids")
	}
	if (Options{}).ConfigHash() == (Options{Weighting: WeightCount}).ConfigHash() {
		t.Fatal("ConfigHash ignores weighting")
	}
	if (Options{}).IDHash() != (Options{Weighting: WeightCount}).IDHash() {
		t.Fatal("IDHash depends on weighting")
	}
	if (Options{}).ConfigHash() != (Options{TitleBoost: 7}).ConfigHash() {
		t.Fatal("set weights ignore boosts, so must ConfigHash")
	}
}

func sorted(a []uint64) []uint64 {
	a = slices.Clone(a)
	slices.Sort(a)
	return a
}

func TestValidate(t *testing.T) {
	err := Options{K: -1, TitleBoost: 0.5, Weighting: WeightTFIDF, Case: 9}.Validate()
	if !errors.Is(err, ErrOptions) {
		t.Fatalf("want ErrOptions, got %v", err)
	}
	for _, s := range []string{"K=-1", "TitleBoost", "IDFTable", "case mode"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not report %q", err, s)
		}
	}
	if _, err := New(Options{K: MaxK + 1}); err == nil {
		t.Fatal("New accepted K > MaxK")
	}
	if err := (Options{}).Validate(); err != nil {
		t.Fatal(err)
	}
	b := NewIDFBuilder(Options{K: 3}.IDHash())
	if err := (Options{Weighting: WeightTFIDF, IDFTable: b.Table(0)}).Validate(); !errors.Is(err, ErrConfigMismatch) {
		t.Fatalf("want ErrConfigMismatch, got %v", err)
	}
}

func TestParseNames(t *testing.T) {
	for _, s := range []string{"auto", "text", "html"} {
		f, err := ParseFormat(s)
		if err != nil || name(formatNames[:], uint8(f)) != s {
			t.Fatalf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if w, err := ParseWeighting("TFIDF"); err != nil || w != WeightTFIDF {
		t.Fatal(w, err)
	}
	if _, err := ParseUnit("sentence"); !errors.Is(err, ErrOptions) {
		t.Fatal(err)
	}
}

// TestAllocs checks the steady-state allocation promise: none for plain
// text, whatever the unit and weighting; for HTML only the fixed cost of
// x/net/html's tokenizer plus its per-attribute key copies.
func TestAllocs(t *testing.T) {
	text := genText(3, 1000)
	nonASCII := []byte(strings.Repeat("Ünïcode ÉCOLE straße ﬁne ½ ", 50))
	tab := NewIDFBuilder(Options{}.IDHash()).Table(0)
	for _, o := range []Options{{}, {Wrap: true}, {Weighting: WeightCount}, {Unit: UnitWord},
		{Unit: UnitChar}, {Norm: NormNFKC, Case: CaseFold}, {Weighting: WeightTFIDF, IDFTable: tab, SublinearTF: true}} {
		e, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		var dst []Feature
		for _, doc := range [][]byte{text, nonASCII} {
			dst = e.Extract(dst[:0], doc) // warm up
			if a := testing.AllocsPerRun(20, func() { dst = e.Extract(dst[:0], doc) }); a != 0 {
				t.Errorf("%v: %v allocations per plain-text document", o, a)
			}
		}
	}
	e, _ := New(Options{})
	page := []byte("<html><head><title>t</title></head><body><h1>x</h1><p>" + string(text) + "</p></body></html>")
	dst := e.Extract(nil, page)
	if a := testing.AllocsPerRun(20, func() { dst = e.Extract(dst[:0], page) }); a > 6 {
		t.Errorf("%v allocations per attribute-free HTML document, want <= 6", a)
	}
}

// TestTokHasherEqualsRabin checks the fast token fingerprint against
// rabin.Table.Hash for every length 0..40 and random contents.
func TestTokHasherEqualsRabin(t *testing.T) {
	for _, seed := range []uint64{0, 1, 12345} {
		tab := rabin.New(rabin.RandomPrimitive(seed))
		h := newTokHasher(tab)
		s := rng.New(rng.Key(seed, 2))
		for n := 0; n <= 40; n++ {
			for trial := 0; trial < 50; trial++ {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(s.Uint64())
				}
				if got, want := h.hash(b), tab.Hash(b); got != want {
					t.Fatalf("seed %d len %d %x: %016x, Table.Hash %016x", seed, n, b, got, want)
				}
			}
		}
	}
}

// TestNFKCAndFoldMatchXText checks the allocation-free NFKC and case-fold
// path against golang.org/x/text's one-shot functions on random strings of
// tricky runes (ligatures, combining marks, Hangul, full-width, sharp s).
func TestNFKCAndFoldMatchXText(t *testing.T) {
	runes := []rune("aAéE\u0301\u0308ﬁﬀﷺ①ＡｂßẞΣσςİı한\u1100\u1161가ǅ™Ⓒ¼ !")
	s := rng.New(rng.Key(11))
	n := newNormalizer(Options{Norm: NormNFKC, Case: CaseFold})
	for trial := 0; trial < 500; trial++ {
		var b strings.Builder
		for i := int(s.Intn(40)); i > 0; i-- {
			b.WriteRune(runes[s.Intn(uint64(len(runes)))])
		}
		in := b.String()
		want := cases.Fold().String(norm.NFKC.String(in))
		if isASCII([]byte(in)) {
			want = in // ASCII is left to the tokenizer's lowering table
		}
		if got := string(n.appendChunk(nil, []byte(in))); got != want {
			t.Fatalf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestWindowKernelEqualsRabin checks the extractor's window (winHasher's
// step and dropOf, and emit's loops over them) against rabin.WordWindow
// on crafted unit sequences, for every mode of the loop: set and count,
// with and without Wrap, K from 1 to 6, and units that make the id 0 (the
// deduplication table's empty mark, kept aside; unreachable from real
// text, so only crafted units test it).
func TestWindowKernelEqualsRabin(t *testing.T) {
	s := rng.New(rng.Key(5, 1))
	for k := 1; k <= 6; k++ {
		for _, wrap := range []bool{false, true} {
			for _, w := range []Weighting{WeightSet, WeightCount} {
				e, err := New(Options{Seed: 3, K: k, Wrap: wrap, Weighting: w})
				if err != nil {
					t.Fatal(err)
				}
				winT := rabin.New(rabin.RandomPrimitive(rng.Key(3, labelWindowPoly)))
				q := uint64(winT.Poly())
				for trial := 0; trial < 20; trial++ {
					n := 1 + int(s.Intn(30))
					units := make([]uint64, n)
					for i := range units {
						switch s.Intn(4) {
						case 0:
							units[i] = s.Uint64()
						case 1:
							units[i] = q // with K = 1 the id of this unit is 0
						default:
							units[i] = s.Intn(3) // repeats
						}
					}
					// The reference: each shingle rehashed with rabin.
					total := n
					if wrap {
						total = n + k - 1
					}
					want := map[uint64]float64{}
					var order []uint64
					add := func(id uint64) {
						if _, ok := want[id]; !ok {
							order = append(order, id)
						}
						want[id]++
					}
					ww := rabin.NewWordWindow(winT, k)
					var fp uint64
					for j := 0; j < total; j++ {
						fp = ww.Roll(units[j%n])
						if j >= k-1 {
							add(fp)
						}
					}
					if total < k {
						add(fp)
					}
					e.n.html = false
					e.units = append([]uint64(nil), units...)
					e.n.fps = e.units
					e.base, e.first = 0, e.first[:0]
					got := e.emit(nil)
					if len(got) != len(order) {
						t.Fatalf("k=%d wrap=%v %v: %d features, want %d", k, wrap, w, len(got), len(order))
					}
					for i, f := range got {
						wt := want[f.ID]
						if w == WeightSet {
							wt = 1
						}
						if f.ID != order[i] || f.Weight != wt {
							t.Fatalf("k=%d wrap=%v %v feature %d: %016x:%g, want %016x:%g", k, wrap, w, i, f.ID, f.Weight, order[i], wt)
						}
					}
				}
			}
		}
	}
}
