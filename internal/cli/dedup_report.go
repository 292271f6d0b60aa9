package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/report"
)

// How many example clusters the report shows, and how many members of
// each it lists and diffs.
const (
	reportLargest    = 4  // the largest clusters
	reportRandom     = 4  // random (deterministic) others
	reportListed     = 40 // members listed per example
	reportDiffed     = 5  // members diffed against the kept document
	reportDiffWords  = 2000
	reportExampleKey = 0x7265706f7274 // "report": keys the random examples with the run's seed
)

// reportSource says where the documents of a dedup run come from, for the
// report to show their texts.
type reportSource struct {
	Inputs   []string
	Corpus   corpus.Options
	Features feature.Options
}

// writeDedupReportFrom writes the HTML report of res to path. When o is not
// nil the example clusters' documents are re-read from o.Inputs with
// o.Corpus (the reader yields the records in the order the run numbered
// them, as for dedup.WriteKept) so the report can show their differences;
// HTML documents are shown as their visible text (o.Features'
// normalization). Reading stops after the last document needed.
func writeDedupReportFrom(ctx context.Context, path string, res *dedup.Result, o *reportSource) error {
	data, need := dedupReportData(res)
	if o != nil && len(need) > 0 {
		texts, err := readReportTexts(ctx, o, need)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for i := range data.Examples {
			ex := &data.Examples[i]
			fill := func(d *report.ExampleDoc) {
				if seq, ok := need[d.Name]; ok {
					d.Text, d.HasText = texts[seq]
				}
			}
			fill(&ex.Kept)
			for j := range ex.Members {
				fill(&ex.Members[j])
			}
		}
		data.Inputs = o.Inputs
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := report.Dedup(bw, data); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dedupReportData converts a dedup result into the report's input, and
// returns the documents whose texts the examples need (name → Seq; only
// documents of this run, Seq >= 0).
func dedupReportData(res *dedup.Result) (*report.DedupData, map[string]int) {
	s := res.Summary
	d := &report.DedupData{
		Summary: report.DedupSummary{
			Read: s.Read, Kept: s.Kept, Duplicates: s.Duplicates, Exact: s.Exact, Near: s.Near,
			Rejected: s.Rejected, RejectedBy: s.RejectedBy, Warnings: s.Warnings, Skipped: s.Skipped,
			Bytes: s.Bytes, Pairs: s.Pairs, Candidates: s.Candidates, Clusters: s.Clusters, Largest: s.Largest,
			ExactVerification: s.ExactCheck, Seconds: s.Seconds,
		},
		Threshold: s.Config.Threshold,
		MaxWords:  reportDiffWords,
		MaxDiffs:  reportDiffed,
	}
	for _, st := range s.Stages {
		d.Stages = append(d.Stages, report.Stage{Name: st.Name, Seconds: st.Seconds, Items: st.Items})
	}
	c := s.Config
	d.Config = []report.Setting{
		{Name: "threshold", Value: strconv.FormatFloat(c.Threshold, 'g', -1, 64)},
		{Name: "sampler", Value: fmt.Sprintf("%s k=%d seed=%d", c.Sampler, c.K, c.Seed)},
		{Name: "lsh", Value: c.LSH.String()},
		{Name: "features", Value: c.Features},
	}
	if res.Scheme.B > 0 {
		p := res.Scheme
		d.Scheme = &p
	}
	d.Pairs = make([]report.PairSim, len(res.Pairs))
	for i, p := range res.Pairs {
		d.Pairs[i] = report.PairSim{Similarity: p.Similarity, Exact: p.Exact, Identical: p.Identical}
	}
	sizes := make([]int, len(res.Clusters))
	for i, cl := range res.Clusters {
		sizes[i] = len(cl.Members)
	}
	d.ClusterSizes = sizes
	need := map[string]int{}
	big, sample := report.PickExamples(sizes, reportLargest, reportRandom, c.Seed^reportExampleKey)
	add := func(i int, why string) {
		cl := res.Clusters[i]
		ex := report.Example{Cluster: cl.ID, Why: why, Size: len(cl.Members), Oversize: cl.Oversize}
		diffed := 0
		for _, m := range cl.Members {
			doc := report.ExampleDoc{Name: m.Name, Similarity: m.Similarity, Exact: m.Exact, Identical: m.Identical}
			if m.Name == cl.Kept {
				ex.Kept = doc
				if m.Seq >= 0 {
					need[m.Name] = m.Seq
				}
				continue
			}
			if len(ex.Members) >= reportListed {
				continue
			}
			if diffed < reportDiffed && m.Seq >= 0 {
				need[m.Name] = m.Seq
				diffed++
			}
			ex.Members = append(ex.Members, doc)
		}
		d.Examples = append(d.Examples, ex)
	}
	for _, i := range big {
		add(i, "largest")
	}
	for _, i := range sample {
		add(i, "random")
	}
	return d, need
}

// readReportTexts re-reads the inputs and returns the texts of the
// documents at the Seqs in need, numbering records as dedup.Run does.
func readReportTexts(ctx context.Context, o *reportSource, need map[string]int) (map[int]string, error) {
	want := make(map[int]bool, len(need))
	last := -1
	for _, s := range need {
		want[s] = true
		last = max(last, s)
	}
	copts := o.Corpus
	copts.OnReject, copts.OnWarning = nil, nil
	r, err := corpus.Open(o.Inputs, copts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fo := o.Features
	fo.Format = feature.FormatHTML
	fo.Weighting, fo.IDFTable = feature.WeightSet, nil
	var html *feature.Extractor // made on the first HTML document
	texts := make(map[int]string, len(want))
	for seq := 0; seq <= last && r.Next(); seq++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !want[seq] {
			continue
		}
		doc := r.Doc()
		body := doc.Body
		if doc.HTML || o.Features.Format == feature.FormatHTML || (o.Features.Format == feature.FormatAuto && looksHTML(body)) {
			if html == nil {
				if html, err = feature.New(fo); err != nil {
					return nil, err
				}
			}
			body = html.Normalize(nil, body)
		}
		texts[seq] = string(body)
	}
	return texts, r.Err()
}

// looksHTML is a cheap guess that body is HTML markup: it starts, after
// white space, with a tag or doctype and mentions a structural tag early.
func looksHTML(body []byte) bool {
	head := bytes.TrimLeft(body[:min(len(body), 1024)], " \t\r\n\ufeff")
	if len(head) == 0 || head[0] != '<' {
		return false
	}
	low := bytes.ToLower(head)
	for _, t := range []string{"<!doctype html", "<html", "<head", "<body", "<p>", "<div", "<title"} {
		if bytes.Contains(low, []byte(t)) {
			return true
		}
	}
	return false
}
