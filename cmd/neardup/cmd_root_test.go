package main

import (
	"context"
	"encoding/json"
	"github.com/neardup/neardup/sketch"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes runs the command line with every kind of bad value: each
// is a usage error (exit 2) whose one-line message states the valid range,
// and none silently falls back to a default.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	missing := filepath.Join(dir, "missing.jsonl")
	noStore := filepath.Join(dir, "no-such-index")
	for _, c := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"dedup", "-q", "--out", out, "--threshold", "0", sampleCorpus}, ExitUsage, "--threshold 0: want a similarity in (0, 1]"},
		{[]string{"dedup", "-q", "--out", out, "--threshold", "1.5", sampleCorpus}, ExitUsage, "(0, 1]"},
		{[]string{"dedup", "-q", "--out", out, "--k", "0", sampleCorpus}, ExitUsage, "--k 0: want a number of samples in [1, "},
		{[]string{"dedup", "-q", "--out", out, "--sampler", "foo", sampleCorpus}, ExitUsage, `unknown --sampler "foo": want one of oph, minhash, superminhash`},
		{[]string{"dedup", "-q", "--out", out, "--sampler", "bottomk", sampleCorpus}, ExitUsage, "--sampler bottomk cannot be used here: want one of"},
		{[]string{"dedup", "-q", "--out", out, "--shingle", "0", sampleCorpus}, ExitUsage, "--shingle 0: want at least 1"},
		{[]string{"dedup", "-q", "--out", out, "--max-rejected", "2", sampleCorpus}, ExitUsage, "--max-rejected 2: want a fraction"},
		{[]string{"dedup", "-q", "--out", out, missing}, ExitFailure, "input " + missing + ": no such file or directory"},
		{[]string{"explain", "--threshold", "0", "a", "b"}, ExitUsage, "(0, 1]"},
		{[]string{"explain", "--k", "0", "a", "b"}, ExitUsage, "--k 0"},
		{[]string{"sketch", "--sampler", "nope", sampleCorpus}, ExitUsage, "want one of minhash, prefix"},
		{[]string{"sketch", "--k", "0", sampleCorpus}, ExitUsage, "--k 0"},
		{[]string{"sketch", missing}, ExitFailure, "no such file"},
		{[]string{"count", "--sampler", "cws", sampleCorpus}, ExitUsage, "--sampler cws cannot be used here"},
		{[]string{"count", missing}, ExitFailure, "no such file"},
		{[]string{"features", missing}, ExitFailure, "no such file"},
		{[]string{"fingerprint", missing}, ExitFailure, "no such file"},
		{[]string{"compare", missing, sampleCorpus}, ExitFailure, "no such file"},
		{[]string{"index", "add", "--store", filepath.Join(dir, "idx"), missing}, ExitFailure, "no such file"},
		{[]string{"index", "add", "--store", filepath.Join(dir, "idx"), "--k", "0", sampleCorpus}, ExitUsage, "--k 0"},
		{[]string{"index", "query", "--store", noStore, sampleCorpus}, ExitUsage, "--store " + noStore + ": no index there"},
		{[]string{"index", "remove", "--store", noStore, "x"}, ExitUsage, "no index there"},
		{[]string{"index", "query", "--store", dir, sampleCorpus}, ExitUsage, "holds no index"},
		{[]string{"files", "scan", "--threshold", "0", dir}, ExitUsage, "(0, 1]"},
		{[]string{"params", "--threshold", "0"}, ExitUsage, "--threshold 0"},
		{[]string{"nosuchcommand"}, ExitUsage, "unknown command"},
	} {
		env, stdout, stderr := testEnv()
		code := Main(context.Background(), c.args, env)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) > 2 {
			t.Errorf("%v: error is not one line: %q", c.args, stderr.String())
		}
		_ = stdout
	}
	if _, err := os.Stat(noStore); !os.IsNotExist(err) {
		t.Errorf("index query created the store it was pointed at: %v", err)
	}
}

// TestFlagVocabulary: --seed is the sketch seed everywhere; the old
// --sketch-seed still works with a warning on stderr and gives the same
// result.
func TestFlagVocabulary(t *testing.T) {
	dir := t.TempDir()
	var outs []string
	for _, seed := range []string{"--seed", "--sketch-seed"} {
		env, stdout, stderr := testEnv()
		args := []string{"explain", "--json", seed, "7", "--corpus", sampleCorpus, "debian-copyright/alsa-topology-conf", "debian-copyright/alsa-ucm-conf"}
		if code := Main(context.Background(), args, env); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if seed == "--sketch-seed" && !strings.Contains(stderr.String(), "--sketch-seed has been deprecated, use --seed") {
			t.Errorf("no deprecation warning: %q", stderr.String())
		}
		outs = append(outs, stdout.String())
	}
	if outs[0] != outs[1] || !strings.Contains(outs[0], "seed=7") {
		t.Errorf("--seed and --sketch-seed differ:\n%s\n%s", outs[0], outs[1])
	}
	// The hidden spellings stay out of the help.
	env, stdout, _ := testEnv()
	Main(context.Background(), []string{"dedup", "--help"}, env)
	if h := stdout.String(); strings.Contains(h, "sketch-seed") || !strings.Contains(h, "--seed") || strings.Contains(h, "-k, --shingle") {
		t.Errorf("dedup help shows old spellings:\n%s", h)
	}
	_ = dir
}

