package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
)

// DedupData is the input of Dedup: plain values describing one
// deduplication run, so that this package does not depend on the pipeline
// that made them (the command line converts its result into a DedupData).
// The zero value renders an empty report; fill what is known.
type DedupData struct {
	// Title heads the page. The default is "neardup dedup report".
	Title string
	// Inputs are the files and directories read.
	Inputs []string
	// Summary accounts for the records.
	Summary DedupSummary
	// Stages are the pipeline's stages with their time.
	Stages []Stage
	// Config lists the run's parameters, in display order.
	Config []Setting
	// Threshold is the similarity at or above which documents were
	// near-duplicates (marked on the S-curve; 0: not marked).
	Threshold float64
	// Scheme is the LSH scheme used; nil leaves out the S-curve.
	Scheme *lsh.Params
	// Pairs are the verified pairs' similarities.
	Pairs []PairSim
	// RejectedPairs are the similarities of the candidate pairs that
	// verification turned down (below the threshold), measured as Pairs
	// are. With them the similarity histogram shows every candidate pair
	// and the gap, or its absence, between near-duplicates and the rest;
	// nil means the run did not record them (the page then says so),
	// while an empty non-nil slice means there were none.
	RejectedPairs []PairSim
	// ClusterSizes are the sizes of the clusters of two or more documents.
	ClusterSizes []int
	// Examples are the clusters shown with their differences (see
	// PickExamples).
	Examples []Example
	// MaxWords bounds the words of each document that are diffed. The
	// default is 2000.
	MaxWords int
	// Context is the number of unchanged words shown around each change;
	// longer unchanged runs are folded. The default is 12.
	Context int
	// MaxDiffs bounds the members of an example diffed against the kept
	// document. The default is 5.
	MaxDiffs int
	// Preview is the number of words of a diff (or of an identical
	// document's text) shown at first; the rest is folded behind a
	// <details> element the reader can open. The default is 60.
	Preview int
}

// DedupSummary accounts for every record of a run: Read = Kept +
// Duplicates + Rejected, Duplicates = Exact + Near.
type DedupSummary struct {
	Read, Kept, Duplicates, Exact, Near, Rejected int64
	// RejectedBy counts rejected records by reason.
	RejectedBy map[string]int64
	// Warnings and Skipped count records the reader warned about or
	// skipped (not documents: directories, non-text files).
	Warnings, Skipped int64
	// Bytes is the size of the inputs read, as stored (before
	// decompression).
	Bytes int64
	// Pairs is the number of verified pairs, Candidates the number of
	// candidate pairs checked.
	Pairs      int
	Candidates int64
	// Clusters is the number of clusters, Largest the largest's size.
	Clusters, Largest int
	// ExactVerification reports whether pairs were verified by exact
	// Jaccard (rather than by the sketch estimate).
	ExactVerification bool
	// Seconds is the run's wall time.
	Seconds float64
}

// Stage is the time one stage of a run took on Items items.
type Stage struct {
	Name    string
	Seconds float64
	Items   int64
}

// Setting is one named parameter of a run.
type Setting struct{ Name, Value string }

// PairSim is the similarity of one verified pair: an exact Jaccard when
// Exact, a sketch estimate otherwise; Identical marks identical bodies.
type PairSim struct {
	Similarity       float64
	Exact, Identical bool
}

// Example is a cluster shown in the report: the kept document and the
// others, each diffed word by word against the kept one.
type Example struct {
	// Cluster is the cluster's id; Why says how it was picked ("largest",
	// "random").
	Cluster int
	Why     string
	// Size is the cluster's size (which may exceed 1+len(Members) when
	// only some members are given). 0 means 1+len(Members).
	Size int
	// Oversize marks a cluster larger than the run's limit.
	Oversize bool
	// Dropped marks a cluster of which every member was dropped (the keep
	// policy none): Kept is then the member the others are compared with,
	// shown as the cluster's "first" rather than "kept".
	Dropped bool
	Kept    ExampleDoc
	Members []ExampleDoc
}

// ExampleDoc is one document of an Example.
type ExampleDoc struct {
	Name string
	// Similarity to the kept document: exact when Exact, estimated
	// otherwise; negative when the two were never compared (connected
	// only through other members).
	Similarity       float64
	Exact, Identical bool
	// Text is the document's text when HasText (documents stored by an
	// earlier run have none).
	Text    string
	HasText bool
}

