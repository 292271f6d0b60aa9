package server_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus/corpustest"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
)

// TestCollapseCorpus checks collapse against pairwise exact verification
// on the shipped licences corpus (testdata/licenses: 474 texts; every
// pair with exact 5-shingle Jaccard >= 0.5 is listed with its Jaccard,
// all others are below 0.5).
//
// Verified collapse (the default): every collapsed pair must be a pair at
// or above the threshold t = 0.8 — the stored feature sets give the exact
// Jaccard, the same number as the corpus's ground truth. Misses come from
// the table alone: a pair at similarity J is proposed with probability
// P(J) of its scheme, so the expected number of missed pairs is
// E = Σ_{J_i >= t} (1 − P(J_i)) with variance V = Σ P(1 − P) under
// independent samples. One-permutation sketches of short texts have
// positively dependent slots (densification copies bins), and pairs share
// documents, so the test allows E + 6·sqrt(V) rather than 4σ; on this
// corpus far fewer are missed (the log states the rate).
//
// Unverified collapse (the Bing design): the log states the rates of
// pairs below t collapsed and of pairs at or above t missed; the test
// checks the replies' shape only, because on real sketches the collapse
// rate departs from the independent-sample S-curve (the lsh package tests
// it against P(J) exactly on independent samples).
func TestCollapseCorpus(t *testing.T) {
	docs := corpustest.Docs(t, "../testdata/licenses")
	pairs := corpustest.Pairs(t, "../testdata/licenses")
	jac := map[[2]string]float64{}
	for _, p := range pairs {
		jac[[2]string{p.A, p.B}], jac[[2]string{p.B, p.A}] = p.Jaccard, p.Jaccard
	}
	in := make([]api.Document, len(docs))
	all := make([]string, len(docs))
	for i, d := range docs {
		in[i] = api.Document{ID: d.ID, Text: d.Text}
		all[i] = d.ID
	}
	const thr = 0.8
	ctx := context.Background()
	for _, verified := range []bool{true, false} {
		t.Run(map[bool]string{true: "verified", false: "unverified"}[verified], func(t *testing.T) {
			b, err := server.OpenIndex(openStore(t, "pebble", ""), server.IndexOptions{Threshold: thr, CollapseUnverified: !verified})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Add(ctx, in, false); err != nil {
				t.Fatal(err)
			}
			st, _ := b.Stats(ctx)
			p, err := lsh.ChooseCollapse(map[bool]lsh.CollapseOptions{
				true:  {Threshold: thr, MaxSamples: 128, BudgetBytes: 10, FPWeight: 0.1, FNWeight: 0.9},
				false: {Threshold: thr, MaxSamples: 128, BudgetBytes: 12, FPWeight: 0.8, FNWeight: 0.2},
			}[verified])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(st.Collapse, p.Params.String()) {
				t.Fatalf("backend scheme %s, expected %s", st.Collapse, p.Params)
			}
			var expMiss, variance float64
			collapsed, below, above, missed := 0, 0, 0, 0
			for _, pr := range pairs {
				res, err := b.Collapse(ctx, []string{pr.A, pr.B})
				if err != nil {
					t.Fatal(err)
				}
				c := len(res.Collapsed) == 1
				if c {
					collapsed++
					if res.Collapsed[0] != (api.Collapsed{ID: pr.B, Into: pr.A}) || !slices.Equal(res.Kept, []string{pr.A}) {
						t.Errorf("pair %s %s: %+v", pr.A, pr.B, res)
					}
					if pr.Jaccard < thr {
						below++
						if verified && pr.Jaccard < thr-1e-6 {
							t.Errorf("verified collapse of %s and %s at J = %v < %v", pr.A, pr.B, pr.Jaccard, thr)
						}
					}
				} else if !slices.Equal(res.Kept, []string{pr.A, pr.B}) || len(res.Unknown) != 0 {
					t.Errorf("pair %s %s: %+v", pr.A, pr.B, res)
				}
				if pr.Jaccard >= thr {
					above++
					q := p.Params.Prob(pr.Jaccard)
					expMiss += 1 - q
					variance += q * (1 - q)
					if !c {
						missed++
					}
				}
			}
			t.Logf("%s: %d pairs (J >= 0.5), %d collapsed; %d of them below t = %.1f (%.1f%%); %d of %d pairs at or above t not collapsed (%.1f%%; independent-sample theory %.1f)",
				st.Collapse, len(pairs), collapsed, below, thr, 100*float64(below)/float64(max(collapsed, 1)),
				missed, above, 100*float64(missed)/float64(above), expMiss)
			if verified && float64(missed) > expMiss+6*math.Sqrt(variance) {
				t.Errorf("%d pairs at or above t missed, expected at most %.1f + 6·%.1f", missed, expMiss, math.Sqrt(variance))
			}
			// The whole corpus as one ranked list: every verified collapse
			// is a listed pair at or above t.
			res, err := b.Collapse(ctx, all)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Kept)+len(res.Collapsed) != len(all) || len(res.Unknown) != 0 {
				t.Fatalf("whole corpus: %d kept + %d collapsed of %d, unknown %v", len(res.Kept), len(res.Collapsed), len(all), res.Unknown)
			}
			for _, c := range res.Collapsed {
				if j := jac[[2]string{c.ID, c.Into}]; verified && j < thr-1e-6 {
					t.Errorf("whole corpus: %s collapsed into %s at J = %v", c.ID, c.Into, j)
				}
			}
			t.Logf("whole corpus as one list: %d kept, %d collapsed", len(res.Kept), len(res.Collapsed))
		})
	}
}
