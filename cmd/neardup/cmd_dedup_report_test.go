package main

import (
	"context"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/corpus/corpustest"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/report"
)

// licenseResult builds a dedup result for the sample corpus by hand from
// its ground truth: documents numbered in file order (the corpus has no
// bad records), pairs with J >= 0.9, clusters their connected components
// kept by first member. It stands in for dedup.Run so that this test checks
// the report's own work: picking examples and re-reading the right texts.
func licenseResult(t *testing.T) (*dedup.Result, map[string]string) {
	t.Helper()
	r, err := corpus.Open([]string{licensesDocs}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seq := map[string]int{}
	texts := map[string]string{}
	res := &dedup.Result{Scheme: lsh.AltaVista()}
	for r.Next() {
		d := r.Doc()
		seq[d.ID] = len(res.Docs)
		texts[d.ID] = string(d.Body)
		res.Docs = append(res.Docs, dedup.Doc{Seq: len(res.Docs), Name: d.ID, Bytes: len(d.Body), ExactOf: -1})
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	var find func(int) int
	find = func(x int) int {
		p, ok := parent[x]
		if !ok || p == x {
			return x
		}
		parent[x] = find(p)
		return parent[x]
	}
	sim := map[[2]int]float64{}
	for _, p := range corpustest.Pairs(t, licensesDir) {
		if p.Jaccard < 0.9 {
			continue
		}
		a, b := seq[p.A], seq[p.B]
		if a > b {
			a, b = b, a
		}
		res.Pairs = append(res.Pairs, dedup.Pair{A: res.Docs[a].Name, B: res.Docs[b].Name, SeqA: a, SeqB: b, Similarity: p.Jaccard, Exact: true, Identical: p.Jaccard == 1})
		sim[[2]int{a, b}] = p.Jaccard
		for _, x := range []int{a, b} {
			if _, ok := parent[x]; !ok {
				parent[x] = x
			}
		}
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	groups := map[int][]int{}
	for i := range res.Docs {
		if _, ok := parent[i]; ok {
			root := find(i)
			groups[root] = append(groups[root], i)
		}
	}
	for root := range len(res.Docs) {
		g := groups[root]
		if len(g) < 2 {
			continue
		}
		c := dedup.Cluster{ID: len(res.Clusters) + 1, Kept: res.Docs[g[0]].Name}
		for _, i := range g {
			s, ok := sim[[2]int{g[0], i}]
			if i == g[0] {
				s = 1
			} else if !ok {
				s = -1
			}
			c.Members = append(c.Members, dedup.Member{Name: res.Docs[i].Name, Seq: i, Similarity: s, Exact: ok})
		}
		res.Clusters = append(res.Clusters, c)
	}
	res.Summary = dedup.Summary{Read: int64(len(res.Docs)), Kept: int64(len(res.Docs)), Pairs: len(res.Pairs), Clusters: len(res.Clusters),
		Config: dedup.Config{Sampler: "oph", K: 128, Threshold: 0.9, LSH: res.Scheme}}
	return res, texts
}

// TestDedupReportTexts checks that the report re-reads exactly the example
// documents, by the run's numbering, and renders their diffs.
func TestDedupReportTexts(t *testing.T) {
	res, texts := licenseResult(t)
	if len(res.Clusters) < 10 {
		t.Fatalf("only %d clusters in the ground truth", len(res.Clusters))
	}
	data, ex := dedupReportData(res)
	if len(ex.Examples) != reportLargest+reportRandom {
		t.Fatalf("%d examples", len(ex.Examples))
	}
	for _, e := range ex.Examples {
		if !slices.ContainsFunc(ex.Seqs(), func(seq int) bool { return res.Docs[seq].Name == e.Kept.Name }) {
			t.Errorf("cluster %d: kept document %s not asked for", e.Cluster, e.Kept.Name)
		}
	}
	if err := readReportTexts(context.Background(), &reportSource{Inputs: []string{licensesDocs}}, ex); err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, e := range ex.Examples {
		for _, d := range append([]report.ExampleDoc{e.Kept}, e.Members...) {
			if !d.HasText {
				continue
			}
			shown++
			if d.Text != texts[d.Name] {
				t.Errorf("text of %s is another document's", d.Name)
			}
		}
		if !e.Kept.HasText {
			t.Errorf("cluster %d: kept document has no text", e.Cluster)
		}
	}
	if shown < len(ex.Seqs()) {
		t.Fatalf("%d texts shown, %d asked for", shown, len(ex.Seqs()))
	}
	data.Examples = ex.Examples

	path := filepath.Join(t.TempDir(), "report.html")
	if err := writeDedupReportFrom(context.Background(), path, res, &reportSource{Inputs: []string{licensesDocs}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	diffs := strings.Count(page, `<table class="diff">`)
	if diffs < len(data.Examples) {
		t.Errorf("%d diffs for %d examples", diffs, len(data.Examples))
	}
	if strings.Contains(page, "text is not available") {
		t.Error("some text was not found")
	}
	// The largest cluster comes first, and its kept document's name and
	// text appear in the page.
	big := data.Examples[0]
	for _, ex := range data.Examples[1:reportLargest] {
		if ex.Size > big.Size {
			t.Errorf("example sizes not in decreasing order")
		}
	}
	first := strings.Fields(texts[big.Kept.Name])[0]
	if !strings.Contains(page, html.EscapeString(big.Kept.Name)) || !strings.Contains(page, html.EscapeString(first)) {
		t.Errorf("page lacks the largest cluster's kept document %s", big.Kept.Name)
	}
	if n := len(regexp.MustCompile(`<svg`).FindAllString(page, -1)); n != 3 {
		t.Errorf("%d plots, want 3", n)
	}

	// Without the inputs, the report has everything but the texts.
	if err := writeDedupReportFrom(context.Background(), path, res, nil); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if !strings.Contains(string(b), "text is not available") || strings.Contains(string(b), `<table class="diff">`) {
		t.Error("report without inputs should have no diffs")
	}
}

// TestDedupReportHTMLText: HTML documents are shown as their visible text,
// plain text as it is.
func TestDedupReportHTMLText(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.html": "<!DOCTYPE html><html><head><title>T</title><script>var x = 1;</script></head><body><p>Hello <b>brave</b> world</p></body></html>",
		"b.txt":  "<not html> just text",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory is walked in name order: a.html is Seq 0, b.txt Seq 1.
	ex := report.Examples([]report.RunCluster{{ID: 1, Kept: "a.html", Members: []report.RunMember{{Name: "a.html", Seq: 0}, {Name: "b.txt", Seq: 1}}}}, report.ExampleOptions{})
	if err := readReportTexts(context.Background(), &reportSource{Inputs: []string{dir}}, ex); err != nil {
		t.Fatal(err)
	}
	if a := ex.Examples[0].Kept.Text; !strings.Contains(a, "hello brave world") || strings.Contains(a, "<") || strings.Contains(a, "var x") {
		t.Errorf("HTML shown as %q", a)
	}
	if b := ex.Examples[0].Members[0].Text; b != files["b.txt"] {
		t.Errorf("text shown as %q", b)
	}
}
