package report

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
)

func sampleData() *DedupData {
	kept := "Copyright (c) 2020 The Authors. Permission is hereby granted, free of charge, to any person " +
		"obtaining a copy of this software <b>and</b> associated documentation files, to deal in the Software " +
		"without restriction, including without limitation the rights to use, copy, modify, merge, publish, " +
		"distribute, sublicense, and/or sell copies of the Software. THE SOFTWARE IS PROVIDED AS IS."
	member := strings.Replace(kept, "2020 The Authors", "2021 Jane <script>alert(1)</script> Doe", 1)
	member = strings.Replace(member, "merge, publish,", "merge,", 1) + " Extra words & more."
	p := lsh.AltaVista()
	return &DedupData{
		Inputs: []string{"docs/<x>.jsonl"},
		Summary: DedupSummary{Read: 10, Kept: 6, Duplicates: 3, Exact: 1, Near: 2, Rejected: 1,
			RejectedBy: map[string]int64{"bad-json": 1}, Bytes: 12345, Pairs: 4, Candidates: 9, Clusters: 2, Largest: 3,
			ExactVerification: true, Seconds: 0.5},
		Stages:       []Stage{{"sketch", 0.25, 9}, {"verify", 0.1, 8}},
		Config:       []Setting{{"sampler", "oph k=128"}, {"lsh", p.String()}},
		Threshold:    0.8,
		Scheme:       &p,
		Pairs:        []PairSim{{0.91, true, false}, {0.85, true, false}, {0.82, false, false}, {1, true, true}},
		ClusterSizes: []int{3, 2},
		Examples: []Example{{
			Cluster: 1, Why: "largest", Size: 4,
			Kept: ExampleDoc{Name: "a<1>", Similarity: 1, HasText: true, Text: kept},
			Members: []ExampleDoc{
				{Name: "b&2", Similarity: 0.91, Exact: true, HasText: true, Text: member},
				{Name: "c", Similarity: -1},
			},
		}},
		Context: 3,
	}
}

