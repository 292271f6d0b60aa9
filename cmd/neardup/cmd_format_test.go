package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
)

// sourceTree writes a small tree of source files: Go files (two of them
// near-duplicates), a multi-line .json file (which JSONL parsing would
// reject line by line), a Markdown file and an HTML page, some nested. It
// returns the root and the number of files.
func sourceTree(t *testing.T) (string, int) {
	t.Helper()
	root := t.TempDir()
	var body strings.Builder
	body.WriteString("package util\n\n")
	for i := range 40 {
		fmt.Fprintf(&body, "// Step%d applies step %d of the transform to x and returns the result.\nfunc Step%d(x int) int { return x*%d + %d }\n\n", i, i, i, i+3, i*7)
	}
	near := strings.Replace(body.String(), "package util", "package util2", 1)
	files := map[string]string{
		"util.go":              body.String(),
		"copy/util.go":         near,
		"main.go":              "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, source tree\")\n}\n",
		"config/settings.json": "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\",\n  \"private\": true\n}\n",
		"docs/README.md":       "# Demo\n\nA small tree of source files to deduplicate.\n",
		"docs/index.html":      "<!doctype html><html><head><title>Demo</title></head><body><p>The demo page of the tree.</p></body></html>\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, len(files)
}

// TestFormatFlagSourceTree deduplicates a walked directory of source files:
// with --format auto no record is rejected as bad JSON (the .json file is a
// JSON document, not JSONL; the others are one document each), and with
// --format file every file is one document, nothing rejected, and the two
// copies of util.go are near-duplicates.
func TestFormatFlagSourceTree(t *testing.T) {
	root, nfiles := sourceTree(t)
	for _, format := range []string{"auto", "file"} {
		out := filepath.Join(t.TempDir(), "out")
		env, stdout, errb := testEnv()
		code := Main(context.Background(), []string{"dedup", root, "--format", format, "--out", out, "--store", "memory", "--json", "-q"}, env)
		var s dedup.Summary
		if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
			t.Fatalf("--format %s: exit %d, %v; stderr %s", format, code, err, errb)
		}
		if s.RejectedBy["bad-json"] != 0 {
			t.Errorf("--format %s: %d bad-json rejections (%v)", format, s.RejectedBy["bad-json"], s.RejectedBy)
		}
		if s.Read != s.Kept+s.Duplicates+s.Rejected {
			t.Errorf("--format %s: read %d != kept %d + duplicates %d + rejected %d", format, s.Read, s.Kept, s.Duplicates, s.Rejected)
		}
		switch format {
		case "file":
			if code != ExitOK || s.Read != int64(nfiles) || s.Rejected != 0 || s.Near != 1 {
				t.Errorf("--format file: exit %d, read %d of %d files, rejected %v, near %d; stderr %s", code, s.Read, nfiles, s.RejectedBy, s.Near, errb)
			}
		case "auto":
			// settings.json is one JSON record without a text field:
			// rejected as missing-text, the only rejection.
			if s.Read != int64(nfiles) || s.Rejected != 1 || s.RejectedBy["missing-text"] != 1 || s.Near != 1 {
				t.Errorf("--format auto: read %d of %d, rejected %v, near %d", s.Read, nfiles, s.RejectedBy, s.Near)
			}
		}
	}
}

// TestFormatFlagEveryCorpusCommand gives --format to every command that
// reads a corpus: file reads the tree as one document per file, and an
// unknown format is a usage error (exit 2) that lists the valid ones.
func TestFormatFlagEveryCorpusCommand(t *testing.T) {
	root, nfiles := sourceTree(t)
	for _, args := range [][]string{
		{"fingerprint", root},
		{"features", root},
		{"sketch", root},
		{"count", root},
		{"idf", "build", root, "--idf", filepath.Join(t.TempDir(), "idf.bin")},
		{"index", "add", "--store", filepath.Join(t.TempDir(), "ix"), "-q", root},
		{"dedup", root, "--store", "memory", "-q", "--out", filepath.Join(t.TempDir(), "o")},
	} {
		env, stdout, errb := testEnv()
		if code := Main(context.Background(), append(append([]string{}, args...), "--format", "file"), env); code != ExitOK {
			t.Errorf("%v --format file: exit %d: %s", args, code, errb)
			continue
		}
		if strings.Contains(errb.String(), "rejected:") {
			t.Errorf("%v --format file: rejections: %s", args, errb)
		}
		switch args[0] {
		case "fingerprint", "features", "sketch":
			if n := strings.Count(stdout.String(), "\n"); n != nfiles {
				t.Errorf("%v --format file: %d lines for %d files", args, n, nfiles)
			}
		}
		env, _, errb = testEnv()
		if code := Main(context.Background(), append(append([]string{}, args...), "--format", "xml"), env); code != ExitUsage || !strings.Contains(errb.String(), "want auto, jsonl, json, text, html, warc, parquet or file") {
			t.Errorf("%v --format xml: exit %d, stderr %q", args, code, errb)
		}
	}
	// explain and compare read a --corpus.
	env, _, errb := testEnv()
	if code := Main(context.Background(), []string{"compare", "--corpus", root, "--format", "file", "util.go", "copy/util.go"}, env); code != ExitOK {
		t.Errorf("compare --format file: exit %d: %s", code, errb)
	}
	env, _, errb = testEnv()
	if code := Main(context.Background(), []string{"explain", "--corpus", root, "--format", "file", "util.go", "copy/util.go"}, env); code != ExitOK {
		t.Errorf("explain --format file: exit %d: %s", code, errb)
	}
}

// TestJSONDirectoryNamesFormatFile walks a directory of package.json-like
// files: under --format auto each is one JSON record with no text field,
// so every record is rejected, and the one-line error names --format file
// (what such a user wants) beside --text-field; with --format file the same
// directory is read, every file one document.
func TestJSONDirectoryNamesFormatFile(t *testing.T) {
	root := t.TempDir()
	for i := range 4 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("{\n  \"name\": \"pkg%d\",\n  \"version\": \"1.0.%d\",\n  \"dependencies\": {\"left-pad\": \"^1.3.0\"}\n}\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env, _, errb := testEnv()
	code := Main(context.Background(), []string{"dedup", root, "--out", filepath.Join(t.TempDir(), "out"), "--store", "memory", "-q"}, env)
	if code != ExitFailure || !strings.Contains(errb.String(), "missing-text") || !strings.Contains(errb.String(), "--format file") || !strings.Contains(errb.String(), "--text-field") {
		t.Errorf("auto: exit %d, stderr %q: want exit 1 naming missing-text, --text-field and --format file", code, errb)
	}
	env, _, errb = testEnv()
	if code := Main(context.Background(), []string{"dedup", root, "--format", "file", "--out", filepath.Join(t.TempDir(), "out"), "--store", "memory", "-q"}, env); code != ExitOK {
		t.Errorf("--format file: exit %d, stderr %q", code, errb)
	}
}
