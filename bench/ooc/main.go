// Command ooc benchmarks out-of-core dedup (dedup.Options.Memory) on a
// corpus that never touches the disk: the parent generates N documents of
// W words (Zipf(1.0) over 50,000 generated words), a fraction of them
// (-dup, 5% by default) near-duplicates of an earlier document made by
// substituting 1 to 3 words, and streams them as JSONL through a pipe into
// a child process's standard input. The child reads "-" with package
// corpus, as the command line does, and runs dedup.Run under the budget
// (also its Go memory limit, as neardup dedup sets it), in memory when
// -memory-mib is 0.
//
// -exact passes --exact (Options.Exact) through; by default the run has
// the default settings (auto: exact at every scale under a budget), and
// the report says how the pairs were verified and how many near pairs
// the command reported below the threshold.
//
// By default the child runs the library pipeline — read, sketch, join,
// verify, cluster — and writes no kept corpus. With -neardup BINARY the
// child is the real command instead, `BINARY dedup - --memory M --out DIR`
// (and --exact E with -exact E), which spools standard input (zstd) into its work
// directory and writes every output, the kept corpus (kept/stdin.jsonl.zst)
// included; the recall is then read from DIR/pairs.jsonl and the spill from
// DIR/summary.json, and the parent also samples the disk DIR takes (peak,
// and the spool's size) every second. DIR is removed after measuring.
//
// The parent reports, per configuration, the child's wall time, CPU
// seconds and peak RSS (from its rusage), the load average, the recall of
// the planted pairs, and the bytes spilled per document (the sketch file
// and the compressed sorted runs, apart).
//
//	go run ./ooc -n 1000000 -memory-mib 512 -compare
//	go run ./ooc -n 10000000 -memory-mib 4096
//	go build -o /tmp/neardup ../cmd/neardup && go run ./ooc -neardup /tmp/neardup -n 1000000 -memory-mib 512
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sample"
)

type flags struct {
	n         int
	words     int
	dup       float64
	memoryMiB int64
	compare   bool
	seed      uint64
	k         int
	threshold float64
	workers   int
	tmp       string
	out       string
	neardup   string // the neardup binary run as the child, "" for the library child
	exact     string // --exact of the command (and the library child's mode); "" the default

	child string // internal: the file the child writes its pairs to
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench/ooc:", err)
	os.Exit(1)
}

func main() {
	var o flags
	flag.IntVar(&o.n, "n", 1000000, "documents streamed")
	flag.IntVar(&o.words, "words", 200, "words per document")
	flag.Float64Var(&o.dup, "dup", 0.05, "fraction of documents that are planted near-duplicates of an earlier one")
	flag.Int64Var(&o.memoryMiB, "memory-mib", 512, "memory budget in MiB (dedup.Options.Memory and the Go memory limit); 0: in memory")
	flag.BoolVar(&o.compare, "compare", false, "also run in memory (no budget) on the same stream")
	flag.Uint64Var(&o.seed, "seed", 1, "corpus seed")
	flag.IntVar(&o.k, "k", 128, "samples per sketch")
	flag.Float64Var(&o.threshold, "threshold", 0.8, "similarity threshold")
	flag.IntVar(&o.workers, "workers", 2, "dedup workers (and the child's GOMAXPROCS)")
	flag.StringVar(&o.tmp, "tmp", os.TempDir(), "where the work directories go")
	flag.StringVar(&o.out, "out", "", "also write the results as JSON to this file")
	flag.StringVar(&o.neardup, "neardup", "", "run this neardup binary (neardup dedup - --memory M --out DIR) as the child instead of the library pipeline: every output written, the kept corpus zstd-compressed")
	flag.StringVar(&o.exact, "exact", "", "verification: auto, always or never (--exact of the command, dedup.Options.Exact of the library child); default: the default (auto: exact at every scale under a budget)")
	flag.StringVar(&o.child, "child", "", "internal: run dedup on standard input and write the pairs to this file")
	gen := flag.Bool("gen", false, "only write the corpus (JSONL) to standard output, for profiling a command on it")
	flag.Parse()
	if *gen {
		if err := generate(os.Stdout, o); err != nil {
			fatal(err)
		}
		return
	}
	if o.child != "" {
		if err := child(o); err != nil {
			fatal(err)
		}
		return
	}
	var res []result
	if o.compare {
		r, err := parent(o, 0)
		if err != nil {
			fatal(err)
		}
		res = append(res, r)
	}
	r, err := parent(o, o.memoryMiB)
	if err != nil {
		fatal(err)
	}
	res = append(res, r)
	report(os.Stdout, o, res)
	if o.out != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(o.out, b, 0o644); err != nil {
			fatal(err)
		}
	}
}

