package dedup

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/weighted"
)

const sampleCorpus = "../testdata/licenses/docs.jsonl.gz"

// exactPairs computes the exact Jaccard of every pair of documents in the
// sample corpus with the default feature configuration, by brute force.
func exactPairs(t *testing.T) (names []string, sim func(a, b string) float64, all map[[2]string]float64) {
	t.Helper()
	r, err := corpus.Open([]string{sampleCorpus}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ex, err := feature.New(feature.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sets [][]uint64
	pos := map[string]int{}
	var fs []feature.Feature
	for r.Next() {
		d := r.Doc()
		fs = ex.Extract(fs[:0], d.Body)
		ids := make([]uint64, len(fs))
		for i, f := range fs {
			ids[i] = f.ID
		}
		slices.Sort(ids)
		pos[d.ID] = len(names)
		names = append(names, d.ID)
		sets = append(sets, ids)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	all = map[[2]string]float64{}
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			if s := sketch.ExactJaccard(sets[i], sets[j]); s >= 0.5 {
				all[[2]string{names[i], names[j]}] = s
			}
		}
	}
	sim = func(a, b string) float64 {
		return sketch.ExactJaccard(sets[pos[a]], sets[pos[b]])
	}
	return names, sim, all
}

// TestAccuracyOnSampleCorpus runs the pipeline on the shipped licence corpus
// and compares the reported pairs with exact all-pairs Jaccard.
//
// Bounds (issue: at threshold 0.8, recall of pairs with J >= 0.9 at least
// 0.98, precision — reported pairs whose exact J >= 0.7 — at least 0.99):
// with the chosen LSH scheme, P(candidate | J = 0.9) is printed below and is
// above 0.999. Verification by the k = 128 estimate accepts a pair when its
// estimate is at least 0.8 − 1.645·sqrt(0.16/128) = 0.742 (Options.Slack):
// a pair at J = 0.9 fails only if its estimate falls 0.158 below J, 5.9
// standard errors (0.027); a pair at J = 0.6 passes only if its estimate
// rises 0.142, 3.3 standard errors (0.043), probability 5e-4, so nearly
// every accepted pair has J >= 0.7 (pairs in [0.7, 0.8) are accepted often,
// and count as correct). With exact verification precision is 1 by
// construction.
func TestAccuracyOnSampleCorpus(t *testing.T) {
	_, sim, all := exactPairs(t)
	for _, mode := range []struct {
		name  string
		exact ExactMode
	}{{"estimate", ExactNever}, {"exact", ExactAlways}} {
		t.Run(mode.name, func(t *testing.T) {
			res, err := Run(context.Background(), read(sampleCorpus), Options{Index: index.Config{Threshold: 0.8}, Exact: mode.exact})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if s.Read != 474 || s.Read != s.Kept+s.Duplicates+s.Rejected {
				t.Fatalf("accounting: %+v", s)
			}
			t.Logf("lsh %v: P(0.8)=%.4f P(0.9)=%.5f; %d candidates, %d pairs", res.Scheme, res.Scheme.Prob(0.8), res.Scheme.Prob(0.9), s.Candidates, s.Pairs)
			reported := map[[2]string]bool{}
			good := 0
			for _, p := range res.Pairs {
				a, b := p.A, p.B
				if a > b {
					a, b = b, a
				}
				reported[[2]string{a, b}] = true
				if sim(p.A, p.B) >= 0.7 {
					good++
				}
			}
			precision := float64(good) / float64(len(res.Pairs))
			want, found := 0, 0
			for k, j := range all {
				if j < 0.9 {
					continue
				}
				want++
				a, b := k[0], k[1]
				if a > b {
					a, b = b, a
				}
				if reported[[2]string{a, b}] {
					found++
				} else {
					t.Logf("missed %s ~ %s (J = %.4f)", k[0], k[1], j)
				}
			}
			recall := float64(found) / float64(want)
			t.Logf("%s: recall(J>=0.9) = %d/%d = %.4f, precision(J>=0.7) = %d/%d = %.4f", mode.name, found, want, recall, good, len(res.Pairs), precision)
			if recall < 0.98 {
				t.Errorf("recall %.4f < 0.98", recall)
			}
			if precision < 0.99 {
				t.Errorf("precision %.4f < 0.99", precision)
			}
			if mode.exact == ExactAlways {
				// Exact verification: every pair with J >= 0.8 that became a
				// candidate is reported, and none below.
				for _, p := range res.Pairs {
					if !p.Identical && (!p.Exact || p.Similarity < 0.8) {
						t.Fatalf("pair %+v not verified exactly at 0.8", p)
					}
				}
			}
		})
	}
}

// Same input, any number of workers: byte-identical results.
func TestDeterministicAcrossWorkers(t *testing.T) {
	var outs []string
	for _, w := range []int{1, 3} {
		res, err := Run(context.Background(), read(sampleCorpus), Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, fmt.Sprintf("%v|%v|%v", res.Pairs, res.Clusters, res.Duplicate))
	}
	if outs[0] != outs[1] {
		t.Fatal("results differ between 1 and 3 workers")
	}
}

// TestWeightedAccuracy runs weighted dedup (CWS over shingle counts) on the
// sample corpus and checks it against brute-force weighted Jaccard
// (Σmin/Σmax). CWS collides with probability equal to the weighted Jaccard
// (MMT), so the S-curve and the bounds of TestAccuracyOnSampleCorpus apply
// unchanged to the weighted similarity; verification is exact (weighted).
func TestWeightedAccuracy(t *testing.T) {
	r, err := corpus.Open([]string{sampleCorpus}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fo := feature.Options{Weighting: feature.WeightCount}
	ex, err := feature.New(fo)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var sets [][]feature.Feature
	for r.Next() {
		fs := ex.Extract(nil, r.Doc().Body)
		slices.SortFunc(fs, func(a, b feature.Feature) int { return cmp.Compare(a.ID, b.ID) })
		names = append(names, r.Doc().ID)
		sets = append(sets, fs)
	}
	r.Close()
	exact := map[[2]string]float64{}
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			if s := weighted.JaccardSorted(sets[i], sets[j]); s >= 0.5 {
				exact[[2]string{names[i], names[j]}] = s
			}
		}
	}
	res, err := Run(context.Background(), read(sampleCorpus), Options{Index: index.Config{Sketch: sample.Config{Algorithm: sketch.CWS, Features: fo}}, Exact: ExactAlways})
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]bool{}
	for _, p := range res.Pairs {
		k := [2]string{p.A, p.B}
		if _, ok := exact[k]; !ok {
			k = [2]string{p.B, p.A}
		}
		got[k] = true
		if !p.Exact || p.Similarity < 0.8 || math.Abs(p.Similarity-exact[k]) > 1e-9 {
			t.Fatalf("pair %+v: exact weighted J %v", p, exact[k])
		}
	}
	want, found := 0, 0
	for k, s := range exact {
		if s >= 0.9 {
			want++
			if got[k] {
				found++
			}
		}
	}
	recall := float64(found) / float64(want)
	t.Logf("weighted (cws, counts): recall(wJ>=0.9) = %d/%d = %.4f; %d pairs reported, all verified exactly", found, want, recall, len(res.Pairs))
	if recall < 0.98 {
		t.Errorf("recall %.4f < 0.98", recall)
	}
}

