package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/report"
)

// chromium returns the path of a headless-capable Chromium: $NEARDUP_CHROMIUM,
// or chromium, chromium-browser or google-chrome on PATH. Without one the
// test fails, since the report's layout is then untested; only -short skips.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("NEARDUP_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("NEARDUP_CHROMIUM: %v", err)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testing.Short() {
		t.Skip("headless chromium not found: install Debian's chromium (scripts/test.sh does)")
	}
	t.Fatal("headless chromium not found: install Debian's chromium (scripts/test.sh does)")
	return ""
}

// browser starts the headless Chromium bin with a fresh profile in a temporary
// directory and returns a tab's context. The browser is stopped when the
// test ends or ctx is done, whichever comes first.
func browser(t *testing.T, ctx context.Context, bin string) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	return tab
}

// layout is what inspectJS measures on a rendered page.
type layout struct {
	// Height and Width are the document's scroll size, Viewport the
	// window's inner width, all in CSS pixels.
	Height, Width, Viewport float64
	// Overflows describes every element whose content is wider or taller
	// than its box while its overflow is visible (text running out of its
	// box), pre and code inside scroll containers excepted.
	Overflows []string
	// Plots are the page's images and inline SVG plots.
	Plots []plotBox
	// TextOutside describes plot texts that lie outside their plot, and
	// TextOverlaps pairs of plot texts that overlap.
	TextOutside, TextOverlaps []string
	// MinFont is the smallest height of a plot text as shown, in CSS
	// pixels.
	MinFont float64
}

// plotBox is one plot as shown: an <img> (with its natural size) or an
// inline <svg> (natural size: its viewBox).
type plotBox struct {
	Tag                         string
	Complete                    bool
	NaturalWidth, NaturalHeight float64
	ShownWidth, ShownHeight     float64
}

// inspectJS measures the page in the browser; see layout.
const inspectJS = `(() => {
  const r = {Height: document.documentElement.scrollHeight, Width: document.documentElement.scrollWidth,
    Viewport: window.innerWidth, Overflows: [], Plots: [], TextOutside: [], TextOverlaps: [], MinFont: 1e9};
  const name = el => {
    let s = el.tagName.toLowerCase();
    if (typeof el.className === 'string' && el.className) s += '.' + el.className.trim().split(/\s+/).join('.');
    return s + ' "' + (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60) + '"';
  };
  const scrolled = el => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg')) continue;
    const s = getComputedStyle(el);
    if (s.display === 'inline' || s.display === 'none' || s.display === 'contents') continue;
    const wide = el.scrollWidth > el.clientWidth + 1 && s.overflowX === 'visible';
    const tall = el.scrollHeight > el.clientHeight + 1 && s.overflowY === 'visible';
    if (!wide && !tall) continue;
    if ((el.tagName === 'PRE' || el.tagName === 'CODE') && scrolled(el)) continue;
    r.Overflows.push(name(el) + ': content ' + el.scrollWidth + 'x' + el.scrollHeight +
      ' in a box of ' + el.clientWidth + 'x' + el.clientHeight);
  }
  for (const img of document.images) {
    const b = img.getBoundingClientRect();
    r.Plots.push({Tag: 'img', Complete: img.complete, NaturalWidth: img.naturalWidth, NaturalHeight: img.naturalHeight,
      ShownWidth: b.width, ShownHeight: b.height});
  }
  let n = 0;
  for (const svg of document.querySelectorAll('svg')) {
    n++;
    const b = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    r.Plots.push({Tag: 'svg', Complete: true, NaturalWidth: vb ? vb.width : 0, NaturalHeight: vb ? vb.height : 0,
      ShownWidth: b.width, ShownHeight: b.height});
    const texts = [];
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const q = t.getBoundingClientRect();
      texts.push({t: t.textContent.trim(), q});
      r.MinFont = Math.min(r.MinFont, q.height);
      if (q.left < b.left - 0.5 || q.right > b.right + 0.5 || q.top < b.top - 0.5 || q.bottom > b.bottom + 0.5)
        r.TextOutside.push('plot ' + n + ': "' + t.textContent.trim() + '" ' + JSON.stringify([q.left-b.left, q.top-b.top, b.right-q.right, b.bottom-q.bottom]));
    }
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].q, c = texts[j].q;
        const w = Math.min(a.right, c.right) - Math.max(a.left, c.left);
        const h = Math.min(a.bottom, c.bottom) - Math.max(a.top, c.top);
        if (w > 1 && h > 1) r.TextOverlaps.push('plot ' + n + ': "' + texts[i].t + '" and "' + texts[j].t + '"');
      }
    }
  }
  return r;
})()`