// TestDedupSummaryAgrees: summary.json says what stdout says (KeyBits 64,
// not 0), and --json prints the summary itself.
func TestDedupSummaryAgrees(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	env, stdout, stderr := testEnv()
	if code := Main(context.Background(), []string{"dedup", "-q", "--store", "memory", "--out", out, sampleCorpus}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Read   int64
		Config struct {
			LSH struct{ R, B, M, KeyBits int }
		}
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Config.LSH.KeyBits != 64 || !strings.Contains(stdout.String(), "keybits=64") {
		t.Errorf("summary KeyBits %d, stdout %q", sum.Config.LSH.KeyBits, stdout.String())
	}
	env, stdout, _ = testEnv()
	if code := Main(context.Background(), []string{"dedup", "-q", "--json", "--store", "memory", "--out", out, sampleCorpus}, env); code != ExitOK {
		t.Fatal(code)
	}
	if strings.TrimSpace(stdout.String()) == "" || !json.Valid(stdout.Bytes()) {
		t.Fatalf("--json: %q", stdout.String())
	}
	var sum2 struct{ Read int64 }
	json.Unmarshal(stdout.Bytes(), &sum2)
	if sum2.Read != sum.Read || sum.Read != 474 {
		t.Errorf("--json read %d, summary.json %d", sum2.Read, sum.Read)
	}
}

// TestMaxRejectedMissingText: a wrong --text-field rejects every record;
// dedup and index add still write their output, then exit 1 with the
// reason, an example record (file:line) and the fields it does have.
func TestMaxRejectedMissingText(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	var lines []string
	for i := 0; i < 20; i++ {
		lines = append(lines, `{"id":"d`+string(rune('a'+i))+`","content":"some words here","url":"u"}`)
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"dedup", "-q", "--store", "memory", "--out", filepath.Join(dir, "out"), in},
		{"index", "add", "-q", "--store", filepath.Join(dir, "idx"), in},
	} {
		env, stdout, stderr := testEnv()
		code := Main(context.Background(), args, env)
		msg := stderr.String()
		if code != ExitFailure {
			t.Fatalf("%v: exit %d: %s", args, code, msg)
		}
		for _, want := range []string{"rejected 20 of 20 records (100.0%), more than --max-rejected 0.1", "missing-text (20)",
			"docs.jsonl:1", `no field "text"`, "id, content, url", "--text-field"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%v: message lacks %q: %s", args[0], want, msg)
			}
		}
		if stdout.Len() == 0 {
			t.Errorf("%v: nothing on stdout before failing", args)
		}
		// With --max-rejected 1 the same run succeeds.
		env, _, stderr = testEnv()
		if code := Main(context.Background(), append(args, "--max-rejected", "1"), env); code != ExitOK {
			t.Errorf("%v --max-rejected 1: exit %d: %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "summary.json")); err != nil {
		t.Errorf("dedup wrote no summary: %v", err)
	}
}

// TestSamplerHelp: the --sampler help of index add and query, dedup and
// explain names exactly the samplers the command then accepts (index once
// listed cws and icws, which it rejects).
func TestSamplerHelp(t *testing.T) {
	for _, c := range []struct {
		cmd   []string
		valid []sketch.Algorithm
	}{{[]string{"index", "add"}, indexSamplers}, {[]string{"index", "query"}, indexSamplers},
		{[]string{"dedup"}, dedupSamplers}, {[]string{"explain"}, indexSamplers}} {
		env, stdout, _ := testEnv()
		Main(context.Background(), append(c.cmd, "--help"), env)
		var line string
		for l := range strings.Lines(stdout.String()) {
			if strings.HasPrefix(strings.TrimSpace(l), "--sampler ") {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("%s --help has no --sampler line:\n%s", c.cmd, stdout)
		}
		listed := map[sketch.Algorithm]bool{}
		for _, w := range strings.FieldsFunc(line, func(r rune) bool {
			return r == ' ' || r == ',' || r == ';' || r == ':' || r == '"' || r == '(' || r == ')'
		}) {
			if a, err := sketch.ParseAlgorithm(w); err == nil {
				listed[a] = true
			}
		}
		for _, a := range allSamplers {
			_, err := parseSampler(a.String(), c.valid)
			if listed[a] != (err == nil) {
				t.Errorf("%s --help lists %s: %v, accepts it: %v\n%s", c.cmd, a, listed[a], err == nil, line)
			}
		}
	}
}
