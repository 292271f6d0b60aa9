package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/rabin"
)

func featFPOptions(t *testing.T, paths []string, args ...string) fingerprintOptions {
	ff, cf := featFlagsFor(t, false, args...)
	return fingerprintOptions{Paths: paths, Corpus: cf, Feature: ff}
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
	tab := identity.New(identity.Key{}) // the public default
	hex := func(data string) string { return tab.Sum([]byte(data)).String() }
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
	if !strings.Contains(errb.String(), "read 4, yielded 4") || !strings.Contains(errb.String(), "not a security boundary") {
		t.Errorf("summary: %s", errb)
	}
	// The public default is the identity fingerprint under the zero key
	// (identity's golden vector).
	if h := hex(""); h != "5071e10d52cd243cffe0e255d3ac8517" {
		t.Errorf("fingerprint of nothing %s, want the golden one", h)
	}

	// --key: the keyed form an index with that key computes.
	k, _ := identity.NewKey()
	env, out, _ = featTestEnv()
	opts = featFPOptions(t, []string{a})
	opts.Key = k.String()
	if err := runFingerprint(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	if want := identity.New(k).Sum([]byte("Hello,   World!\n")).String() + "  a.txt\n"; out.String() != want || want[:32] == hex("Hello,   World!\n") {
		t.Errorf("--key: %q, want %q", out, want)
	}
	for _, bad := range []fingerprintOptions{{Key: "12"}, {Key: strings.Repeat("0", 64)}, {Scheme: "md5"},
		{Poly: "d800000000000000"}, {Scheme: identity.LegacyScheme, Key: k.String()}} {
		o := featFPOptions(t, []string{a})
		o.Key, o.Scheme, o.Poly = bad.Key, bad.Scheme, bad.Poly
		env, _, _ := featTestEnv()
		var ue *UsageError
		if err := runFingerprint(context.Background(), env, o); !errors.As(err, &ue) {
			t.Errorf("%+v: want a usage error, got %v", bad, err)
		}
	}
}

func TestRunFingerprintStdinAndPoly(t *testing.T) {
	env, out, _ := featTestEnv()
	env.Stdin = strings.NewReader("some text on stdin")
	opts := featFPOptions(t, nil)
	opts.Scheme = identity.LegacyScheme
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