// TestDedupPage renders a report and checks what a reader relies on: the
// page is self-contained (no scripts, no external references), everything
// from the data is escaped, the numbers and plots are there, the diff marks
// exactly the changed words, and rendering is deterministic.
func TestDedupPage(t *testing.T) {
	var b bytes.Buffer
	if err := Dedup(&b, sampleData()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	var b2 bytes.Buffer
	if err := Dedup(&b2, sampleData()); err != nil || !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Fatalf("two renderings differ (err %v)", err)
	}
	for _, bad := range []string{"<script", "<b>and", "<x>", "a<1>", "b&2 ", "src=", "href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// The only URLs allowed are SVG namespace names, which are never
	// fetched.
	for _, m := range regexp.MustCompile(`https?://[^"]*`).FindAllString(page, -1) {
		if m != "http://www.w3.org/2000/svg" && m != "http://www.w3.org/1999/xlink" {
			t.Errorf("external reference %q", m)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;", "docs/&lt;x&gt;.jsonl", "a&lt;1&gt;", "b&amp;2",
		"bad-json", "12.1 KiB", "0.9100 exact", "not compared", "1 more members are listed",
		"<svg", "k=84 r=14 b=6 m=2", "exact Jaccard (2)", "sketch estimate (1)", "identical bodies (1)",
		"text is not available", "unchanged words",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Count(page, "<svg") != 3 {
		t.Errorf("%d plots, want 3", strings.Count(page, "<svg"))
	}
	// Deleted: "2020 The Authors." and "publish,"; inserted: the four words
	// of the new copyright line and the four extra words.
	dels := regexp.MustCompile(`<span class="del">([^<]*)</span>`).FindAllStringSubmatch(page, -1)
	inss := regexp.MustCompile(`<span class="ins">([^<]*)</span>`).FindAllStringSubmatch(page, -1)
	var gotDel, gotIns []string
	for _, m := range dels {
		gotDel = append(gotDel, m[1])
	}
	for _, m := range inss {
		gotIns = append(gotIns, m[1])
	}
	if want := []string{"2020 The Authors.", "publish,"}; !slices.Equal(gotDel, want) {
		t.Errorf("deletions %q, want %q", gotDel, want)
	}
	if want := []string{"2021 Jane &lt;script&gt;alert(1)&lt;/script&gt; Doe.", "Extra words &amp; more."}; !slices.Equal(gotIns, want) {
		t.Errorf("insertions %q, want %q", gotIns, want)
	}
	if !strings.Contains(page, "4 words deleted, 8 inserted") {
		t.Errorf("diff counts missing")
	}
}

// TestSideBySideFolds checks the folding of long unchanged runs: every
// word of both documents is either shown or counted in a fold.
func TestSideBySideFolds(t *testing.T) {
	var a, b []string
	for i := 0; i < 100; i++ {
		w := string(rune('a'+i%26)) + string(rune('a'+i/26))
		a = append(a, w)
		b = append(b, w)
	}
	b[50] = "CHANGED"
	b = append(b[:80], append([]string{"NEW"}, b[80:]...)...)
	d := (&DedupData{Context: 5}).withDefaults()
	var df differ
	var in interner
	rows, del, ins := d.sideBySide(a, b, df.diff(in.intern(nil, a), in.intern(nil, b)))
	if del != 1 || ins != 2 {
		t.Fatalf("del %d ins %d, want 1 and 2", del, ins)
	}
	count := func(ss []span) int {
		n := 0
		for _, s := range ss {
			n += len(strings.Fields(s.Text))
		}
		return n
	}
	left, right, skipped := 0, 0, 0
	for _, r := range rows {
		left += count(r.Left)
		right += count(r.Right)
		skipped += r.Skip
	}
	if left+skipped != len(a) || right+skipped != len(b) {
		t.Fatalf("shown %d+%d skipped %d, documents %d and %d words", left, right, skipped, len(a), len(b))
	}
	// Leading 50 unchanged → fold of 45; 29 between the changes → shown
	// (not above 2·5+4... it is: 29 > 14, folded to 19); trailing 20 → 15.
	var folds []int
	for _, r := range rows {
		if r.Skip > 0 {
			folds = append(folds, r.Skip)
		}
	}
	if want := []int{45, 19, 15}; !slices.Equal(folds, want) {
		t.Fatalf("folds %v, want %v", folds, want)
	}
}

func TestPickExamples(t *testing.T) {
	sizes := []int{2, 9, 3, 9, 2, 2, 5, 2, 2, 2, 4}
	big, sample := PickExamples(sizes, 3, 4, 1)
	if want := []int{1, 3, 6}; !slices.Equal(big, want) {
		t.Fatalf("largest %v, want %v", big, want)
	}
	if len(sample) != 4 || !slices.IsSorted(sample) {
		t.Fatalf("sample %v", sample)
	}
	for _, i := range sample {
		if slices.Contains(big, i) {
			t.Fatalf("sample %v repeats a largest one", sample)
		}
	}
	big2, sample2 := PickExamples(sizes, 3, 4, 1)
	if !slices.Equal(big, big2) || !slices.Equal(sample, sample2) {
		t.Fatal("not deterministic")
	}
	// Over-asking returns everything once.
	big, sample = PickExamples(sizes[:3], 2, 5, 1)
	if len(big)+len(sample) != 3 {
		t.Fatalf("got %v %v", big, sample)
	}
	// Each cluster is drawn about equally often over seeds (uniformity):
	// 2 of the 8 non-largest clusters per draw, so each is drawn with
	// probability 1/4; over 4000 seeds the count is Binomial(4000, 1/4),
	// sd ≈ 27, and 6 sd (±164) is a bound a correct sampler never misses.
	counts := map[int]int{}
	for seed := uint64(0); seed < 4000; seed++ {
		_, s := PickExamples(sizes, 3, 2, seed)
		for _, i := range s {
			counts[i]++
		}
	}
	for _, i := range []int{0, 2, 4, 5, 7, 8, 9, 10} {
		if c := counts[i]; c < 1000-164 || c > 1000+164 {
			t.Errorf("cluster %d drawn %d times, want 1000 ± 164", i, c)
		}
	}
}

// TestSimilarityHistogram checks the histogram's range, threshold mark and
// the note about rejected candidates: nil (not recorded), empty (none) and
// given.
func TestSimilarityHistogram(t *testing.T) {
	for _, c := range []struct {
		name     string
		rejected []PairSim
		want     []string
		not      []string
	}{
		{"not recorded", nil, []string{"did not record"}, []string{"rejected candidates ("}},
		{"none", []PairSim{}, nil, []string{"did not record", "rejected candidates ("}},
		{"given", []PairSim{{0.31, true, false}, {0.55, true, false}, {0.79, false, false}},
			[]string{"rejected candidates (3)", "Grey: the candidates"}, []string{"did not record"}},
	} {
		d := sampleData()
		d.RejectedPairs = c.rejected
		var b bytes.Buffer
		if err := Dedup(&b, d); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		// The first plot is the histogram: [0, 1] labelled every 0.1,
		// the threshold named in its legend.
		hist := page[strings.Index(page, "<svg"):strings.Index(page, "</svg>")]
		for _, w := range append([]string{">0<", ">0.1<", ">0.5<", ">1<", ">threshold 0.8<"}, c.want...) {
			if !strings.Contains(hist+page, w) {
				t.Errorf("%s: page lacks %q", c.name, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(page, w) {
				t.Errorf("%s: page has %q", c.name, w)
			}
		}
	}
}

// TestLongTextsFolded checks that long texts show a preview and fold the
// rest: an identical member's text, and a long diff, each in full once.
func TestLongTextsFolded(t *testing.T) {
	var long []string
	for i := range 500 {
		long = append(long, fmt.Sprintf("w%d", i))
	}
	text := strings.Join(long, " ")
	changed := slices.Clone(long)
	for i := 5; i < 500; i += 40 {
		changed[i] = "CHANGED"
	}
	d := &DedupData{Examples: []Example{{
		Cluster: 1, Why: "largest",
		Kept: ExampleDoc{Name: "k", HasText: true, Text: text},
		Members: []ExampleDoc{
			{Name: "same", Similarity: 1, Identical: true, HasText: true, Text: text},
			{Name: "same2", Similarity: 1, Identical: true, HasText: true, Text: text},
			{Name: "edited", Similarity: 0.9, Exact: true, HasText: true, Text: strings.Join(changed, " ")},
		},
	}}}
	var b bytes.Buffer
	if err := Dedup(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, w := range []string{"Identical to the kept document", "Show the text (440 more words)", "Show the rest of the diff (",
		"the text is shown under <code>same</code>"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	// The identical text is shown once (preview + rest), not side by side.
	if n := strings.Count(page, " w290 "); n != 1+2 { // once for "same", twice (both sides) in the diff
		t.Errorf("w290 appears %d times, want 3", n)
	}
	// The diff's folded part starts after the preview: the first change
	// is shown, the last only inside the fold.
	i := strings.Index(page, "Show the rest of the diff")
	if !strings.Contains(page[:i], `<span class="ins">CHANGED</span>`) || !strings.Contains(page[i:], "w485") {
		t.Error("the diff is not split into a preview and a fold")
	}
	// An identical text is cut at MaxWords, as diffs are.
	d.MaxWords = 300
	b.Reset()
	if err := Dedup(&b, d); err != nil {
		t.Fatal(err)
	}
	page = b.String()
	for _, w := range []string{"(the first 300 of 500 words)", "Show more of the text (240 more words)"} {
		if !strings.Contains(page, w) {
			t.Errorf("MaxWords 300: page lacks %q", w)
		}
	}
	if strings.Contains(page, " w300 ") {
		t.Error("MaxWords 300: word 301 shown")
	}
}

// TestFold checks that folding loses no word and keeps the preview within
// its budget.
func TestFold(t *testing.T) {
	s := rng.New(rng.Key(3, 'f', 'o', 'l', 'd'))
	for trial := range 300 {
		var rows []diffRow
		for range 1 + s.Intn(12) {
			if s.Intn(4) == 0 {
				rows = append(rows, diffRow{Skip: 1 + int(s.Intn(50))})
				continue
			}
			mk := func() []span {
				var ss []span
				for range s.Intn(4) {
					var ws []string
					for range 1 + s.Intn(40) {
						ws = append(ws, "x")
					}
					ss = append(ss, span{strings.Join(ws, " "), []string{"", "del", "ins"}[s.Intn(3)]})
				}
				return ss
			}
			rows = append(rows, diffRow{Left: mk(), Right: mk()})
		}
		budget := 10 + int(s.Intn(80))
		shown, rest, restWords := fold(rows, budget)
		count := func(rs []diffRow) (l, r, skip, cost int) {
			for _, x := range rs {
				l += spanWords(x.Left)
				r += spanWords(x.Right)
				skip += x.Skip
				if x.Skip > 0 {
					cost += skipCost
				} else {
					cost += max(spanWords(x.Left), spanWords(x.Right))
				}
			}
			return
		}
		l0, r0, k0, c0 := count(rows)
		l1, r1, k1, c1 := count(shown)
		l2, r2, k2, _ := count(rest)
		if l1+l2 != l0 || r1+r2 != r0 || k1+k2 != k0 {
			t.Fatalf("trial %d: words %d+%d/%d+%d/%d+%d of %d/%d/%d", trial, l1, l2, r1, r2, k1, k2, l0, r0, k0)
		}
		if rest == nil && c0 > budget+previewSlack || rest != nil && (c1 > budget || restWords == 0 && k2 == 0) {
			t.Fatalf("trial %d: budget %d, total %d, shown %d, rest %d rows (%d words)", trial, budget, c0, c1, len(rest), restWords)
		}
	}
}