// generator makes the documents: each a pure function of the seed and
// its number.
type generator struct {
	o     flags
	vocab []string
	cdf   []float64
	guide []int32 // guide[g]: the smallest rank r with cdf[r] >= g/len(guide)
}

func newGenerator(o flags) *generator {
	const vocab = 50000
	g := &generator{o: o, vocab: make([]string, vocab), cdf: make([]float64, vocab)}
	r := rand.New(rand.NewPCG(o.seed, 0x766f636162))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	seen := map[string]bool{}
	for i := range g.vocab {
		for {
			b := make([]byte, 3+r.IntN(7))
			for j := range b {
				b[j] = letters[r.IntN(len(letters))]
			}
			if w := string(b); !seen[w] {
				seen[w], g.vocab[i] = true, w
				break
			}
		}
	}
	sum := 0.0
	for i := range g.cdf {
		sum += 1 / float64(i+1)
		g.cdf[i] = sum
	}
	for i := range g.cdf {
		g.cdf[i] /= sum
	}
	g.guide = make([]int32, 1<<16)
	r0 := 0
	for i := range g.guide {
		for r0 < len(g.cdf)-1 && g.cdf[r0] < float64(i)/float64(len(g.guide)) {
			r0++
		}
		g.guide[i] = int32(r0)
	}
	return g
}

func (g *generator) rng(i int, stream uint64) *rand.PCG {
	return rand.NewPCG(g.o.seed^uint64(i)*0x9e3779b97f4a7c15, stream)
}

// float64Of and intN draw uniform numbers from r (no Rand to allocate per
// document).
func float64Of(r *rand.PCG) float64 { return float64(r.Uint64()<<11>>11) / (1 << 53) }
func intN(r *rand.PCG, n int) int   { return int((r.Uint64() >> 32) * uint64(n) >> 32) }

func (g *generator) word(r *rand.PCG) int32 {
	u := float64Of(r)
	lo := int(g.guide[int(u*float64(len(g.guide)))])
	hi := len(g.cdf) - 1
	for lo < hi && g.cdf[lo] < u { // a short walk from the guide
		lo++
	}
	return int32(lo)
}

// variant reports whether document i is a planted near-duplicate, of
// which (non-variant) earlier document, with how many substitutions.
func (g *generator) variant(i int) (base, subs int, ok bool) {
	if i == 0 {
		return 0, 0, false
	}
	r := g.rng(i, 1)
	if float64Of(r) >= g.o.dup {
		return 0, 0, false
	}
	base = i - 1 - intN(r, min(i, 100000))
	for base >= 0 {
		if _, _, v := g.variant(base); !v {
			break
		}
		base--
	}
	if base < 0 {
		return 0, 0, false
	}
	return base, 1 + intN(r, 3), true
}

// words returns document i's words.
func (g *generator) words(dst []int32, i int) []int32 {
	if base, subs, ok := g.variant(i); ok {
		dst = g.words(dst, base)
		r := g.rng(i, 2)
		for range subs {
			dst[intN(r, len(dst))] = g.word(r)
		}
		return dst
	}
	dst = dst[:0]
	r := g.rng(i, 0)
	for range g.o.words {
		dst = append(dst, g.word(r))
	}
	return dst
}

