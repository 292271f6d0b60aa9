package main

import (
	"bufio"
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
	data, ex := dedupReportData(res)
	if o != nil && ex.Last() >= 0 {
		if err := readReportTexts(ctx, o, ex); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		data.Inputs = o.Inputs
	}
	data.Examples = ex.Examples
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
// picks the example clusters (report.Examples), whose texts are still to be
// read.
func dedupReportData(res *dedup.Result) (*report.DedupData, *report.RunExamples) {
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
	clusters := make([]report.RunCluster, len(res.Clusters))
	for i, cl := range res.Clusters {
		sizes[i] = len(cl.Members)
		rc := report.RunCluster{ID: cl.ID, Kept: cl.Kept, Oversize: cl.Oversize, Members: make([]report.RunMember, len(cl.Members))}
		for j, m := range cl.Members {
			rc.Members[j] = report.RunMember{Name: m.Name, Seq: m.Seq, Similarity: m.Similarity, Exact: m.Exact, Identical: m.Identical}
		}
		if cl.Kept == "" { // --keep none: the first member is the reference
			rc.Kept, rc.Dropped = cl.Members[0].Name, true
		}
		clusters[i] = rc
	}
	d.ClusterSizes = sizes
	ex := report.Examples(clusters, report.ExampleOptions{Largest: reportLargest, Random: reportRandom,
		Listed: reportListed, Diffed: reportDiffed, Seed: c.Seed ^ reportExampleKey})
	return d, ex
}

// readReportTexts re-reads the inputs, numbering records as dedup.Run does,
// and gives the examples the texts they show.
func readReportTexts(ctx context.Context, o *reportSource, ex *report.RunExamples) error {
	copts := o.Corpus
	copts.OnReject, copts.OnWarning = nil, nil
	r, err := corpus.Open(o.Inputs, copts)
	if err != nil {
		return err
	}
	defer r.Close()
	fo := o.Features
	fo.Format = feature.FormatHTML
	fo.Weighting, fo.IDFTable = feature.WeightSet, nil
	var html *feature.Extractor // made on the first HTML document
	last := ex.Last()
	for seq := 0; seq <= last && r.Next(); seq++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !ex.Want(seq) {
			continue
		}
		doc := r.Doc()
		body := doc.Body
		if doc.HTML || o.Features.Format == feature.FormatHTML || (o.Features.Format == feature.FormatAuto && feature.SniffHTML(body)) {
			if html == nil {
				if html, err = feature.New(fo); err != nil {
					return err
				}
			}
			body = html.Normalize(nil, body)
		}
		ex.SetText(seq, string(body))
	}
	return r.Err()
}
