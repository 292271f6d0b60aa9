// Command perf measures, in one run, every figure of the speed table of
// issue 14 — OPH sketching of pre-extracted shingles, feature extraction,
// raw text to sketch on one and on two cores, dedup of 100k documents in
// CPU-seconds and of 1M documents in wall seconds and peak RSS — beside the
// Go peers measured in the same run and the floor (one hash per shingle),
// and prints it as Markdown. With -page it also saves the run's numbers
// as results/<cpu kind>.json and rewrites that page (docs/performance.md)
// from every saved result: one table per CPU kind, each headed by the CPU
// model and its instruction sets, so the page is never typed by hand and
// a run on one kind of CPU keeps the others' tables. -regen rewrites the
// page from the saved results without running anything.
//
// It builds and runs the sibling benchmarks as child processes: ./sketch
// (-json; one locked thread, thread CPU time, contenders interleaved) and
// ./dedup (-out; each configuration in its own child with GOMAXPROCS 2, CPU
// seconds from the OS, peak RSS from VmHWM). Python peers (datasketch,
// text-dedup) are named with whether they are installed; they are not run
// by this program.
//
// Usage (from the bench directory):
//
//	go run ./perf [-docs 4000] [-reps 5] [-n 100000] [-words 300] [-n1m 0] [-keep DIR] [-page ../docs/performance.md]
//	go run ./perf -regen [-page ../docs/performance.md]
//
// The 1M run (-n1m 1000000) generates 7 GB of JSONL under -keep (reused by
// later runs) and takes a few minutes on two cores; it is off by default.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type options struct {
	docs, reps, k   int
	n, words, n1m   int
	keep, page, tmp string
	out, results    string
	tags            string
	peers, regen    bool
}

func main() {
	var o options
	flag.IntVar(&o.docs, "docs", 4000, "documents of the sketch benchmark (1,000 words each)")
	flag.IntVar(&o.reps, "reps", 5, "timed repetitions of the sketch benchmark")
	flag.IntVar(&o.k, "k", 128, "samples per sketch")
	flag.IntVar(&o.n, "n", 100000, "documents of the dedup CPU-seconds run (0 = skip)")
	flag.IntVar(&o.words, "words", 300, "words per document of the dedup CPU-seconds run")
	flag.IntVar(&o.n1m, "n1m", 0, "documents of the large dedup run, 1,000 words each (1000000 for the issue's figure; 0 = skip)")
	flag.BoolVar(&o.peers, "peers", true, "run ekzhu/minhash-lsh in the dedup CPU-seconds run")
	flag.StringVar(&o.keep, "keep", "", "directory for the generated dedup corpora, reused across runs (default: temporary)")
	flag.StringVar(&o.page, "page", "", "save the run as -results/<cpu kind>.json and rewrite this page (../docs/performance.md) from every saved result")
	flag.StringVar(&o.results, "results", "perf/results", "directory of the saved results, one JSON file per CPU kind")
	flag.BoolVar(&o.regen, "regen", false, "run nothing: rewrite -page (default ../docs/performance.md) from the saved results")
	flag.StringVar(&o.tags, "tags", "", "build tags of the benchmarks (purego: the pure-Go kernels, as on arm64)")
	flag.StringVar(&o.tmp, "tmp", os.TempDir(), "where temporary directories go")
	flag.StringVar(&o.out, "out", "", "directory to keep the children's results in (sketch.json, dedup-small/, dedup-large/) and the table (perf.md)")
	flag.Parse()
	run := run
	if o.regen {
		if o.page == "" {
			o.page = "../docs/performance.md"
		}
		run = func(o options, _, stderr io.Writer) error { return writePage(o.page, o.results) }
	}
	if err := run(o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench/perf:", err)
		os.Exit(1)
	}
}

// sketchReport is the part of ./sketch -json that the table uses.
type sketchReport struct {
	Go      string `json:"go"`
	CPU     string `json:"cpu"`
	Kernels string `json:"kernels"`
	Results []struct {
		Name       string  `json:"name"`
		Lib        string  `json:"lib"`
		Kind       string  `json:"kind"`
		DocsPerSec float64 `json:"docs_per_sec"`
		NsPerDoc   float64 `json:"ns_per_doc"`
	} `json:"results"`
	ShinglesPerDoc  float64 `json:"shingles_per_doc"`
	TextBytesPerDoc float64 `json:"text_bytes_per_doc"`
	CJKBytesPerDoc  float64 `json:"cjk_bytes_per_doc"`
	Parallel        []struct {
		Workers        int     `json:"workers"`
		WallDocsPerSec float64 `json:"wall_docs_per_sec"`
		CPUDocsPerSec  float64 `json:"cpu_docs_per_sec"`
		Speedup        float64 `json:"speedup"`
	} `json:"parallel"`
}