func docName(i int) string { return string(appendName(nil, i)) }

// appendName appends "d" and i in 9 digits.
func appendName(b []byte, i int) []byte {
	var d [9]byte
	for k := len(d) - 1; k >= 0; k-- {
		d[k] = byte('0' + i%10)
		i /= 10
	}
	return append(append(b, 'd'), d[:]...)
}

// appendDoc appends document i as a JSONL line.
func (g *generator) appendDoc(b []byte, ws []int32, i int) []byte {
	b = append(b, `{"id":"`...)
	b = appendName(b, i)
	b = append(b, `","text":"`...)
	for k, w := range ws {
		if k > 0 {
			b = append(b, ' ')
		}
		b = append(b, g.vocab[w]...)
	}
	return append(b, "\"}\n"...)
}

// generate writes the corpus to w as JSONL.
func generate(w io.Writer, o flags) error {
	g := newGenerator(o)
	bw := bufio.NewWriterSize(w, 1<<20)
	var ws []int32
	var line []byte
	for i := range o.n {
		ws = g.words(ws, i)
		line = g.appendDoc(line[:0], ws, i)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

type result struct {
	Config       string          `json:"config"`
	Docs         int             `json:"docs"`
	Words        int             `json:"words"`
	MemoryMiB    int64           `json:"memory_mib"`
	Wall         float64         `json:"wall_seconds"`
	CPU          float64         `json:"child_cpu_seconds"`
	ParentCPU    float64         `json:"generator_cpu_seconds"`
	PeakRSS      int64           `json:"peak_rss_bytes"`
	LoadBefore   string          `json:"loadavg_before"`
	LoadAfter    string          `json:"loadavg_after"`
	Planted      int             `json:"planted_pairs"`
	Found        int             `json:"planted_found"`
	Recall       float64         `json:"recall"`
	RecallBySubs map[int]float64 `json:"recall_by_substitutions"`
	Pairs        int             `json:"pairs"`
	Verification string          `json:"verification"`
	// Near pairs reported, those verified exactly, and those whose
	// similarity (exact Jaccard when exact) is below the threshold.
	NearPairs     int              `json:"near_pairs"`
	ExactPairs    int              `json:"near_pairs_exact"`
	BelowPairs    int              `json:"near_pairs_below_threshold"`
	External      bool             `json:"external"`
	SketchBytes   float64          `json:"sketch_file_bytes_per_doc"`
	RunBytes      float64          `json:"run_bytes_per_doc"`
	Stages        []dedup.Stage    `json:"stages"`
	SpilledByName map[string]int64 `json:"spilled_by_stage"`
	// With -neardup: the peak disk use of the output directory (work
	// files, spool, index, outputs), the largest size seen of the stdin
	// spool, and the kept corpus's size, sampled every second.
	PeakDisk  int64            `json:"peak_disk_bytes,omitempty"`
	PeakParts map[string]int64 `json:"peak_disk_bytes_by_part,omitempty"` // index, work, kept, …
	SpoolSize int64            `json:"spool_bytes,omitempty"`
	KeptSize  int64            `json:"kept_bytes,omitempty"`
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// parent streams the corpus into a child run with the given budget and
// measures it.
func parent(o flags, memoryMiB int64) (result, error) {
	res := result{Config: "memory", Docs: o.n, Words: o.words, MemoryMiB: memoryMiB, LoadBefore: loadavg()}
	if memoryMiB > 0 {
		res.Config = fmt.Sprintf("--memory %dMiB", memoryMiB)
	}
	dir, err := os.MkdirTemp(o.tmp, "ooc-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return res, err
	}
	pairsPath := filepath.Join(dir, "pairs.bin")
	cmd := exec.Command(self, "-child", pairsPath, "-memory-mib", fmt.Sprint(memoryMiB), "-k", fmt.Sprint(o.k),
		"-threshold", fmt.Sprint(o.threshold), "-workers", fmt.Sprint(o.workers), "-tmp", dir, "-exact", o.exact)
	outDir := filepath.Join(dir, "out")
	if o.neardup != "" {
		res.Config = "neardup dedup - " + res.Config
		args := []string{"dedup", "-", "--out", outDir, "--k", fmt.Sprint(o.k), "--threshold", fmt.Sprint(o.threshold),
			"--workers", fmt.Sprint(o.workers), "--json"}
		if o.exact != "" {
			args = append(args, "--exact", o.exact)
		}
		if memoryMiB > 0 {
			args = append(args, "--memory", fmt.Sprintf("%dMiB", memoryMiB))
		}
		cmd = exec.Command(o.neardup, args...)
	}
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(o.workers))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, err
	}
	var sumOut strings.Builder
	cmd.Stdout, cmd.Stderr = &sumOut, os.Stderr
	fmt.Fprintf(os.Stderr, "run %s: %d docs × %d words (load %s)\n", res.Config, o.n, o.words, res.LoadBefore)
	cpu0 := selfCPU()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	g := newGenerator(o)
	planted := map[uint64]int{} // (base, variant) -> substitutions
	genErr := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(stdin, 1<<20)
		var ws []int32
		var line []byte
		for i := range o.n {
			if base, subs, ok := g.variant(i); ok {
				planted[uint64(base)<<32|uint64(i)] = subs
			}
			ws = g.words(ws, i)
			line = g.appendDoc(line[:0], ws, i)
			if _, err := w.Write(line); err != nil {
				genErr <- err
				return
			}
		}
		if err := w.Flush(); err != nil {
			genErr <- err
			return
		}
		genErr <- stdin.Close()
	}()
	stopDisk := make(chan struct{})
	diskDone := make(chan struct{})
	go func() { // the disk the command's output directory takes
		defer close(diskDone)
		if o.neardup == "" {
			return
		}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			total, spool, parts := dirSize(outDir)
			res.PeakDisk, res.SpoolSize = max(res.PeakDisk, total), max(res.SpoolSize, spool)
			if res.PeakParts == nil {
				res.PeakParts = map[string]int64{}
			}
			for k, v := range parts {
				res.PeakParts[k] = max(res.PeakParts[k], v)
			}
			select {
			case <-stopDisk:
				return
			case <-t.C:
			}
		}
	}()
	werr := cmd.Wait()
	res.Wall = time.Since(start).Seconds()
	close(stopDisk)
	<-diskDone
	if gerr := <-genErr; werr == nil && gerr != nil {
		werr = fmt.Errorf("streaming the corpus: %w", gerr)
	}
	if werr != nil {
		return res, fmt.Errorf("child: %w", werr)
	}
	res.ParentCPU = selfCPU() - cpu0
	res.LoadAfter = loadavg()
	ps := cmd.ProcessState
	res.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		res.PeakRSS = ru.Maxrss << 10 // KiB on Linux
	}
	var sum dedup.Summary
	if o.neardup != "" { // the summary as written, not as printed
		b, err := os.ReadFile(filepath.Join(outDir, "summary.json"))
		if err != nil {
			return res, err
		}
		sumOut.Reset()
		sumOut.Write(b)
		res.KeptSize, _, _ = dirSize(filepath.Join(outDir, "kept"))
		if err := pairsFromJSONL(filepath.Join(outDir, "pairs.jsonl"), pairsPath, o.threshold, &res); err != nil {
			return res, err
		}
	}
	if err := json.Unmarshal([]byte(sumOut.String()), &sum); err != nil {
		return res, fmt.Errorf("child summary: %w", err)
	}
	res.Pairs, res.External, res.Stages, res.Verification = sum.Pairs, sum.External, sum.Stages, sum.Verification
	res.SpilledByName = map[string]int64{}
	for _, s := range sum.Stages {
		res.SpilledByName[s.Name] = s.Spilled
		if s.Name == dedup.StageSketch {
			res.SketchBytes = float64(s.Spilled) / float64(o.n)
		} else {
			res.RunBytes += float64(s.Spilled) / float64(o.n)
		}
	}

	// Recall of the planted pairs among the reported ones.
	found := map[uint64]bool{}
	b, err := os.ReadFile(pairsPath)
	if err != nil {
		return res, err
	}
	for ; len(b) >= 8; b = b[8:] {
		a, c := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
		k := uint64(min(a, c))<<32 | uint64(max(a, c))
		if _, ok := planted[k]; ok {
			found[k] = true
		}
	}
	bySubs, foundBySubs := map[int]int{}, map[int]int{}
	for k, s := range planted {
		bySubs[s]++
		if found[k] {
			foundBySubs[s]++
		}
	}
	res.Planted, res.Found = len(planted), len(found)
	res.Recall = float64(len(found)) / math.Max(1, float64(len(planted)))
	res.RecallBySubs = map[int]float64{}
	for s, n := range bySubs {
		res.RecallBySubs[s] = float64(foundBySubs[s]) / float64(n)
	}
	return res, nil
}