// inspect loads url in a viewport width pixels wide and returns its layout
// and a full-page PNG screenshot.
func inspect(ctx context.Context, url string, width int64) (layout, []byte, error) {
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, 900),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("body")),
	); err != nil {
		return layout{}, nil, err
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](inspectJS))
	if err != nil {
		return layout{}, nil, err
	}
	var l layout
	if err := json.Unmarshal(raw, &l); err != nil {
		return layout{}, nil, fmt.Errorf("layout %s: %w", raw, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	return l, png, err
}

// fileURL is the file:// URL of a local path.
func fileURL(t *testing.T, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(abs)
}

// The example clusters the dedup command shows (cmd/neardup's report
// settings, repeated here so that the report of the shipped corpus is laid
// out as a user sees it).
const (
	shownLargest = 4
	shownRandom  = 4
	shownListed  = 40
	shownDiffed  = 5
	shownWords   = 2000
	exampleKey   = 0x7265706f7274 // "report"
)

// shipped is the sample corpus.
var shipped = filepath.Join("..", "testdata", "licenses", "docs.jsonl.gz")

// reportData runs the dedup pipeline on the input with the command's
// defaults and converts its result into the report's input the way the
// dedup command does, texts of the example documents included.
func reportData(t *testing.T, ctx context.Context, in string) *report.DedupData {
	t.Helper()
	inputs := []string{in}
	r0, docs, err := corpus.Records(inputs, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r0.Close()
	res, err := dedup.Run(ctx, docs, dedup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	d := &report.DedupData{
		Inputs: inputs,
		Summary: report.DedupSummary{
			Read: s.Read, Kept: s.Kept, Duplicates: s.Duplicates, Exact: s.Exact, Near: s.Near,
			Rejected: s.Rejected, RejectedBy: s.RejectedBy, Warnings: s.Warnings, Skipped: s.Skipped,
			Bytes: s.Bytes, Pairs: s.Pairs, Candidates: s.Candidates, Clusters: s.Clusters, Largest: s.Largest,
			ExactVerification: s.ExactCheck, Seconds: s.Seconds,
		},
		Threshold: s.Config.Threshold,
		MaxWords:  shownWords,
		MaxDiffs:  shownDiffed,
		Config: []report.Setting{
			{Name: "threshold", Value: fmt.Sprint(s.Config.Threshold)},
			{Name: "sampler", Value: fmt.Sprintf("%s k=%d seed=%d", s.Config.Sampler, s.Config.K, s.Config.Seed)},
			{Name: "lsh", Value: s.Config.LSH.String()},
			{Name: "features", Value: s.Config.Features},
		},
	}
	for _, st := range s.Stages {
		d.Stages = append(d.Stages, report.Stage{Name: st.Name, Seconds: st.Seconds, Items: st.Items})
	}
	if res.Scheme.B > 0 {
		p := res.Scheme
		d.Scheme = &p
	}
	for _, p := range res.Pairs {
		d.Pairs = append(d.Pairs, report.PairSim{Similarity: p.Similarity, Exact: p.Exact, Identical: p.Identical})
	}
	sizes := make([]int, len(res.Clusters))
	for i, cl := range res.Clusters {
		sizes[i] = len(cl.Members)
	}
	d.ClusterSizes = sizes
	need := map[int]bool{} // Seqs whose texts the examples show
	big, sample := report.PickExamples(sizes, shownLargest, shownRandom, s.Config.Seed^exampleKey)
	add := func(i int, why string) {
		cl := res.Clusters[i]
		ex := report.Example{Cluster: cl.ID, Why: why, Size: len(cl.Members), Oversize: cl.Oversize}
		for _, m := range cl.Members {
			doc := report.ExampleDoc{Name: m.Name, Similarity: m.Similarity, Exact: m.Exact, Identical: m.Identical}
			// The text is filled in below; HasText marks the Seq for now.
			doc.Text = fmt.Sprint(m.Seq)
			switch {
			case m.Name == cl.Kept:
				ex.Kept = doc
				need[m.Seq] = true
				continue
			case len(ex.Members) >= shownListed:
				continue
			case len(ex.Members) < shownDiffed:
				need[m.Seq] = true
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
	texts := map[int]string{}
	r, err := corpus.Open(inputs, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for seq := 0; r.Next(); seq++ {
		if need[seq] {
			texts[seq] = string(r.Doc().Body)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	fill := func(doc *report.ExampleDoc) {
		var seq int
		fmt.Sscan(doc.Text, &seq)
		doc.Text, doc.HasText = texts[seq]
	}
	for i := range d.Examples {
		ex := &d.Examples[i]
		fill(&ex.Kept)
		for j := range ex.Members {
			fill(&ex.Members[j])
		}
	}
	return d
}

// withCopies writes the shipped corpus to a JSONL file in dir with ten
// byte-identical copies of each of its three longest documents, whose
// clusters then become the largest: a report whose examples show identical
// bodies of long texts.
func withCopies(t *testing.T, dir string) string {
	t.Helper()
	r, err := corpus.Open([]string{shipped}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type doc struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	var docs []doc
	for r.Next() {
		docs = append(docs, doc{r.Doc().ID, string(r.Doc().Body)})
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	long := slices.Clone(docs)
	slices.SortStableFunc(long, func(a, b doc) int { return len(b.Text) - len(a.Text) })
	for _, d := range long[:3] {
		for i := range 10 {
			docs = append(docs, doc{fmt.Sprintf("%s (copy %d)", d.ID, i+1), d.Text})
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "copies.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDedupReportInBrowser renders the HTML report of the shipped corpus,
// and of the corpus with identical copies of its longest documents, in a
// real headless Chromium and checks each as a reader would meet it, at a
// desktop and a narrow window width: the page is shorter than 5,000 CSS
// pixels (at 1280 px), nothing scrolls sideways, no text runs out of its
// box, the three plots are shown with texts inside the image, not
// overlapping, and at least 11 px tall. It leaves full-page screenshots in
// its temporary directory (or in $NEARDUP_REPORT_SCREENSHOTS when set, to
// look at them).
func TestDedupReportInBrowser(t *testing.T) {
	bin := chromium(t) // fail (or, with -short, skip) before any work without one
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	if d := os.Getenv("NEARDUP_REPORT_SCREENSHOTS"); d != "" {
		dir = d
	}
	tab := browser(t, ctx, bin)
	for _, c := range []struct{ name, input string }{
		{"shipped", shipped},
		{"copies", withCopies(t, t.TempDir())},
	} {
		data := reportData(t, ctx, c.input)
		path := filepath.Join(dir, c.name+".html")
		var page bytes.Buffer
		if err := report.Dedup(&page, data); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.name == "copies" && !strings.Contains(page.String(), "Identical to the kept document") {
			t.Errorf("%s: no identical member among the examples", c.name)
		}
		for _, width := range []int64{1280, 800} {
			l, png, err := inspect(tab, fileURL(t, path), width)
			if err != nil {
				t.Fatalf("%s, width %d: %v", c.name, width, err)
			}
			shot := filepath.Join(dir, fmt.Sprintf("%s-%d.png", c.name, width))
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, width %d: page %.0f x %.0f px, smallest plot text %.1f px; screenshot %s", c.name, width, l.Width, l.Height, l.MinFont, shot)
			at := fmt.Sprintf("%s, width %d", c.name, width)
			if width == 1280 && l.Height >= 5000 {
				t.Errorf("%s: page is %.0f px high, want < 5000", at, l.Height)
			}
			if l.Width > l.Viewport {
				t.Errorf("%s: page scrolls sideways: %.0f px wide", at, l.Width)
			}
			for _, o := range l.Overflows {
				t.Errorf("%s: text overflows its box: %s", at, o)
			}
			if len(l.Plots) != 3 {
				t.Errorf("%s: %d plots, want 3", at, len(l.Plots))
			}
			for i, p := range l.Plots {
				if !p.Complete || p.NaturalWidth <= 0 || p.NaturalHeight <= 0 || p.ShownWidth <= 0 || p.ShownHeight <= 0 {
					t.Errorf("%s: plot %d (%s) not shown: %+v", at, i+1, p.Tag, p)
				}
			}
			for _, s := range l.TextOutside {
				t.Errorf("%s: text outside its plot: %s", at, s)
			}
			for _, s := range l.TextOverlaps {
				t.Errorf("%s: plot texts overlap: %s", at, s)
			}
			if l.MinFont < 11 {
				t.Errorf("%s: plot text shown %.1f px tall, want >= 11", at, l.MinFont)
			}
		}
	}
}