func (r *sketchReport) docsPerSec(name string) float64 {
	for _, x := range r.Results {
		if x.Name == name {
			return x.DocsPerSec
		}
	}
	return 0
}

// dedupReport is the part of ./dedup's results.json that the table uses.
type dedupReport struct {
	LoadBefore string `json:"loadavg_before"`
	Corpus     struct {
		N     int `json:"n"`
		Words int `json:"words"`
	} `json:"corpus"`
	Runs []dedupRun `json:"runs"`
}

// dedupRun is one configuration of a dedup run.
type dedupRun struct {
	Config       string  `json:"config"`
	Docs         int64   `json:"docs"`
	Seconds      float64 `json:"seconds"`
	CPU          float64 `json:"cpu_seconds"`
	Pairs        int     `json:"pairs"`
	PeakRSS      int64   `json:"peak_rss_bytes"`
	HeldBytesDoc float64 `json:"held_bytes_per_doc"`
	Recall       map[string]struct {
		Recall float64 `json:"recall"`
	} `json:"recall"`
}

func (r *dedupReport) run(config string) *dedupRun {
	if r == nil {
		return nil
	}
	for i := range r.Runs {
		if r.Runs[i].Config == config {
			return &r.Runs[i]
		}
	}
	return nil
}

func run(o options, stdout, stderr io.Writer) error {
	if _, err := os.Stat("sketch"); err != nil {
		return errors.New("run from the bench directory (cd bench && go run ./perf)")
	}
	work, err := os.MkdirTemp(o.tmp, "neardup-perf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	results := work
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		results = o.out
	}
	keep := o.keep
	if keep == "" {
		keep = filepath.Join(work, "corpora")
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "perf: "+format+"\n", args...) }
	for _, p := range []string{"sketch", "dedup"} {
		logf("building ./%s", p)
		cmd := exec.Command("go", "build", "-tags", o.tags, "-o", filepath.Join(work, p), "./"+p)
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building ./%s: %w", p, err)
		}
	}
	started := time.Now()
	load := loadavg()

	logf("sketch: %d documents, %d repetitions (load %s)", o.docs, o.reps, loadavg())
	out, err := child(stderr, filepath.Join(work, "sketch"), "-json", "-k", fmt.Sprint(o.k), "-docs", fmt.Sprint(o.docs),
		"-reps", fmt.Sprint(o.reps), "-samplers", "oph", "-raw", "oph", "-cpu", "1", "-cores", "2")
	if err != nil {
		return err
	}
	var sk sketchReport
	if err := json.Unmarshal(out, &sk); err != nil {
		return fmt.Errorf("./sketch output: %w", err)
	}
	if err := os.WriteFile(filepath.Join(results, "sketch.json"), out, 0o644); err != nil {
		return err
	}

	var small, large *dedupReport
	if o.n > 0 {
		args := []string{"-n", fmt.Sprint(o.n), "-words", fmt.Sprint(o.words), "-memstore=false", "-queries", "200",
			"-peers=" + fmt.Sprint(o.peers), "-k", fmt.Sprint(o.k), "-tmp", o.tmp}
		if small, err = dedupRunOf(stderr, work, results, keep, "small", args, logf); err != nil {
			return err
		}
	}
	if o.n1m > 0 {
		args := []string{"-n", fmt.Sprint(o.n1m), "-words", "1000", "-memstore=false", "-queries", "200", "-peers=false",
			"-precision-sample", "2000", "-k", fmt.Sprint(o.k), "-tmp", o.tmp}
		if large, err = dedupRunOf(stderr, work, results, keep, "large", args, logf); err != nil {
			return err
		}
	}
	rec := record{
		Command: command(o), Took: time.Since(started).Round(time.Second).String(),
		Go: sk.Go, CPU: sk.CPU, CPUs: runtime.NumCPU(), ISA: instructionSets(), Load: load,
		Kernels: sk.Kernels, Switch: kernelSwitch(o.tags),
		Docs: o.docs, Reps: o.reps, K: o.k,
		TextDedup: peerState("text_dedup"), Datasketch: peerState("datasketch"),
		Sketch: &sk, Small: small, Large: large,
	}
	md := table(&rec)
	if _, err := io.WriteString(stdout, md); err != nil {
		return err
	}
	if o.out != "" {
		if err := os.WriteFile(filepath.Join(o.out, "perf.md"), []byte(md), 0o644); err != nil {
			return err
		}
	}
	if o.page != "" {
		if err := saveRecord(o.results, &rec); err != nil {
			return err
		}
		if err := writePage(o.page, o.results); err != nil {
			return err
		}
		logf("saved %s and rewrote %s", recordPath(o.results, &rec), o.page)
	}
	return nil
}