// child runs dedup on standard input, writes the pairs (document numbers,
// 2 × uint32) to o.child and the summary as JSON to standard output.
func child(o flags) error {
	memory := o.memoryMiB << 20
	if memory > 0 {
		debug.SetMemoryLimit(memory)
	}
	res, err := dedup.Run(context.Background(), corpus.All([]string{"-"}, corpus.Options{}), dedup.Options{
		Index:   index.Config{Sketch: sample.Config{K: o.k}, Threshold: o.threshold},
		Exact:   exactMode(o.exact),
		Workers: o.workers,
		Memory:  memory,
		WorkDir: filepath.Join(o.tmp, "work"),
		Events:  dedup.MakeLoggingEventListener(os.Stderr),
	})
	if err != nil {
		return err
	}
	f, err := os.Create(o.child)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var b [8]byte
	for _, p := range res.Pairs {
		a, okA := parseName(p.A)
		c, okC := parseName(p.B)
		if !okA || !okC {
			continue
		}
		binary.LittleEndian.PutUint32(b[:], uint32(a))
		binary.LittleEndian.PutUint32(b[4:], uint32(c))
		if _, err := w.Write(b[:]); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res.Summary)
}

// pairsFromJSONL converts the command's pairs.jsonl (a and b, the ids)
// into the child's pairs file (document numbers, 2 × uint32).
func pairsFromJSONL(src, dst string, threshold float64, res *result) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	var b [8]byte
	for sc.Scan() {
		var p struct {
			A, B       string
			Similarity float64
			Exact      bool
			Kind       string
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", src, err)
		}
		if p.Kind == "near" {
			res.NearPairs++
			if p.Exact {
				res.ExactPairs++
			}
			if p.Similarity < threshold {
				res.BelowPairs++
			}
		}
		a, okA := parseName(p.A)
		c, okC := parseName(p.B)
		if !okA || !okC {
			continue
		}
		binary.LittleEndian.PutUint32(b[:], uint32(a))
		binary.LittleEndian.PutUint32(b[4:], uint32(c))
		if _, err := w.Write(b[:]); err != nil {
			f.Close()
			return err
		}
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", src, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dirSize is the bytes of the files under dir, of its stdin spool
// (work/stdin.spool.s2) alone, and per entry of dir (index, work, kept,
// files). Files that vanish while it walks are skipped.
func dirSize(dir string) (total, spool int64, parts map[string]int64) {
	parts = map[string]int64{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			total += fi.Size()
			if d.Name() == "stdin.spool.s2" {
				spool = fi.Size()
			}
			if rel, err := filepath.Rel(dir, p); err == nil {
				part, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
				parts[part] += fi.Size()
			}
		}
		return nil
	})
	return total, spool, parts
}

