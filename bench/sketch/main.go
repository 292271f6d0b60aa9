// Command sketch benchmarks neardup's consistent samplers against the Go peer
// libraries github.com/ekzhu/minhash-lsh and github.com/dgryski/go-minhash on
// one generated corpus, in one run.
//
// The corpus is generated on the fly: base documents of 1,000 Zipf(1.0)
// words over a vocabulary of 50,000, and for each one a near-duplicate
// variant made by word substitutions whose exact Jaccard similarity of
// 5-shingle sets (computed exactly by this program from the word sequences)
// is as close as possible to 0.5, 0.8, 0.9 or 0.95. Shingles are extracted
// once with neardup's feature extractor (64-bit Rabin ids; the program
// checks that every document has exactly as many ids as distinct 5-word
// shingles, and that the id sets give the same exact Jaccard as the word
// tuples). Every contender then sketches the same pre-extracted ids at the
// same k: neardup's samplers through sample.Sampler.Sketch into one reused
// buffer, the peers through their []byte Push APIs on the 8-byte
// little-endian encodings of the same ids (dgryski's MinWise and BottomK
// with a SplitMix-style 64-bit mixer, the fastest fair hash for 8-byte
// keys; ekzhu's Minhash with its own built-in FNV hashes, which it does not
// let callers replace). Timed repetitions are interleaved round-robin (the
// order rotates every repetition) so that machine noise hits every contender
// alike. Time is measured as the CPU time of the one locked OS thread that
// runs every contender (CLOCK_THREAD_CPUTIME_ID on Linux), so time spent
// waiting while other processes hold the CPU does not count; the table
// reports the median, the fastest repetition and the median wall-clock rate.
// (Background GC work on other threads is not counted; assists are.) By
// default the program runs on one core (runtime.GOMAXPROCS(1), flag -cpu).
//
// Accuracy is measured on the same sketches: for each near-duplicate pair,
// the contender's own similarity estimate minus the exact Jaccard, summarized
// per target level by the mean error (bias), the mean absolute error and the
// standard deviation. Theory for k independent samples is
// sqrt(J(1−J)/k). The "from raw text" rows time feature extraction plus
// sketching from the documents' text.
//
// Usage:
//
//	cd bench && go run ./sketch [-k 128] [-docs 4000] [-reps 5] [-json]
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

type config struct {
	K       int       `json:"k"`
	Docs    int       `json:"docs"`
	Words   int       `json:"words_per_doc"`
	Vocab   int       `json:"vocab"`
	ZipfS   float64   `json:"zipf_s"`
	Reps    int       `json:"reps"`
	CPU     int       `json:"gomaxprocs"`
	Seed    uint64    `json:"seed"`
	Targets []float64 `json:"targets"`
	Raw     []string  `json:"raw_samplers"`
	Cores   int       `json:"parallel_cores"`
	CJK     string    `json:"cjk_corpus"`
}

func main() {
	var cfg config
	var samplers, raw string
	var asJSON bool
	flag.IntVar(&cfg.K, "k", 128, "samples per sketch")
	flag.IntVar(&cfg.Docs, "docs", 4000, "documents (half bases, half near-duplicate variants)")
	flag.IntVar(&cfg.Words, "words", 1000, "words per document")
	flag.IntVar(&cfg.Vocab, "vocab", 50000, "vocabulary size (at most 65536)")
	flag.Float64Var(&cfg.ZipfS, "zipf", 1.0, "Zipf exponent of word frequencies")
	flag.IntVar(&cfg.Reps, "reps", 5, "timed repetitions per contender (interleaved)")
	flag.IntVar(&cfg.CPU, "cpu", 1, "GOMAXPROCS (1 = single core)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the corpus and of the samplers")
	flag.StringVar(&samplers, "samplers", "minhash,prefix,lazybits,lazybits-batched,bottomk,proportional,oph,superminhash", "neardup samplers to time")
	flag.StringVar(&raw, "raw", "oph,superminhash", "samplers to time from raw text (extraction + sketching)")
	flag.BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	flag.IntVar(&cfg.Cores, "cores", 2, "also time raw text to the first -raw sampler on 1..cores goroutines (wall clock and summed thread CPU; 0 = skip)")
	flag.StringVar(&cfg.CJK, "cjk", "../testdata/multilingual/docs.jsonl", "JSONL (id, text) whose Chinese and Japanese documents (ids ja/..., zh_..., edit/...) make the \"cjk extract + <first -raw sampler>\" row; empty: skip")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed repetitions to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/sketch:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	cfg.Targets = []float64{0.5, 0.8, 0.9, 0.95}
	if raw != "" {
		cfg.Raw = strings.Split(raw, ",")
	}
	if err := run(os.Stdout, os.Stderr, cfg, strings.Split(samplers, ","), asJSON); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench/sketch:", err)
		os.Exit(1)
	}
}