// Exact duplicates through the store's fingerprints and Bloom filter: within
// a run, and against documents an earlier run indexed in the same store.
func TestExactDuplicatesInStore(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body := func(i int) string {
		var w []string
		for j := 0; j < 40; j++ {
			w = append(w, fmt.Sprintf("w%d_%d", i, j))
		}
		return strings.Join(w, " ")
	}
	run1 := write("run1.jsonl",
		`{"id":"a","text":"`+body(1)+`"}`,
		`{"id":"b","text":"`+body(2)+`"}`,
		`{"id":"a2","text":"`+body(1)+`"}`) // copy of a in the same run
	run2 := write("run2.jsonl",
		`{"id":"c","text":"`+body(2)+`"}`, // copy of b from run 1
		`{"id":"d","text":"`+body(3)+`"}`,
		`{"id":"e","text":"`+body(1)+` tail"}`) // near copy of a from run 1: J = 36/37
	st, err := store.OpenPebble(dir+"/idx", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r1, err := Run(context.Background(), read(run1), Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if s := r1.Summary; s.Exact != 1 || s.Kept != 2 || s.Bloom == nil {
		t.Fatalf("run 1: %+v", s)
	}
	r2, err := Run(context.Background(), read(run2), Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := r2.Summary
	if s.Exact != 1 || s.Near != 1 || s.Kept != 1 || s.Read != 3 {
		t.Fatalf("run 2: %+v", s)
	}
	if len(r2.Pairs) != 2 || r2.Pairs[0].A != "b" || r2.Pairs[0].B != "c" || !r2.Pairs[0].Identical || r2.Pairs[0].SeqA != -1 ||
		r2.Pairs[1].A != "a" || r2.Pairs[1].B != "e" || r2.Pairs[1].Identical || r2.Pairs[1].SeqA != -1 {
		t.Fatalf("run 2 pairs: %+v", r2.Pairs)
	}
	if len(r2.Clusters) != 2 || r2.Clusters[0].Kept != "a" || r2.Clusters[1].Kept != "b" {
		t.Fatalf("run 2 clusters: %+v", r2.Clusters)
	}
	// Re-running run 2 on the same store finds c's copy in b again, and does
	// not call d a copy of itself.
	r3, err := Run(context.Background(), read(run2), Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if s := r3.Summary; s.Exact != 1 || s.Near != 1 || s.Kept != 1 {
		t.Fatalf("run 3: %+v", s)
	}
}