func (d *DedupData) withDefaults() DedupData {
	c := *d
	if c.Title == "" {
		c.Title = "neardup dedup report"
	}
	if c.MaxWords <= 0 {
		c.MaxWords = 2000
	}
	if c.Context <= 0 {
		c.Context = 12
	}
	if c.MaxDiffs <= 0 {
		c.MaxDiffs = 5
	}
	if c.Preview <= 0 {
		c.Preview = 60
	}
	return c
}

// PickExamples chooses which clusters to show, given their sizes: the
// indexes of the `largest` largest (ties to the lower index), and of
// `random` others drawn uniformly without replacement by a stream keyed by
// seed, so the same input always shows the same clusters. Both lists are
// in order of display: largest first, the random ones by index. Cost:
// O(n log n) for n clusters.
func PickExamples(sizes []int, largest, random int, seed uint64) (big, sample []int) {
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	largest = max(0, min(largest, len(idx)))
	big = slices.Clone(idx[:largest])
	rest := idx[largest:]
	slices.Sort(rest)
	random = max(0, min(random, len(rest)))
	s := rng.New(rng.Key(seed, 0x6578616d706c65)) // "example"
	for i := 0; i < random; i++ {                 // partial Fisher–Yates
		j := i + int(s.Intn(uint64(len(rest)-i)))
		rest[i], rest[j] = rest[j], rest[i]
	}
	sample = slices.Clone(rest[:random])
	slices.Sort(sample)
	return big, sample
}

// Dedup writes a self-contained HTML page about a deduplication run: the
// summary (records read, kept, duplicates, rejected by reason; time per
// stage; configuration), a histogram of the verified pairs' similarities
// (exact and estimated apart), the cluster-size distribution, the S-curve
// of the LSH scheme, and example clusters with the differences between the
// kept document and each member side by side (a minimal word-level diff of
// the first MaxWords words, insertions and deletions highlighted). The page
// has inline CSS and inline SVG plots: no scripts, no external resources.
// Everything from the data is HTML-escaped. The output is deterministic.
// Cost: dominated by the diffs, O((N+M)·D) for N and M words differing in
// D.
func Dedup(w io.Writer, data *DedupData) error {
	d := data.withDefaults()
	v := view{D: &d, RejectedKnown: d.RejectedPairs != nil}
	s := d.Summary
	v.Records = []row{{"read", s.Read, 100, false}}
	pct := func(n int64) float64 {
		if s.Read == 0 {
			return 0
		}
		return 100 * float64(n) / float64(s.Read)
	}
	v.Records = append(v.Records,
		row{"kept", s.Kept, pct(s.Kept), false},
		row{"duplicates", s.Duplicates, pct(s.Duplicates), false},
		row{"identical bodies", s.Exact, pct(s.Exact), true},
		row{"near-duplicates", s.Near, pct(s.Near), true},
		row{"rejected", s.Rejected, pct(s.Rejected), false})
	reasons := make([]string, 0, len(s.RejectedBy))
	for r := range s.RejectedBy {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		v.Records = append(v.Records, row{r, s.RejectedBy[r], pct(s.RejectedBy[r]), true})
	}
	v.Balanced = s.Read == s.Kept+s.Duplicates+s.Rejected

	var err error
	if v.SimPlot, err = d.similarityPlot(); err != nil {
		return err
	}
	if len(d.ClusterSizes) > 0 {
		var b bytes.Buffer
		if err := SizeDistribution(&b, SVG, halfChart("cluster size (documents)", "clusters"), d.ClusterSizes); err != nil {
			return err
		}
		v.SizePlot = inlineSVG(b.Bytes())
	}
	if d.Scheme != nil {
		var b bytes.Buffer
		if err := SCurve(&b, SVG, halfChart("", ""), []lsh.Params{*d.Scheme}, d.Threshold); err != nil {
			return err
		}
		v.CurvePlot = inlineSVG(b.Bytes())
		v.PAtT = d.Scheme.Prob(d.Threshold)
	}
	var df differ
	var in interner
	for _, ex := range d.Examples {
		v.Examples = append(v.Examples, d.exampleView(&df, &in, ex))
	}
	return pageTemplate.Execute(w, &v)
}

