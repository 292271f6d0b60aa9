package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// record is one run of perf on one kind of CPU: what the table of that
// kind is made from. It is saved as results/<cpu kind>.json, and the page
// is rewritten from every saved record, so a run on one kind of CPU keeps
// the tables of the others.
type record struct {
	Command    string        `json:"command"`           // how the run was started
	Took       string        `json:"took"`              // its duration
	Go         string        `json:"go"`                // Go version
	CPU        string        `json:"cpu"`               // CPU model name (the kind)
	CPUs       int           `json:"cpus"`              // logical CPUs
	ISA        string        `json:"isa"`               // instruction sets that matter here ("" if not recorded)
	Kernels    string        `json:"kernels,omitempty"` // extraction kernels that ran (feature.Kernels; "" if not recorded)
	Switch     string        `json:"switch,omitempty"`  // what turned faster kernels off (-tags purego, GODEBUG=cpu.avx512f=off), "" for none
	Load       string        `json:"load"`              // load average at the start
	Docs       int           `json:"docs"`              // documents of the sketch benchmark
	Reps       int           `json:"reps"`              // its repetitions
	K          int           `json:"k"`                 // samples per sketch
	TextDedup  string        `json:"text_dedup"`        // whether the Python peer text-dedup was there
	Datasketch string        `json:"datasketch"`        // whether the Python peer datasketch was there
	Sketch     *sketchReport `json:"sketch"`            // ./sketch -json
	Small      *dedupReport  `json:"dedup_small"`       // ./dedup, the CPU-seconds run (nil: not run)
	Large      *dedupReport  `json:"dedup_large"`       // ./dedup, the 1M run (nil: not run)
	Source     string        `json:"source,omitempty"`
}

func command(o options) string {
	env, tags := "", ""
	if g := os.Getenv("GODEBUG"); g != "" {
		env = "GODEBUG=" + g + " "
	}
	if o.tags != "" {
		tags = " -tags " + o.tags
	}
	return fmt.Sprintf("cd bench && %sgo run ./perf%s -docs %d -reps %d -n %d -words %d -n1m %d -page ../docs/performance.md",
		env, tags, o.docs, o.reps, o.n, o.words, o.n1m)
}

// kernelSwitch names what turned the CPU's fastest kernels off in this
// run: the build tags, and GODEBUG's cpu.* settings (golang.org/x/sys/cpu
// and the Go runtime read them), "" for none.
func kernelSwitch(tags string) string {
	var sw []string
	if tags != "" {
		sw = append(sw, "-tags "+tags)
	}
	for _, f := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if strings.HasPrefix(f, "cpu.") {
			sw = append(sw, "GODEBUG="+f)
		}
	}
	return strings.Join(sw, " ")
}

// title heads the record's table: the CPU model, and the kernels when a
// switch chose slower ones than the CPU's (an emulated AVX2-only CPU, the
// pure-Go path).
func (r *record) title() string {
	if r.Switch == "" {
		return r.CPU
	}
	return fmt.Sprintf("%s, %s kernels", r.CPU, r.Kernels)
}

// isaFlags are the /proc/cpuinfo flags (x86) and features (arm64) worth
// naming: the vector and hashing instructions the Go runtime and compiler
// use for hashing, copying and bit counting.
var isaFlags = []string{"sse4_2", "popcnt", "aes", "pclmulqdq", "avx", "avx2", "bmi1", "bmi2",
	"avx512f", "avx512bw", "avx512vl", "sha_ni", "vaes", "vpclmulqdq",
	"asimd", "pmull", "sha2", "crc32", "atomics", "sve", "sve2"}

// instructionSets lists the isaFlags this CPU has, from /proc/cpuinfo
// ("" where there is none).
func instructionSets() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return isaOf(bufio.NewScanner(f))
}

func isaOf(sc *bufio.Scanner) string {
	have := map[string]bool{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if k = strings.TrimSpace(k); !ok || (k != "flags" && k != "Features") {
			continue
		}
		for _, x := range strings.Fields(v) {
			have[x] = true
		}
		break
	}
	var out []string
	for _, x := range isaFlags {
		if have[x] && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	if len(out) > 0 && !have["avx512f"] && have["avx2"] {
		out = append(out, "no AVX-512")
	}
	return strings.Join(out, ", ")
}

// kind is the file name of a CPU model's record.
func kind(cpu string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(cpu) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	s := strings.TrimSuffix(b.String(), "-")
	if s == "" {
		s = "unknown"
	}
	return s
}

// recordPath is where r is saved: one file per CPU kind, and one more per
// kernel switch used on it (title).
func recordPath(dir string, r *record) string { return filepath.Join(dir, kind(r.title())+".json") }

func saveRecord(dir string, r *record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(recordPath(dir, r), append(b, '\n'), 0o644)
}

// loadRecords reads every saved record of dir, in the order of their file
// names.
func loadRecords(dir string) ([]*record, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []*record
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if r.Sketch == nil {
			return nil, fmt.Errorf("%s: no sketch results", name)
		}
		out = append(out, &r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no saved results in %s", dir)
	}
	return out, nil
}

// page is the whole performance page: a header, then one table per CPU
// kind.
func page(recs []*record) string {
	var b strings.Builder
	b.WriteString(`# Performance

The speed table, one per kind of CPU it was measured on. This page is
written by ` + "`bench/perf`" + ` (` + "`cd bench && go run ./perf -page ../docs/performance.md`" + `),
never by hand: a run saves its numbers as ` + "`bench/perf/results/<cpu>.json`" + ` and
rewrites the page from every saved run, so a run on one kind of CPU keeps
the tables of the others (` + "`go run ./perf -regen`" + ` rewrites it from the saved
runs alone). Figures for weighted sampling and chunking are in
[benchmarks](benchmarks.md). Back to the [docs index](README.md).
`)
	for _, r := range recs {
		b.WriteString("\n")
		b.WriteString(table(r))
		if r.Source != "" {
			fmt.Fprintf(&b, "\n%s\n", r.Source)
		}
	}
	return b.String()
}

// writePage rewrites path from the records saved in dir.
func writePage(path, dir string) error {
	recs, err := loadRecords(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(page(recs)), 0o644)
}