// contender is one thing being timed: run sketches every document and keeps
// the sketches; est, if not nil, estimates the similarity of documents a
// and b from them.
type contender struct {
	name  string
	lib   string // "neardup" or the peer's module
	kind  string // "pre-extracted", "raw text" or "baseline"
	run   func()
	est   func(a, b int) float64
	bits  func() float64  // random bits per input per sample, or nil
	times []time.Duration // thread CPU time per repetition (wall time without it)
	walls []time.Duration // wall-clock time per repetition
}

// Result is one row of the output.
type Result struct {
	Name       string             `json:"name"`
	Lib        string             `json:"lib"`
	Kind       string             `json:"kind"`
	DocsPerSec float64            `json:"docs_per_sec"` // by median thread CPU time
	NsPerDoc   float64            `json:"ns_per_doc"`
	Best       float64            `json:"best_docs_per_sec"` // by the fastest repetition
	Wall       float64            `json:"wall_docs_per_sec"` // by median wall-clock time
	Spread     float64            `json:"spread"`            // (max−min)/median of the repetition times
	Ratios     map[string]float64 `json:"ratio_vs_peer,omitempty"`
	Bits       float64            `json:"bits_per_input_per_sample,omitempty"`
	Accuracy   []Accuracy         `json:"accuracy,omitempty"`
}

// Accuracy summarizes estimate − exact over the pairs of one level.
type Accuracy struct {
	Target float64 `json:"target"`
	Bias   float64 `json:"bias"`
	MAE    float64 `json:"mae"`
	SD     float64 `json:"sd"`
	Theory float64 `json:"theory_sd"`
}

// Report is the whole output of -json.
type Report struct {
	Go   string `json:"go"`
	Arch string `json:"arch"`
	CPU  string `json:"cpu"`
	// Kernels names the extraction kernels that ran (feature.Kernels):
	// avx512, avx2, pclmulqdq or go.
	Kernels string         `json:"kernels"`
	Config  config         `json:"config"`
	Levels  []levelSummary `json:"levels"`
	Results []Result       `json:"results"`
	// ShinglesPerDoc is the mean number of distinct shingles (features)
	// per document.
	ShinglesPerDoc float64    `json:"shingles_per_doc"`
	Parallel       []Parallel `json:"parallel,omitempty"`
	// TextBytesPerDoc and CJKBytesPerDoc are the mean bytes of text per
	// document of the generated (English-like) corpus and of the CJK
	// documents, to turn docs/s into bytes/s.
	TextBytesPerDoc float64 `json:"text_bytes_per_doc"`
	CJKBytesPerDoc  float64 `json:"cjk_bytes_per_doc,omitempty"`
}