// similarityPlot draws the similarities of the verified pairs, and of the
// rejected candidates when given, over [0, 1] in bins of 0.01 with the
// threshold marked.
func (d *DedupData) similarityPlot() (template.HTML, error) {
	if len(d.Pairs) == 0 && len(d.RejectedPairs) == 0 {
		return "", nil
	}
	var exact, est, ident, rejected []float64
	for _, p := range d.Pairs {
		switch {
		case p.Identical:
			ident = append(ident, p.Similarity)
		case p.Exact:
			exact = append(exact, p.Similarity)
		default:
			est = append(est, p.Similarity)
		}
	}
	for _, p := range d.RejectedPairs {
		rejected = append(rejected, p.Similarity)
	}
	var ss []Series
	var colors []color.Color
	add := func(name string, vs []float64, c color.Color) {
		if len(vs) > 0 {
			ss = append(ss, Series{Name: fmt.Sprintf("%s (%s)", name, group(int64(len(vs)))), Values: vs})
			colors = append(colors, c)
		}
	}
	add("verified: exact Jaccard", exact, colorOf(0))
	add("verified: sketch estimate", est, colorOf(1))
	add("identical bodies", ident, colorOf(2))
	add("rejected candidates", rejected, color.Gray{Y: 175})
	c := reportChart("similarity", "pairs")
	c.Colors = colors
	if d.Threshold > 0 && d.Threshold <= 1 {
		c.Marks = []Mark{{d.Threshold, "threshold " + strconv.FormatFloat(d.Threshold, 'g', 4, 64)}}
	}
	var b bytes.Buffer
	if err := StackedHistogram(&b, SVG, c, 0, 1, 100, ss...); err != nil {
		return "", err
	}
	return inlineSVG(b.Bytes()), nil
}

// reportChart is the size of the report's wide plots: 768 × 307 CSS
// pixels (at 96 per inch), so that its 10-point tick labels show at 13
// pixels.
func reportChart(x, y string) Chart {
	return Chart{XLabel: x, YLabel: y, Width: 8 * vg.Inch, Height: 3.2 * vg.Inch}
}

// halfChart is the size of the plots shown two abreast on a wide page:
// 528 × 307 CSS pixels.
func halfChart(x, y string) Chart {
	return Chart{XLabel: x, YLabel: y, Width: 5.5 * vg.Inch, Height: 3.2 * vg.Inch}
}

// inlineSVG makes an SVG document embeddable in HTML: it drops the XML
// prolog and comment, which HTML does not want. The SVG is our own
// rendering, with every text escaped by the renderer.
func inlineSVG(svg []byte) template.HTML {
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		svg = svg[i:]
	}
	return template.HTML(svg)
}

// view is what the template renders.
type view struct {
	D                 *DedupData
	Records           []row
	Balanced          bool
	SimPlot, SizePlot template.HTML
	CurvePlot         template.HTML
	PAtT              float64
	RejectedKnown     bool // RejectedPairs is not nil
	Examples          []exampleView
}

type row struct {
	Name   string
	N      int64
	Pct    float64
	Indent bool
}

type exampleView struct {
	Example
	Size         int
	Diffs        []diffView
	NotShown     int     // members given but not diffed
	Unlisted     int     // members of the cluster not given
	SimLo, SimHi float64 // range of the members' similarities to the kept one (-1: none compared)
}

type diffView struct {
	Member       ExampleDoc
	Rows         []diffRow // shown at first
	More         []diffRow // folded
	MoreWords    int       // words in More (the longer side)
	Del, Ins     int       // words deleted from the kept document, inserted in the member
	WordsA, TotA int
	WordsB, TotB int
	Note         string
	NoDifference bool
	// Identical members show their text, not a diff: Preview, then
	// RestWords more words in Rest, folded; or, when an earlier member of
	// the example showed it, only the name of that member (SameAs).
	Identical     bool
	Preview, Rest string
	RestWords     int
	SameAs        string
	Open          bool
}

// diffRow is one row of a side-by-side diff, or a fold of Skip unchanged
// words.
type diffRow struct {
	Skip        int
	Left, Right []span
}

type span struct {
	Text  string
	Class string // "", "del", "ins"
}

