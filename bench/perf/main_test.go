package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPageUpToDate checks that docs/performance.md is exactly what the
// saved results give: the page is generated, never edited by hand.
func TestPageUpToDate(t *testing.T) {
	recs, err := loadRecords("results")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := page(recs); string(got) != want {
		t.Errorf("docs/performance.md differs from what bench/perf/results gives; run `cd bench && go run ./perf -regen`")
	}
}

// TestPageKeepsCPUKinds saves runs on two kinds of CPU, then a second run
// on the first kind: the page has one table per kind, the newer run's.
func TestPageKeepsCPUKinds(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	mk := func(cpu, isa string, oph float64) *record { return ophRecord(cpu, isa, "", "", oph) }
	for _, r := range []*record{mk("AMD EPYC 7B13", "avx2, no AVX-512", 1000), mk("Neoverse-N1", "asimd, pmull", 2000), mk("AMD EPYC 7B13", "avx2, no AVX-512", 3000)} {
		if err := saveRecord(results, r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "performance.md")
	if err := writePage(path, results); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	s := string(b)
	for _, want := range []string{"## AMD EPYC 7B13\n\n2 CPUs; instruction sets: avx2, no AVX-512.", "## Neoverse-N1\n\n2 CPUs; instruction sets: asimd, pmull.", "| 3,000 docs/s |", "| 2,000 docs/s |"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "| 1,000 docs/s |") || strings.Count(s, "## AMD EPYC 7B13") != 1 {
		t.Errorf("the older run of the same CPU kind is still on the page:\n%s", s)
	}
}

func TestISA(t *testing.T) {
	for in, want := range map[string]string{
		"processor\t: 0\nflags\t\t: fpu sse4_2 popcnt aes avx avx2 bmi2\n": "sse4_2, popcnt, aes, avx, avx2, bmi2, no AVX-512",
		"flags\t\t: sse4_2 avx2 avx512f avx512bw\n":                        "sse4_2, avx2, avx512f, avx512bw",
		"Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n": "aes, asimd, pmull, sha2, crc32, atomics",
		"nothing here\n": "",
	} {
		if got := isaOf(bufio.NewScanner(strings.NewReader(in))); got != want {
			t.Errorf("isaOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKind(t *testing.T) {
	for in, want := range map[string]string{"AMD EPYC": "amd-epyc", "Intel(R) Xeon(R) Processor": "intel-r-xeon-r-processor", "": "unknown"} {
		if got := kind(in); got != want {
			t.Errorf("kind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNum(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := num(x); got != want {
			t.Errorf("num(%v) = %q, want %q", x, got, want)
		}
	}
}

// TestKernelSwitchRecords checks that a run with slower kernels switched
// on (GODEBUG=cpu.avx512f=off, -tags purego) keeps its own table and file
// beside the CPU's own run, and that its header names the kernels and the
// switch.
func TestKernelSwitchRecords(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	mk := func(kernels, sw string, oph float64) *record {
		return ophRecord("Intel Xeon", "avx2, avx512f", kernels, sw, oph)
	}
	for _, r := range []*record{mk("avx512", "", 1000), mk("avx2", "GODEBUG=cpu.avx512f=off", 2000), mk("go", "-tags purego", 3000)} {
		if err := saveRecord(results, r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := loadRecords(results)
	if err != nil || len(recs) != 3 {
		t.Fatalf("loadRecords: %d records, %v", len(recs), err)
	}
	s := page(recs)
	for _, want := range []string{
		"## Intel Xeon\n\n2 CPUs; instruction sets: avx2, avx512f; extraction kernels: avx512.",
		"## Intel Xeon, avx2 kernels\n\n2 CPUs; instruction sets: avx2, avx512f; extraction kernels: avx2 (by GODEBUG=cpu.avx512f=off).",
		"## Intel Xeon, go kernels\n\n2 CPUs; instruction sets: avx2, avx512f; extraction kernels: go (by -tags purego).",
		"| 1,000 docs/s |", "| 2,000 docs/s |", "| 3,000 docs/s |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q:\n%s", want, s)
		}
	}
	t.Setenv("GODEBUG", "cpu.avx512f=off,madvdontneed=1")
	if got := kernelSwitch("purego"); got != "-tags purego GODEBUG=cpu.avx512f=off" {
		t.Errorf("kernelSwitch = %q", got)
	}
}

// ophRecord is a saved run of one OPH sketch row, on a CPU with the given
// instruction sets, kernels and kernel switch.
func ophRecord(cpu, isa, kernels, sw string, oph float64) *record {
	r := &record{Command: "go run ./perf", CPU: cpu, CPUs: 2, ISA: isa, Kernels: kernels, Switch: sw,
		Docs: 10, Reps: 1, K: 128, Sketch: &sketchReport{CPU: cpu, ShinglesPerDoc: 996}}
	r.Sketch.Results = append(r.Sketch.Results, struct {
		Name       string  `json:"name"`
		Lib        string  `json:"lib"`
		Kind       string  `json:"kind"`
		DocsPerSec float64 `json:"docs_per_sec"`
		NsPerDoc   float64 `json:"ns_per_doc"`
	}{Name: "oph", DocsPerSec: oph})
	return r
}
