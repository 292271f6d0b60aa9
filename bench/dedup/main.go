// Command dedup benchmarks neardup's whole near-duplicate pipeline
// (dedup.Run: read, fingerprint, extract, sketch, index, verify, cluster) on
// a generated corpus, and the same corpus through
// github.com/ekzhu/minhash-lsh, in one run.
//
// The corpus is generated on the fly into a temporary directory (or -keep
// DIR, reused when its manifest matches): N documents of 1,000 words drawn
// Zipf(1.0) from 50,000 generated words; about 10% are near-duplicate
// variants of an earlier base document, made by substituting words at
// random positions, aimed at exact 5-shingle Jaccard levels 0.5 to 0.99.
// Every document is a pure function of the seed and its index, so the
// program regenerates any document to compute exact Jaccard (with neardup's
// feature extractor, the features dedup sees) for planted and for reported
// pairs without keeping the corpus in memory. A few thousand held-out
// variants (queries.jsonl) are used to time streaming queries.
//
// Each configuration runs in a child process (the program re-executes
// itself with -child), with GOMAXPROCS 2, so peak RSS (VmHWM) and the Go
// heap peak (runtime/metrics, sampled every 20 ms) are per configuration:
// "batch" (dedup.Run without a store: the in-memory sort-join), "memstore"
// (an index.Index over store.NewMemory) and "pebble" (over store.OpenPebble
// in a temporary directory), then "ekzhu" (the peer). The parent prints a
// Markdown report and writes results.json and results.md to -out.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

type flags struct {
	n               int
	words           int
	k               int
	threshold       float64
	out             string
	keep            string
	peers           bool
	pebble          bool
	memstore        bool
	batch           bool
	queries         int
	seed            uint64
	compress        string
	precisionSample int
	tmp             string
	exact           string
	memoryMiB       int64
	profile         string

	child     string // internal: run one configuration
	corpusDir string // internal
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench/dedup:", err)
	os.Exit(1)
}

func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(string(b), &l)
	return l
}

func main() {
	var o flags
	flag.IntVar(&o.n, "n", 100000, "documents in the corpus")
	flag.IntVar(&o.words, "words", 1000, "words per document")
	flag.IntVar(&o.k, "k", 128, "samples per sketch (neardup) and hash functions (ekzhu)")
	flag.Float64Var(&o.threshold, "threshold", 0.8, "similarity threshold")
	flag.StringVar(&o.out, "out", "", "directory for results.json and results.md (default: print only)")
	flag.StringVar(&o.keep, "keep", "", "directory holding (or to hold) the generated corpus, reused across invocations; default a temporary directory removed at exit")
	flag.BoolVar(&o.peers, "peers", true, "run ekzhu/minhash-lsh on the same corpus")
	flag.BoolVar(&o.pebble, "pebble", true, "run dedup over a Pebble store")
	flag.BoolVar(&o.memstore, "memstore", true, "run dedup over an in-memory store (index.Index over store.NewMemory)")
	flag.BoolVar(&o.batch, "batch", true, "run dedup's in-memory batch path (no store)")
	flag.IntVar(&o.queries, "queries", 2000, "held-out near-duplicate documents for query latency")
	flag.Uint64Var(&o.seed, "seed", 1, "corpus seed")
	flag.StringVar(&o.compress, "compress", "none", "corpus file compression: none or zstd")
	flag.IntVar(&o.precisionSample, "precision-sample", 20000, "reported near pairs whose exact Jaccard is computed (a deterministic stride sample)")
	flag.StringVar(&o.tmp, "tmp", os.TempDir(), "where temporary directories go")
	flag.StringVar(&o.exact, "exact", "never", "dedup verification: never (sketch estimate), auto or always (exact Jaccard, feature sets kept in memory: ~8 KB/doc)")
	flag.Int64Var(&o.memoryMiB, "memory-mib", 0, "also run the batch path out of core (\"external\") with this memory budget in MiB (dedup.Options.Memory; also the Go memory limit)")
	flag.StringVar(&o.profile, "profile", "", "directory for a CPU profile and an execution trace of each configuration's dedup.Run (CONFIG.cpu.pprof, CONFIG.trace)")
	flag.StringVar(&o.child, "child", "", "internal: run one configuration and print its JSON result")
	flag.StringVar(&o.corpusDir, "corpus", "", "internal: corpus directory for -child")
	flag.Parse()

	if o.child != "" {
		runtime.GOMAXPROCS(2)
		var r childResult
		if o.child == "ekzhu" {
			r = runPeerChild(o)
		} else {
			r = runDedupChild(o)
		}
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fatal(err)
		}
		return
	}
	if err := parent(o); err != nil {
		fatal(err)
	}
}