func (d *DedupData) exampleView(df *differ, in *interner, ex Example) exampleView {
	v := exampleView{Example: ex, Size: ex.Size, SimLo: -1, SimHi: -1}
	if v.Size == 0 {
		v.Size = 1 + len(ex.Members)
	}
	v.Unlisted = max(0, v.Size-1-len(ex.Members))
	for _, m := range ex.Members {
		s := m.Similarity
		if m.Identical {
			s = 1
		}
		if s < 0 {
			continue
		}
		if v.SimLo < 0 || s < v.SimLo {
			v.SimLo = s
		}
		v.SimHi = max(v.SimHi, s)
	}
	var ka []string
	var ta int
	var ia []int32
	if ex.Kept.HasText {
		ka, ta = words(ex.Kept.Text, d.MaxWords)
		ia = in.intern(nil, ka)
	}
	shownAt := "" // the member under which an identical text is shown
	for i, m := range ex.Members {
		if i >= d.MaxDiffs {
			v.NotShown = len(ex.Members) - i
			break
		}
		dv := diffView{Member: m, Open: i == 0, WordsA: len(ka), TotA: ta}
		switch {
		case m.Identical && shownAt != "":
			dv.Identical = true
			dv.SameAs = shownAt
		case m.Identical && m.HasText:
			// The text once per example, its first MaxWords words.
			ws, tot := words(m.Text, d.MaxWords)
			dv.Identical = true
			dv.WordsB, dv.TotB = len(ws), tot
			shownAt = m.Name
			if len(ws) > d.Preview+previewSlack {
				dv.Preview = strings.Join(ws[:d.Preview], " ")
				dv.Rest = strings.Join(ws[d.Preview:], " ")
				dv.RestWords = len(ws) - d.Preview
			} else {
				dv.Preview = strings.Join(ws, " ")
			}
		case !ex.Kept.HasText:
			dv.Note = "the kept document's text is not available (stored by an earlier run, or not read for the report)"
		case !m.HasText:
			dv.Note = "this document's text is not available (stored by an earlier run, or not read for the report)"
		default:
			kb, tb := words(m.Text, d.MaxWords)
			dv.WordsB, dv.TotB = len(kb), tb
			ib := in.intern(nil, kb)
			es := df.diff(ia, ib)
			var rows []diffRow
			rows, dv.Del, dv.Ins = d.sideBySide(ka, kb, es)
			dv.Rows, dv.More, dv.MoreWords = fold(rows, d.Preview)
			dv.NoDifference = dv.Del == 0 && dv.Ins == 0
		}
		v.Diffs = append(v.Diffs, dv)
	}
	return v
}

// previewSlack is how many words beyond the preview are shown rather than
// folded: a fold that hides a handful of words only costs the reader a
// click.
const previewSlack = 20

// skipCost is what a folded run of unchanged words costs in the preview's
// word budget: one short line.
const skipCost = 4

// fold splits the rows of a diff into those shown at first, about budget
// words of the longer side (a long row is cut inside), and the rest, with
// the number of words in the rest. Nothing is folded when the rest would
// be shorter than previewSlack words.
func fold(rows []diffRow, budget int) (shown, rest []diffRow, restWords int) {
	cost := func(r diffRow) int {
		if r.Skip > 0 {
			return skipCost
		}
		return max(spanWords(r.Left), spanWords(r.Right))
	}
	total := 0
	for _, r := range rows {
		total += cost(r)
	}
	if total <= budget+previewSlack {
		return rows, nil, 0
	}
	used := 0
	for i, r := range rows {
		c := cost(r)
		if used+c <= budget {
			shown = append(shown, r)
			used += c
			continue
		}
		rest = rows[i:]
		if r.Skip == 0 && budget-used >= 10 {
			n := budget - used
			head, tail := diffRow{}, diffRow{}
			head.Left, tail.Left = cutSpans(r.Left, n)
			head.Right, tail.Right = cutSpans(r.Right, n)
			shown = append(shown, head)
			rest = append([]diffRow{tail}, rows[i+1:]...)
		}
		break
	}
	for _, r := range rest {
		if r.Skip == 0 {
			restWords += cost(r)
		}
	}
	return shown, rest, restWords
}

func spanWords(ss []span) int {
	n := 0
	for _, s := range ss {
		n += strings.Count(s.Text, " ") + 1
	}
	return n
}