func run(stdout, stderr io.Writer, cfg config, samplers []string, asJSON bool) error {
	if cfg.K < 1 || cfg.Docs < 2 || cfg.Reps < 1 || cfg.Words < shingleSize || cfg.Vocab < 2 || cfg.Vocab > 1<<16 || cfg.CPU < 1 {
		return fmt.Errorf("bad flags: need k >= 1, docs >= 2, reps >= 1, words >= %d, 2 <= vocab <= 65536, cpu >= 1", shingleSize)
	}
	runtime.GOMAXPROCS(cfg.CPU)
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }

	t0 := time.Now()
	c := generate(cfg.Docs/2, cfg.Words, cfg.Vocab, cfg.ZipfS, cfg.Targets, cfg.Seed)
	logf("generated %d documents (%d pairs) in %v", len(c.words), len(c.pairs), time.Since(t0).Round(time.Millisecond))

	// Pre-extract shingle ids with neardup's extractor and check them
	// against the exact word-tuple shingles.
	ex, err := feature.New(feature.Options{Format: feature.FormatText})
	if err != nil {
		return err
	}
	fs := make([][]feature.Feature, len(c.text))
	keys := make([][]byte, len(c.text))
	nShingles := 0
	for i, t := range c.text {
		fs[i] = slices.Clip(ex.Extract(nil, t))
		if want := len(shingles(c.words[i])); len(fs[i]) != want {
			return fmt.Errorf("document %d: extractor gave %d ids for %d distinct shingles (id collision or tokenizer mismatch)", i, len(fs[i]), want)
		}
		kb := make([]byte, 0, 8*len(fs[i]))
		for _, f := range fs[i] {
			kb = binary.LittleEndian.AppendUint64(kb, f.ID)
		}
		keys[i] = kb
		nShingles += len(fs[i])
	}
	for _, p := range c.pairs {
		if j := idJaccard(fs[p.a], fs[p.b]); math.Abs(j-p.exact) > 1e-12 {
			return fmt.Errorf("pair %d/%d: id Jaccard %v != word-tuple Jaccard %v", p.a, p.b, j, p.exact)
		}
	}
	logf("extracted %d shingles (%.0f per document), ids checked against exact word shingles", nShingles, float64(nShingles)/float64(len(fs)))

	var cs []*contender
	cs = append(cs, hashOnly(fs, cfg.Seed))
	for _, name := range samplers {
		alg, err := sketch.ParseAlgorithm(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		ct, err := neardupContender(alg, cfg, fs, nShingles)
		if err != nil {
			return err
		}
		cs = append(cs, ct)
	}
	cs = append(cs, dgryskiMinWise(keys, cfg.K, cfg.Seed), dgryskiBottomK(keys, cfg.K, cfg.Seed), ekzhuMinhash(keys, cfg.K, cfg.Seed))
	cs = append(cs, extractOnly(c.text))
	var cjk [][]byte
	if cfg.CJK != "" && len(cfg.Raw) > 0 {
		if cjk, err = loadCJK(cfg.CJK); err != nil {
			return err
		}
		alg, err := sketch.ParseAlgorithm(strings.TrimSpace(cfg.Raw[0]))
		if err != nil {
			return err
		}
		ct, err := rawContender(alg, cfg, cjk)
		if err != nil {
			return err
		}
		ct.name = "cjk " + ct.name
		cs = append(cs, ct)
		logf("%d CJK documents from %s", len(cjk), cfg.CJK)
	}
	for _, name := range cfg.Raw {
		alg, err := sketch.ParseAlgorithm(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		ct, err := rawContender(alg, cfg, c.text)
		if err != nil {
			return err
		}
		cs = append(cs, ct)
	}

	// Warm up (grows every buffer), then interleaved timed repetitions, on
	// one locked OS thread whose CPU time is measured (wall time too).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, haveCPU := threadCPU()
	if !haveCPU {
		logf("no per-thread CPU clock here: timing by wall clock")
	}
	for _, ct := range cs {
		ct.run()
	}
	for rep := 0; rep < cfg.Reps; rep++ {
		for i := range cs {
			ct := cs[(i+rep)%len(cs)]
			runtime.GC()
			c0, _ := threadCPU()
			start := time.Now()
			ct.run()
			wall := time.Since(start)
			c1, _ := threadCPU()
			ct.walls = append(ct.walls, wall)
			if haveCPU {
				ct.times = append(ct.times, c1-c0)
			} else {
				ct.times = append(ct.times, wall)
			}
		}
		logf("repetition %d of %d done", rep+1, cfg.Reps)
	}

	rep := Report{Go: runtime.Version(), Arch: runtime.GOOS + "/" + runtime.GOARCH, CPU: cpuModel(), Kernels: feature.Kernels(), Config: cfg, Levels: c.levels(),
		ShinglesPerDoc: float64(nShingles) / float64(len(fs)), TextBytesPerDoc: meanLen(c.text), CJKBytesPerDoc: meanLen(cjk)}
	if cfg.Cores > 0 && len(cfg.Raw) > 0 {
		alg, err := sketch.ParseAlgorithm(strings.TrimSpace(cfg.Raw[0]))
		if err != nil {
			return err
		}
		if rep.Parallel, err = parallelRaw(alg, cfg, c.text, cfg.Cores, cfg.Reps); err != nil {
			return err
		}
		logf("parallel raw text to %v timed on 1..%d goroutines", alg, cfg.Cores)
	}
	peers := map[string]float64{}
	for _, ct := range cs {
		r := summarize(ct, len(fs), c, cfg.K)
		if r.Lib != "neardup" {
			peers[r.Name] = r.DocsPerSec
		}
		rep.Results = append(rep.Results, r)
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Lib == "neardup" && r.Kind != "baseline" {
			r.Ratios = map[string]float64{}
			for name, dps := range peers {
				r.Ratios[name] = r.DocsPerSec / dps
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printTables(stdout, rep)
}

func idJaccard(a, b []feature.Feature) float64 {
	set := make(map[uint64]struct{}, len(a))
	for _, f := range a {
		set[f.ID] = struct{}{}
	}
	inter := 0
	for _, f := range b {
		if _, ok := set[f.ID]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func summarize(ct *contender, docs int, c *corpus, k int) Result {
	med := median(ct.times)
	r := Result{Name: ct.name, Lib: ct.lib, Kind: ct.kind,
		DocsPerSec: float64(docs) / med.Seconds(),
		NsPerDoc:   float64(med.Nanoseconds()) / float64(docs),
		Best:       float64(docs) / slices.Min(ct.times).Seconds(),
		Wall:       float64(docs) / median(ct.walls).Seconds(),
		Spread:     float64(slices.Max(ct.times)-slices.Min(ct.times)) / float64(med),
	}
	if ct.bits != nil {
		r.Bits = ct.bits()
	}
	if ct.est == nil {
		return r
	}
	for level, target := range c.targets {
		var n, sum, sumAbs, sumSq, sumJ float64
		for _, p := range c.pairs {
			if p.level != level {
				continue
			}
			e := ct.est(p.a, p.b) - p.exact
			n++
			sum += e
			sumAbs += math.Abs(e)
			sumSq += e * e
			sumJ += p.exact
		}
		if n == 0 {
			continue
		}
		mean := sum / n
		sd := 0.0
		if n > 1 {
			sd = math.Sqrt(math.Max(0, (sumSq-n*mean*mean)/(n-1)))
		}
		j := sumJ / n
		r.Accuracy = append(r.Accuracy, Accuracy{Target: target, Bias: mean, MAE: sumAbs / n, SD: sd, Theory: math.Sqrt(j * (1 - j) / float64(k))})
	}
	return r
}

func printTables(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "%s %s, %s, GOMAXPROCS=%d\n", rep.Go, rep.Arch, rep.CPU, rep.Config.CPU)
	fmt.Fprintf(w, "k=%d, %d documents of %d Zipf(%.2f) words over %d, %d timed repetitions (interleaved; docs/s by median thread CPU time, best = fastest repetition, wall = median wall clock)\n",
		rep.Config.K, rep.Config.Docs, rep.Config.Words, rep.Config.ZipfS, rep.Config.Vocab, rep.Config.Reps)
	for _, l := range rep.Levels {
		fmt.Fprintf(w, "  %v\n", l)
	}
	fmt.Fprintln(w)

	var peerNames []string
	for _, r := range rep.Results {
		if r.Lib != "neardup" {
			peerNames = append(peerNames, r.Name)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "contender\tinput\tdocs/s\tµs/doc\tbest\twall\tspread\tbits/in/smp\t")
	for _, p := range peerNames {
		fmt.Fprintf(tw, "×%s\t", p)
	}
	fmt.Fprintln(tw)
	for _, r := range rep.Results {
		bits := ""
		if r.Bits > 0 {
			bits = fmt.Sprintf("%.3f", r.Bits)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t%.0f\t%.0f\t%.0f%%\t%s\t", r.Name, r.Kind, r.DocsPerSec, r.NsPerDoc/1000, r.Best, r.Wall, 100*r.Spread, bits)
		for _, p := range peerNames {
			if x, ok := r.Ratios[p]; ok {
				fmt.Fprintf(tw, "%.2f\t", x)
			} else {
				fmt.Fprint(tw, "\t")
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(rep.Parallel) > 0 {
		fmt.Fprintf(w, "\nraw text -> sketch on several goroutines (docs/s by median wall clock; per core by summed thread CPU)\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "sampler\tgoroutines\twall docs/s\tspeed-up\tdocs/CPU-s\t\n")
		for _, p := range rep.Parallel {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.0f\t\n", p.Sampler, p.Workers, p.WallDocsPerSec, p.Speedup, p.CPUDocsPerSec)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\nestimate − exact Jaccard per level: bias / MAE / SD (theory SD = sqrt(J(1−J)/k))\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "contender\t")
	for _, l := range rep.Levels {
		fmt.Fprintf(tw, "J≈%.2f bias\tMAE\tSD\t", l.Target)
	}
	fmt.Fprintln(tw)
	var theory []Accuracy
	for _, r := range rep.Results {
		if len(r.Accuracy) == 0 {
			continue
		}
		theory = r.Accuracy
		fmt.Fprintf(tw, "%s\t", r.Name)
		for _, a := range r.Accuracy {
			fmt.Fprintf(tw, "%+.4f\t%.4f\t%.4f\t", a.Bias, a.MAE, a.SD)
		}
		fmt.Fprintln(tw)
	}
	if theory != nil {
		fmt.Fprint(tw, "theory (k samples)\t")
		for _, a := range theory {
			fmt.Fprintf(tw, "0\t%.4f\t%.4f\t", a.Theory*math.Sqrt(2/math.Pi), a.Theory)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// cpuModel returns the CPU model name from /proc/cpuinfo, or "unknown cpu".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown cpu"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown cpu"
}

// hashOnly is the floor: one hash per shingle, no sampling.
func hashOnly(fs [][]feature.Feature, seed uint64) *contender {
	var sink uint64
	ct := &contender{name: "one hash per shingle", lib: "neardup", kind: "baseline"}
	ct.run = func() {
		var acc uint64
		for _, doc := range fs {
			for _, f := range doc {
				acc += rng.Hash(seed, f.ID)
			}
		}
		sink += acc
	}
	return ct
}

// extractOnly times feature extraction from raw text alone.
func extractOnly(text [][]byte) *contender {
	ex, err := feature.New(feature.Options{Format: feature.FormatText})
	if err != nil {
		panic(err)
	}
	var fs []feature.Feature
	ct := &contender{name: "extract 5-shingles", lib: "neardup", kind: "raw text"}
	ct.run = func() {
		for _, t := range text {
			fs = ex.Extract(fs[:0], t)
		}
	}
	return ct
}

func samplerConfig(alg sketch.Algorithm, cfg config) sample.Config {
	c := sample.Config{Algorithm: alg, K: cfg.K, Seed: cfg.Seed}
	if alg == sketch.Proportional {
		// Keep about k of the ~words shingles, the same sample size as
		// the other samplers.
		c.Modulus = uint64(max(1, int(math.Round(float64(cfg.Words)/float64(cfg.K)))))
	}
	return c
}

// neardupContender sketches every document's ids with one neardup sampler,
// appending all sketches to one arena that is reused between repetitions.
func neardupContender(alg sketch.Algorithm, cfg config, fs [][]feature.Feature, nShingles int) (*contender, error) {
	s, err := sample.New(samplerConfig(alg, cfg))
	if err != nil {
		return nil, err
	}
	h := s.Header()
	arena := make([]uint64, 0, len(fs)*cfg.K*3/2)
	off := make([]int, len(fs)+1)
	ct := &contender{name: alg.String(), lib: "neardup", kind: "pre-extracted"}
	ct.run = func() {
		arena = arena[:0]
		for i, doc := range fs {
			arena = s.Sketch(arena, doc)
			off[i+1] = len(arena)
		}
	}
	ct.est = func(a, b int) float64 {
		sa := sketch.Sketch{Header: h, Values: arena[off[a]:off[a+1]]}
		sb := sketch.Sketch{Header: h, Values: arena[off[b]:off[b+1]]}
		e, err := sketch.Jaccard(&sa, &sb)
		if err != nil {
			panic(err)
		}
		return e.J
	}
	if bc, ok := s.(sample.BitCounter); ok {
		ct.bits = func() float64 { return bc.Counter().PerInputPerSample() }
	}
	return ct, nil
}

// rawContender extracts features from each document's text and sketches
// them: the whole per-document cost from raw text.
func rawContender(alg sketch.Algorithm, cfg config, text [][]byte) (*contender, error) {
	s, err := sample.New(samplerConfig(alg, cfg))
	if err != nil {
		return nil, err
	}
	ex, err := feature.New(feature.Options{Format: feature.FormatText})
	if err != nil {
		return nil, err
	}
	var fs []feature.Feature
	var dst []uint64
	ct := &contender{name: "extract + " + alg.String(), lib: "neardup", kind: "raw text"}
	ct.run = func() {
		for _, t := range text {
			fs = ex.Extract(fs[:0], t)
			dst = s.Sketch(dst[:0], fs)
		}
	}
	return ct, nil
}

// loadCJK reads the Chinese and Japanese documents of a JSONL file (id,
// text; ids starting "ja/", "zh_" or "edit/"), repeated to at least 2 MB
// so that a repetition is long enough to time.
func loadCJK(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var d struct{ ID, Text string }
		if err := json.Unmarshal(line, &d); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if strings.HasPrefix(d.ID, "ja/") || strings.HasPrefix(d.ID, "zh_") || strings.HasPrefix(d.ID, "edit/") {
			docs = append(docs, []byte(d.Text))
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no Chinese or Japanese documents", path)
	}
	out, n := docs, 0
	for _, d := range docs {
		n += len(d)
	}
	for total := n; total < 2<<20; total += n {
		out = append(out, docs...)
	}
	return out, nil
}

func meanLen(text [][]byte) float64 {
	if len(text) == 0 {
		return 0
	}
	n := 0
	for _, t := range text {
		n += len(t)
	}
	return float64(n) / float64(len(text))
}