// report is the whole result of one invocation.
type report struct {
	Command    string        `json:"command"`
	Go         string        `json:"go"`
	CPUs       int           `json:"cpus"`
	CPUModel   string        `json:"cpu_model"`
	LoadBefore string        `json:"loadavg_before"`
	K          int           `json:"k"`
	Exact      string        `json:"exact"`
	Threshold  float64       `json:"threshold"`
	Corpus     genConfig     `json:"corpus"`
	Bytes      int64         `json:"corpus_bytes"`
	Reused     bool          `json:"corpus_reused"`
	GenSeconds float64       `json:"gen_seconds"`
	GenCPU     float64       `json:"gen_cpu_seconds"`
	Planted    plantStats    `json:"planted"`
	Runs       []childResult `json:"runs"`
	ChildCPU   []float64     `json:"child_process_cpu_seconds"` // from the OS, whole child
}

type plantStats struct {
	Pairs      int     `json:"pairs"`
	AtLeast8   int     `json:"exact_ge_0.8"`
	AtLeast9   int     `json:"exact_ge_0.9"`
	MeanAbsErr float64 `json:"mean_abs_target_error"`
}

func parent(o flags) error {
	dir := o.keep
	if dir == "" {
		d, err := os.MkdirTemp(o.tmp, "neardup-bench-dedup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	cfg := genConfig{N: o.n, Words: o.words, Vocab: 50000, Zipf: 1.0, VarFrac: 0.1, Queries: o.queries, Seed: o.seed, Compress: o.compress}
	rep := report{Command: strings.Join(os.Args, " "), Go: runtime.Version(), CPUs: runtime.NumCPU(), CPUModel: cpuModel(), LoadBefore: loadavg(), K: o.k, Exact: o.exact, Threshold: o.threshold, Corpus: cfg}
	fmt.Fprintf(os.Stderr, "corpus: %d documents into %s (load %s)\n", o.n, dir, rep.LoadBefore)
	cpu0 := cpuSeconds()
	m, reused, err := loadOrGenerate(dir, cfg, os.Stderr)
	if err != nil {
		return err
	}
	if !reused {
		rep.GenCPU = cpuSeconds() - cpu0
	}
	rep.Bytes, rep.Reused, rep.GenSeconds = m.Bytes, reused, m.GenSeconds
	for _, p := range m.Plants {
		rep.Planted.Pairs++
		if p.Exact >= 0.8 {
			rep.Planted.AtLeast8++
		}
		if p.Exact >= 0.9 {
			rep.Planted.AtLeast9++
		}
		rep.Planted.MeanAbsErr += abs(p.Exact - p.Target)
	}
	if rep.Planted.Pairs > 0 {
		rep.Planted.MeanAbsErr /= float64(rep.Planted.Pairs)
	}
	fmt.Fprintf(os.Stderr, "corpus: %.2f GB, %d planted pairs (%d with J >= 0.8), generated in %.1f s (reused: %v)\n",
		float64(m.Bytes)/1e9, rep.Planted.Pairs, rep.Planted.AtLeast8, m.GenSeconds, reused)

	var configs []string
	if o.batch {
		configs = append(configs, "batch")
	}
	if o.memoryMiB > 0 {
		configs = append(configs, "external")
	}
	if o.memstore {
		configs = append(configs, "memstore")
	}
	if o.pebble {
		configs = append(configs, "pebble")
	}
	if o.peers {
		configs = append(configs, "ekzhu")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, c := range configs {
		fmt.Fprintf(os.Stderr, "run %s (load %s)\n", c, loadavg())
		args := []string{"-child", c, "-corpus", dir, "-k", fmt.Sprint(o.k), "-threshold", fmt.Sprint(o.threshold),
			"-precision-sample", fmt.Sprint(o.precisionSample), "-tmp", o.tmp, "-exact", o.exact, "-memory-mib", fmt.Sprint(o.memoryMiB), "-profile", o.profile}
		cmd := exec.Command(self, args...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("child %s: %w", c, err)
		}
		var r childResult
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return fmt.Errorf("child %s: %w", c, err)
		}
		ps := cmd.ProcessState
		rep.Runs = append(rep.Runs, r)
		rep.ChildCPU = append(rep.ChildCPU, (ps.UserTime() + ps.SystemTime()).Seconds())
		if err := save(o.out, &rep); err != nil { // partial results survive an interrupted run
			return err
		}
	}
	fmt.Print(markdown(&rep))
	return nil
}

// save writes results.json and results.md to out (if set).
func save(out string, rep *report) error {
	if out == "" {
		return nil
	}
	md := markdown(rep)
	{
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "results.json"), b, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "results.md"), []byte(md), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
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

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "?"
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

func stageSec(r childResult, name string) float64 {
	for _, s := range r.Stages {
		if s.Name == name {
			return s.Seconds
		}
	}
	return 0
}

// markdown renders the report as tables.
func markdown(rep *report) string {
	var b strings.Builder
	c := rep.Corpus
	fmt.Fprintf(&b, "## bench/dedup: %d documents × %d words (%.2f GB JSONL%s)\n\n", c.N, c.Words, float64(rep.Bytes)/1e9, map[bool]string{true: ", zstd", false: ""}[c.Compress == "zstd"])
	fmt.Fprintf(&b, "`%s` — %s, %d CPUs (%s), load average before: %s; every configuration in its own child process with GOMAXPROCS=2; k = %d, threshold %g, dedup verification -exact %s.\n\n", rep.Command, rep.Go, rep.CPUs, rep.CPUModel, rep.LoadBefore, rep.K, rep.Threshold, rep.Exact)
	fmt.Fprintf(&b, "Corpus generated in %.1f s wall, %.1f s CPU (2 goroutines, including exact J of planted pairs%s); %d planted pairs, %d with exact J ≥ 0.8, %d with J ≥ 0.9 (mean |exact − target| %.3f); %d held-out queries.\n\n",
		rep.GenSeconds, rep.GenCPU, map[bool]string{true: ", reused from -keep", false: ""}[rep.Reused], rep.Planted.Pairs, rep.Planted.AtLeast8, rep.Planted.AtLeast9, rep.Planted.MeanAbsErr, c.Queries)

	b.WriteString("### End to end\n\n")
	b.WriteString("| configuration | wall s | docs/s | CPU s (child) | load1 | sketch s | index s | verify s | cluster s | candidates | pairs | peak RSS | peak Go heap | index B/doc | recall J≥0.8 | recall J≥0.85 | recall J≥0.9 | precision (J≥0.7) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rep.Runs {
		r8, r85, r9 := r.RecallPlanted["J>=0.8"], r.RecallPlanted["J>=0.85"], r.RecallPlanted["J>=0.9"]
		prec := "—"
		if r.Precision != nil && r.Precision.Checked > 0 {
			prec = fmt.Sprintf("%.4f (%d checked, min J %.3f)", r.Precision.Value, r.Precision.Checked, r.Precision.MinJ)
		}
		if r.Config == "ekzhu/minhash-lsh" {
			fmt.Fprintf(&b, "| %s | %.1f | %.0f | %.1f | %.1f | %.1f (gen+extract+minhash) | %.1f (Add+Index) | %.1f (Query all, no verify) | — | %d | %d | %s | %s | %.0f | %.4f (%d/%d, candidates) | %.4f (%d/%d) | %.4f (%d/%d) | — |\n",
				r.Config, r.Seconds, r.DocsPS, rep.ChildCPU[i], r.Load1, stageSec(r, "generate+extract+sketch"), r.InsertSec, r.QueryAllSec,
				r.PeerCandidates, r.Pairs, gib(r.PeakRSS), gib(r.PeakHeap), r.IndexBytesDoc, r8.Recall, r8.Found, r8.Planted, r85.Recall, r85.Found, r85.Planted, r9.Recall, r9.Found, r9.Planted)
			continue
		}
		fmt.Fprintf(&b, "| neardup %s | %.1f | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %d | %d | %s | %s | %.1f | %.4f (%d/%d) | %.4f (%d/%d) | %.4f (%d/%d) | %s |\n",
			r.Config, r.Seconds, r.DocsPS, rep.ChildCPU[i], r.Load1, stageSec(r, "sketch"), stageSec(r, "index"), stageSec(r, "verify"), stageSec(r, "cluster"),
			r.Candidates, r.Pairs, gib(r.PeakRSS), gib(r.PeakHeap), r.IndexBytesDoc, r8.Recall, r8.Found, r8.Planted, r85.Recall, r85.Found, r85.Planted, r9.Recall, r9.Found, r9.Planted, prec)
	}
	b.WriteString("\nRecall by target level (planted pairs found / planted; exact J of the level in brackets):\n\n| configuration |")
	for _, l := range levels {
		fmt.Fprintf(&b, " %g |", l)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(levels)) + "\n")
	for _, r := range rep.Runs {
		fmt.Fprintf(&b, "| %s |", r.Config)
		for _, l := range levels {
			x := r.ByLevel[fmt.Sprint(l)]
			fmt.Fprintf(&b, " %.3f [%.3f–%.3f] |", x.Recall, x.MinJ, x.MaxJ)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nIndex bytes per document:\n\n")
	for _, r := range rep.Runs {
		fmt.Fprintf(&b, "- %s: %.1f B/doc — %s", r.Config, r.IndexBytesDoc, r.IndexNote)
		if r.HeldBytesDoc > 0 {
			fmt.Fprintf(&b, "; live heap after the run %.0f B/doc (sketches kept for verification, Docs, Pairs)", r.HeldBytesDoc)
		}
		if r.LSH != "" {
			fmt.Fprintf(&b, "; LSH %s", r.LSH)
		}
		if r.PeerLSH != "" {
			fmt.Fprintf(&b, "; %s", r.PeerLSH)
		}
		b.WriteString("\n")
	}

	b.WriteString("\n### Like with like: index + query of precomputed sketches\n\n")
	b.WriteString("| | sketching (neardup: stage wall s; ekzhu: thread CPU s summed over 2 goroutines) | insert / index s | inserts/s | query / verify s | queries/s |\n|---|---|---|---|---|---|\n")
	for _, r := range rep.Runs {
		if r.Config == "ekzhu/minhash-lsh" {
			fmt.Fprintf(&b, "| ekzhu MinhashLSH64 | extract %.1f + Minhash(k=%d) %.1f (neardup OPH on the same features: %.1f) | %.2f | %.0f | %.2f | %.0f |\n",
				r.ExtractSec, rep.K, r.SketchSec, r.NeardupSketch, r.InsertSec, r.InsertsPS, r.QueryAllSec, r.QueriesPS)
			continue
		}
		ix, vf := stageSec(r, "index"), stageSec(r, "verify")
		vItems := r.Docs
		for _, s := range r.Stages {
			if s.Name == "verify" {
				vItems = s.Items
			}
		}
		unit := "docs queried"
		if r.Config == "batch" || r.Config == "external" {
			unit = "candidate pairs verified"
		}
		fmt.Fprintf(&b, "| neardup %s | read+extract+OPH stage %.1f s wall | %.2f | %.0f | %.2f | %.0f %s/s |\n", r.Config, stageSec(r, "sketch"), ix, float64(r.Docs)/ix, vf, float64(vItems)/vf, unit)
	}

	b.WriteString("\n### Streaming queries (held-out near-duplicates, one at a time, after indexing)\n\n")
	b.WriteString("| index | queries | p50 µs | p99 µs | mean µs | queries/s | recall J≥0.8 |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Runs {
		if q := r.Query; q != nil {
			name := "neardup index.Query over " + r.Config
			if r.Config == "ekzhu/minhash-lsh" {
				name = "ekzhu Query (candidates only)"
			}
			fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %.1f | %.0f | %.4f (%d/%d) |\n", name, q.Queries, q.P50us, q.P99us, q.MeanUS, q.PerSec, q.Recall.Recall, q.Recall.Found, q.Recall.Planted)
		}
	}
	b.WriteString("\n")
	return b.String()
}
