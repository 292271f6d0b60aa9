package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/rabin"
)

func featFPOptions(t *testing.T, paths []string, args ...string) fingerprintOptions {
	ff, cf := featFlagsFor(t, false, args...)
	return fingerprintOptions{Paths: paths, Corpus: cf, Feature: ff, Poly: fmt.Sprintf("%016x", uint64(rabin.DefaultPoly))}
}

func featFPLines(s string) map[string][]string {
	m := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		m[f[len(f)-1]] = f[:len(f)-1]
	}
	return m
}

func TestRunFingerprint(t *testing.T) {
	dir := t.TempDir()
	a := featWrite(t, filepath.Join(dir, "a.txt"), "Hello,   World!\n")
	b := featWrite(t, filepath.Join(dir, "b.txt"), "Hello,   World!\n")
	c := featWrite(t, filepath.Join(dir, "c.txt"), "hello world")
	bad := featWrite(t, filepath.Join(dir, "d.txt"), "caf\xe9 latin-1\n")
	env, out, errb := featTestEnv()
	opts := featFPOptions(t, []string{dir})
	opts.Normalized = true
	if err := runFingerprint(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	got := featFPLines(out.String())
	tab := rabin.New(rabin.DefaultPoly)
	hex := func(data string) string { return string(featHex16(nil, tab.Hash([]byte(data)))) }
	if len(got) != 4 {
		t.Fatalf("want 4 documents: %s", out)
	}
	for path, data := range map[string]string{a: "Hello,   World!\n", c: "hello world", bad: "caf\xe9 latin-1\n"} {
		name := filepath.Base(path)
		if got[name][0] != hex(data) {
			t.Errorf("%s: fingerprint %s, want Hash of the raw bytes %s", name, got[name][0], hex(data))
		}
	}
	if got["a.txt"][0] != got[filepath.Base(b)][0] || got["a.txt"][0] == got["c.txt"][0] {
		t.Error("exact duplicates must share the raw fingerprint, others not")
	}
	if got["a.txt"][1] != got["c.txt"][1] || got["c.txt"][1] != hex("hello world") {
		t.Errorf("normalized fingerprints: %v %v", got["a.txt"], got["c.txt"])
	}
	if !strings.Contains(errb.String(), "read 4, yielded 4") {
		t.Errorf("summary: %s", errb)
	}
}

func TestRunFingerprintStdinAndPoly(t *testing.T) {
	env, out, _ := featTestEnv()
	env.Stdin = strings.NewReader("some text on stdin")
	opts := featFPOptions(t, nil)
	p := rabin.RandomPrimitive(5)
	opts.Poly = fmt.Sprintf("0x%016x", uint64(p))
	if err := runFingerprint(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	want := string(featHex16(nil, rabin.New(p).Hash([]byte("some text on stdin"))))
	if !strings.HasPrefix(out.String(), want+"  ") {
		t.Fatalf("stdin fingerprint %q, want %s", out, want)
	}
	for _, poly := range []string{"zz", "0000000000000000", "2"} {
		opts.Poly = poly
		env, _, _ := featTestEnv()
		var ue *UsageError
		if err := runFingerprint(context.Background(), env, opts); !errors.As(err, &ue) {
			t.Errorf("--poly %s: want usage error, got %v", poly, err)
		}
	}
}

// TestFingerprintJSON: --json prints one object per document with the same
// fingerprints as the text lines, --normalized included.
func TestFingerprintJSON(t *testing.T) {
	var outs [2]string
	for i, args := range [][]string{
		{"fingerprint", "--normalized", sampleCorpus},
		{"fingerprint", "--normalized", "--json", sampleCorpus},
	} {
		env, stdout, stderr := testEnv()
		if code := Main(context.Background(), args, env); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		outs[i] = stdout.String()
	}
	text := strings.Split(strings.TrimSpace(outs[0]), "\n")
	js := strings.Split(strings.TrimSpace(outs[1]), "\n")
	if len(text) != 474 || len(js) != len(text) {
		t.Fatalf("%d text lines, %d JSON lines", len(text), len(js))
	}
	for i := range text {
		var r struct{ ID, Fingerprint, Normalized string }
		if err := json.Unmarshal([]byte(js[i]), &r); err != nil {
			t.Fatal(err)
		}
		if want := r.Fingerprint + " " + r.Normalized + "  " + r.ID; text[i] != want {
			t.Fatalf("line %d: text %q, JSON %q", i, text[i], js[i])
		}
	}
}