func parseName(s string) (int, bool) {
	if !strings.HasPrefix(s, "d") {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	return n, err == nil
}

// selfCPU is this process's CPU time so far, in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// report prints a Markdown table of the results.
func report(w io.Writer, o flags, res []result) {
	fmt.Fprintf(w, "## bench/ooc: %d streamed documents × %d words, %.0f%% planted near-duplicates (1–3 words substituted)\n\n", o.n, o.words, 100*o.dup)
	what := "the library pipeline (dedup.Run) on standard input; no kept corpus is written"
	if o.neardup != "" {
		what = "the real command `neardup dedup - --out DIR` on standard input, every output written (kept/stdin.jsonl.zst)"
	}
	exact := o.exact
	if exact == "" {
		exact = "default (auto)"
	}
	fmt.Fprintf(w, "`%s` — %s, %d CPUs, child GOMAXPROCS=%d, k = %d, threshold %g, --exact %s; %s.\n\n",
		strings.Join(os.Args, " "), runtime.Version(), runtime.NumCPU(), o.workers, o.k, o.threshold, exact, what)
	fmt.Fprintln(w, "| configuration | wall s | child CPU s | generator CPU s | peak RSS MiB | load before → after | out of core | pairs | recall (planted) | by 1/2/3 words | sketch file B/doc | sorted runs B/doc |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range res {
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f | %.0f | %s → %s | %v | %d | %.4f (%d/%d) | %.4f / %.4f / %.4f | %.0f | %.1f |\n",
			r.Config, r.Wall, r.CPU, r.ParentCPU, float64(r.PeakRSS)/(1<<20), r.LoadBefore, r.LoadAfter, r.External, r.Pairs,
			r.Recall, r.Found, r.Planted, r.RecallBySubs[1], r.RecallBySubs[2], r.RecallBySubs[3], r.SketchBytes, r.RunBytes)
	}
	for _, r := range res {
		if r.NearPairs > 0 {
			fmt.Fprintf(w, "\n%s: verification %s; near pairs reported %d, verified exactly %d, similarity below %g: %d (precision %.4f)\n",
				r.Config, r.Verification, r.NearPairs, r.ExactPairs, o.threshold, r.BelowPairs, 1-float64(r.BelowPairs)/float64(r.NearPairs))
		}
	}
	for _, r := range res {
		if r.PeakDisk > 0 {
			fmt.Fprintf(w, "\n%s: output directory peak %.0f MiB (%.0f B/doc), stdin spool %.0f MiB (%.0f B/doc), kept corpus %.0f MiB\n",
				r.Config, float64(r.PeakDisk)/(1<<20), float64(r.PeakDisk)/float64(r.Docs), float64(r.SpoolSize)/(1<<20),
				float64(r.SpoolSize)/float64(r.Docs), float64(r.KeptSize)/(1<<20))
			for _, k := range slices.Sorted(maps.Keys(r.PeakParts)) {
				if v := r.PeakParts[k]; v >= 1<<20 {
					fmt.Fprintf(w, "  peak of %s: %.0f MiB (%.0f B/doc)\n", k, float64(v)/(1<<20), float64(v)/float64(r.Docs))
				}
			}
		}
	}
	if len(res) == 2 && res[0].Wall > 0 {
		fmt.Fprintf(w, "\nout of core / in memory: %.2f× wall, %.2f× child CPU\n", res[1].Wall/res[0].Wall, res[1].CPU/res[0].CPU)
	}
}

// exactMode is the library child's dedup.Options.Exact for -exact.
func exactMode(s string) dedup.ExactMode {
	switch s {
	case "always":
		return dedup.ExactAlways
	case "never":
		return dedup.ExactNever
	}
	return dedup.ExactAuto
}
