package report_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/neardup/neardup/report"
)

// runClusters returns n clusters of sizes 2, 3, …, n+1; member j of
// cluster i is record 100*i+j, except that member 1 of every third cluster
// was stored by an earlier run (Seq -1).
func runClusters(n int) []report.RunCluster {
	var cs []report.RunCluster
	for i := 0; i < n; i++ {
		c := report.RunCluster{ID: i + 1, Kept: fmt.Sprintf("c%d-m0", i)}
		for j := 0; j < i+2; j++ {
			m := report.RunMember{Name: fmt.Sprintf("c%d-m%d", i, j), Seq: 100*i + j, Similarity: 0.9}
			if j == 1 && i%3 == 0 {
				m.Seq = -1
			}
			c.Members = append(c.Members, m)
		}
		cs = append(cs, c)
	}
	return cs
}

// TestExamplesTexts checks which texts Examples asks for against a direct
// walk of the picked clusters: each kept document, and the first Diffed
// listed members the run read; at most Listed members listed; SetText
// reaches exactly the documents of that record.
func TestExamplesTexts(t *testing.T) {
	cs := runClusters(30)
	o := report.ExampleOptions{Largest: 3, Random: 4, Listed: 6, Diffed: 2, Seed: 9}
	ex := report.Examples(cs, o)
	if len(ex.Examples) != 7 {
		t.Fatalf("%d examples", len(ex.Examples))
	}
	sizes := make([]int, len(cs))
	for i, c := range cs {
		sizes[i] = len(c.Members)
	}
	big, random := report.PickExamples(sizes, 3, 4, 9)
	var want []int
	for k, i := range append(big, random...) {
		c := cs[i]
		e := ex.Examples[k]
		if e.Cluster != c.ID || e.Size != len(c.Members) || e.Kept.Name != c.Kept {
			t.Fatalf("example %d: %+v for cluster %+v", k, e, c.ID)
		}
		if len(e.Members) != min(6, len(c.Members)-1) {
			t.Errorf("cluster %d: %d members listed", c.ID, len(e.Members))
		}
		want = append(want, c.Members[0].Seq)
		diffed := 0
		for _, m := range c.Members[1 : 1+len(e.Members)] {
			if m.Seq >= 0 && diffed < 2 {
				want = append(want, m.Seq)
				diffed++
			}
		}
	}
	slices.Sort(want)
	if got := ex.Seqs(); !slices.Equal(got, want) {
		t.Fatalf("seqs %v, want %v", got, want)
	}
	if ex.Last() != want[len(want)-1] || ex.Want(-1) || ex.Want(want[0]+1000000) {
		t.Error("Last/Want disagree with Seqs")
	}
	for _, s := range want {
		ex.SetText(s, fmt.Sprint("text of ", s))
	}
	ex.SetText(123456, "ignored")
	seqOf := map[string]int{}
	for _, c := range cs {
		for _, m := range c.Members {
			seqOf[m.Name] = m.Seq
		}
	}
	texts := 0
	for _, e := range ex.Examples {
		for _, d := range append([]report.ExampleDoc{e.Kept}, e.Members...) {
			if !d.HasText {
				continue
			}
			texts++
			if want := fmt.Sprint("text of ", seqOf[d.Name]); d.Text != want {
				t.Errorf("%s: text %q, want %q", d.Name, d.Text, want)
			}
		}
		if !e.Kept.HasText {
			t.Errorf("cluster %d: kept document without text", e.Cluster)
		}
	}
	if texts != len(want) {
		t.Errorf("%d documents got a text, %d records were asked for", texts, len(want))
	}
	// Stored documents never get a text.
	for _, e := range ex.Examples {
		for _, d := range e.Members {
			if d.Name[len(d.Name)-3:] == "-m1" && (e.Cluster-1)%3 == 0 && d.HasText {
				t.Errorf("%s was stored by an earlier run but has a text", d.Name)
			}
		}
	}
}

func TestExamplesEmpty(t *testing.T) {
	ex := report.Examples(nil, report.ExampleOptions{})
	if len(ex.Examples) != 0 || ex.Last() != -1 || len(ex.Seqs()) != 0 {
		t.Errorf("%+v", ex)
	}
	ex = report.Examples(runClusters(10), report.ExampleOptions{Largest: -1, Random: -1})
	if len(ex.Examples) != 0 {
		t.Errorf("negative counts: %d examples", len(ex.Examples))
	}
}

func ExampleExamples() {
	clusters := []report.RunCluster{
		{ID: 1, Kept: "a", Members: []report.RunMember{{Name: "a", Seq: 0, Similarity: 1}, {Name: "b", Seq: 3, Similarity: 0.92, Exact: true}}},
		{ID: 2, Kept: "c", Members: []report.RunMember{{Name: "c", Seq: 1, Similarity: 1}, {Name: "d", Seq: 2, Similarity: 1, Identical: true}, {Name: "e", Seq: -1, Similarity: 0.85}}},
	}
	ex := report.Examples(clusters, report.ExampleOptions{Largest: 1, Random: 1})
	fmt.Println("read again records", ex.Seqs())
	records := []string{"text a", "text c", "text d", "text b"}
	for seq := 0; seq <= ex.Last(); seq++ { // numbered as the run read them
		if ex.Want(seq) {
			ex.SetText(seq, records[seq])
		}
	}
	for _, e := range ex.Examples {
		fmt.Printf("cluster %d (%s): kept %q", e.Cluster, e.Why, e.Kept.Text)
		for _, m := range e.Members {
			fmt.Printf(", %s %q %v", m.Name, m.Text, m.HasText)
		}
		fmt.Println()
	}
	// Output:
	// read again records [0 1 2 3]
	// cluster 2 (largest): kept "text c", d "text d" true, e "" false
	// cluster 1 (random): kept "text a", b "text b" true
}