func dedupRunOf(stderr io.Writer, work, results, keep, name string, args []string, logf func(string, ...any)) (*dedupReport, error) {
	outDir := filepath.Join(results, "dedup-"+name)
	corpus := filepath.Join(keep, fmt.Sprintf("corpus-%s", strings.Join(args[:4], "")))
	if err := os.MkdirAll(corpus, 0o755); err != nil {
		return nil, err
	}
	logf("dedup %s (load %s)", strings.Join(args[:4], " "), loadavg())
	args = append(args, "-keep", corpus, "-out", outDir)
	if _, err := child(stderr, filepath.Join(work, "dedup"), args...); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(outDir, "results.json"))
	if err != nil {
		return nil, err
	}
	var r dedupReport
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("./dedup results.json: %w", err)
	}
	return &r, nil
}

// child runs a benchmark and returns its standard output; its standard
// error (progress) goes to stderr.
func child(stderr io.Writer, name string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// pythonPeer reports whether a Python module is importable here.
func pythonPeer(module string) bool {
	return exec.Command("python3", "-c", "import "+module).Run() == nil
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

// num formats n with thousands separators.
func num(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[0] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func table(r *record) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	sk, small, large := r.Sketch, r.Small, r.Large
	w("## %s\n\n", r.title())
	isa := r.ISA
	if isa == "" {
		isa = "not recorded by this run"
	}
	w("%d CPUs; instruction sets: %s", r.CPUs, isa)
	if r.Kernels != "" {
		w("; extraction kernels: %s", r.Kernels)
		if r.Switch != "" {
			w(" (by %s)", r.Switch)
		}
	}
	w(".\n\n")
	w("Generated by `%s` (bench/perf; never edited by hand) in %s, %s; load average %s at the start. ",
		r.Command, r.Took, r.Go, r.Load)
	w("Sketch figures are documents per second of one locked thread's CPU time (contenders interleaved, median of %d repetitions, k = %d, %d documents of 1,000 Zipf words, %.0f distinct 5-shingles each); the 2-core figure is by wall clock, which other processes on a shared machine lower. ",
		r.Reps, r.K, r.Docs, sk.ShinglesPerDoc)
	w("dedup figures come from `bench/dedup`, each configuration in its own process with GOMAXPROCS 2: CPU seconds (user + system) and peak RSS from the OS.\n\n")

	floor := sk.docsPerSec("one hash per shingle")
	oph := sk.docsPerSec("oph")
	minwise, ekzhu := sk.docsPerSec("dgryski-minwise"), sk.docsPerSec("ekzhu-minhash")
	extract := sk.docsPerSec("extract 5-shingles")
	raw := sk.docsPerSec("extract + oph")
	nsShingle := func(dps float64) float64 { return 1e9 / dps / sk.ShinglesPerDoc }

	w("| measure | neardup | peers (same run) | floor | goal | met |\n| --- | --- | --- | --- | --- | --- |\n")
	w("| OPH sketch, pre-extracted shingles, 1,000-word doc, 1 core | %s docs/s | dgryski MinWise %s docs/s (%.1f×), ekzhu Minhash %s docs/s (%.1f×) | one hash per shingle: %s docs/s | ≥ 200,000 docs/s | %s |\n",
		num(oph), num(minwise), oph/minwise, num(ekzhu), oph/ekzhu, num(floor), met(oph >= 200000))
	w("| feature extraction (tokenize, fold, 5-shingle fingerprints), 1 core | %s docs/s = %.1f ns/shingle | — | one hash per shingle: %.1f ns/shingle | ≤ 12 ns/shingle (≥ 80,000 docs/s) | %s |\n",
		num(extract), nsShingle(extract), nsShingle(floor), met(nsShingle(extract) <= 12))
	par := ""
	if len(sk.Parallel) >= 2 {
		p1, p2 := sk.Parallel[0], sk.Parallel[1]
		par = fmt.Sprintf("; 2 goroutines: %s docs/s wall (%.2f× the 1-goroutine %s docs/s wall; %s docs per CPU-second)",
			num(p2.WallDocsPerSec), p2.Speedup, num(p1.WallDocsPerSec), num(p2.CPUDocsPerSec))
	}
	w("| raw text → OPH sketch | 1 core: %s docs/s%s | — | — | ≥ 60,000 docs/s per core | %s |\n", num(raw), par, met(raw >= 60000))
	if cjk := sk.docsPerSec("cjk extract + oph"); cjk > 0 {
		eb, cb := raw*sk.TextBytesPerDoc, cjk*sk.CJKBytesPerDoc
		w("| CJK text → OPH sketch (real Chinese and Japanese manual pages, testdata/multilingual), bytes/s per core | 1 core: %s MB/s (%s docs/s of %.0f bytes) | — | — | ≥ half the English row's bytes/s: %s MB/s | %s |\n",
			fmt.Sprintf("%.1f", cb/1e6), num(cjk), sk.CJKBytesPerDoc, fmt.Sprintf("%.1f", eb/2e6), met(cb >= eb/2))
	}

	if large != nil {
		bt, pb := large.run("batch"), large.run("pebble")
		cell := func(r *dedupRun) string {
			if r == nil {
				return "not run"
			}
			return fmt.Sprintf("%.1f s, %.1f CPU-s, peak RSS %s", r.Seconds, r.CPU, gib(r.PeakRSS))
		}
		ok := bt != nil && pb != nil && bt.Seconds <= 15 && pb.Seconds <= 30 && max(bt.PeakRSS, pb.PeakRSS) <= 3<<29
		w("| `dedup` %s × %d-word docs, 2 cores | in memory: %s; on Pebble: %s | %s | — | ≤ 15 s in memory, ≤ 30 s on Pebble, RSS ≤ 1.5 GiB | %s |\n",
			num(float64(large.Corpus.N)), large.Corpus.Words, cell(bt), cell(pb), "text-dedup: "+r.TextDedup, met(ok))
	} else {
		w("| `dedup` 1M 1,000-word docs, 2 cores | not run (-n1m 0) | | | ≤ 15 s in memory, ≤ 30 s on Pebble, RSS ≤ 1.5 GiB | |\n")
	}
	if small != nil {
		bt, pb, ek := small.run("batch"), small.run("pebble"), small.run("ekzhu/minhash-lsh")
		cell := func(r *dedupRun) string {
			if r == nil {
				return "not run"
			}
			return fmt.Sprintf("%.1f CPU-s (%.1f s wall, peak RSS %s)", r.CPU, r.Seconds, gib(r.PeakRSS))
		}
		peer := "datasketch: " + r.Datasketch
		if ek != nil {
			peer = fmt.Sprintf("ekzhu/minhash-lsh (candidates only): %.1f CPU-s; %s", ek.CPU, peer)
		}
		ok := bt != nil && pb != nil && pb.CPU <= 8 && bt.CPU <= 8
		w("| `dedup` %s synthetic %d-word docs | in memory: %s; on Pebble: %s | %s | — | ≤ 8 CPU-s | %s |\n",
			num(float64(small.Corpus.N)), small.Corpus.Words, cell(bt), cell(pb), peer, met(ok))
	}
	w("\n")
	for _, rep := range []*dedupReport{small, large} {
		if bt := rep.run("batch"); bt != nil {
			w("Batch-path state at %s documents: %s bytes per document held after the run (live heap / documents: sketches kept for verification, names, pairs), peak RSS %s bytes per document.\n",
				num(float64(rep.Corpus.N)), num(bt.HeldBytesDoc), num(float64(bt.PeakRSS)/float64(rep.Corpus.N)))
		}
	}
	return b.String()
}

func peerState(module string) string {
	if pythonPeer(module) {
		return "installed, not run by bench/perf"
	}
	return "not installed here (no PyPI access), not run"
}