// cutSpans splits spans after their first n words, keeping each word's
// class.
func cutSpans(ss []span, n int) (head, tail []span) {
	for i, s := range ss {
		ws := strings.Split(s.Text, " ")
		if len(ws) <= n {
			head = append(head, s)
			n -= len(ws)
			continue
		}
		if n > 0 {
			head = append(head, span{strings.Join(ws[:n], " "), s.Class})
		}
		tail = append(tail, span{strings.Join(ws[n:], " "), s.Class})
		tail = append(tail, ss[i+1:]...)
		break
	}
	return head, tail
}

// sideBySide lays out an edit script as rows: each row holds changes with
// up to Context unchanged words around them, the kept document's words on
// the left (deletions marked) and the member's on the right (insertions
// marked); unchanged runs longer than that are folded into Skip rows.
func (d *DedupData) sideBySide(a, b []string, es []edit) (rows []diffRow, del, ins int) {
	ctx := d.Context
	var cur diffRow
	open := false
	add := func(a, b []string, class string) {
		if len(a) > 0 {
			cur.Left = append(cur.Left, span{strings.Join(a, " "), class})
		}
		if len(b) > 0 {
			cur.Right = append(cur.Right, span{strings.Join(b, " "), class})
		}
		open = true
	}
	flush := func() {
		if open {
			rows = append(rows, cur)
		}
		cur, open = diffRow{}, false
	}
	for k, e := range es {
		if e.Op == opChange {
			add(a[e.A0:e.A1], nil, "del")
			if e.B1 > e.B0 {
				cur.Right = append(cur.Right, span{strings.Join(b[e.B0:e.B1], " "), "ins"})
			}
			del += e.A1 - e.A0
			ins += e.B1 - e.B0
			continue
		}
		n := e.A1 - e.A0
		first, last := k == 0, k == len(es)-1
		switch {
		case first && last: // no change at all
			add(a[e.A0:e.A1], b[e.B0:e.B1], "")
		case first && n > ctx:
			rows = append(rows, diffRow{Skip: n - ctx})
			add(a[e.A1-ctx:e.A1], b[e.B1-ctx:e.B1], "")
		case last && n > ctx:
			add(a[e.A0:e.A0+ctx], b[e.B0:e.B0+ctx], "")
			flush()
			rows = append(rows, diffRow{Skip: n - ctx})
		case !first && !last && n > 2*ctx+4:
			add(a[e.A0:e.A0+ctx], b[e.B0:e.B0+ctx], "")
			flush()
			rows = append(rows, diffRow{Skip: n - 2*ctx})
			add(a[e.A1-ctx:e.A1], b[e.B1-ctx:e.B1], "")
		default:
			add(a[e.A0:e.A1], b[e.B0:e.B1], "")
		}
	}
	flush()
	return rows, del, ins
}

// group formats n with thousands separators: 1234567 → "1,234,567".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func simString(x float64, exact, identical bool) string {
	switch {
	case identical:
		return "1 (identical)"
	case x < 0:
		return "not compared"
	case exact:
		return fmt.Sprintf("%.4f exact", x)
	}
	return fmt.Sprintf("%.4f est.", x)
}

func rate(items int64, secs float64) string {
	if secs <= 0 || items <= 0 {
		return ""
	}
	return group(int64(math.Round(float64(items)/secs))) + "/s"
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"num": func(n any) string {
		switch n := n.(type) {
		case int:
			return group(int64(n))
		case int64:
			return group(n)
		}
		return fmt.Sprint(n)
	},
	"pct":   func(x float64) string { return fmt.Sprintf("%.2f%%", x) },
	"secs":  func(x float64) string { return fmt.Sprintf("%.3f s", x) },
	"bytes": bytesString,
	"sim":   simString,
	"rate":  rate,
	"prob":  func(x float64) string { return fmt.Sprintf("%.4f", x) },
	"inc":   func(n int) int { return n + 1 },
	"range2": func(lo, hi float64) string {
		if lo == hi {
			return fmt.Sprintf("%.4f", lo)
		}
		return fmt.Sprintf("%.4f–%.4f", lo, hi)
	},
	"words": func(n int) string {
		if n == 1 {
			return "1 word"
		}
		return group(int64(n)) + " words"
	},
}).Parse(pageHTML))
