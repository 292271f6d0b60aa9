package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentityGoldenIndex: an index written by the release that introduced
// keyed identity fingerprints (scheme rabin2-blake3-keyed-128, testdata
// README) keeps opening and answering: its recorded scheme and key are
// kept (not upgraded), an exact copy of a stored document is dropped as
// identical to it, a one-letter change is not identical, and index check
// counts four identity fingerprints (the three stored and the kept
// "changed", added by the run).
func TestIdentityGoldenIndex(t *testing.T) {
	idx := copyDir(t, filepath.Join("testdata", "identity-rabin2-blake3", "index"))
	dir := t.TempDir()
	in := filepath.Join(dir, "q.jsonl")
	q := `{"id":"copy","text":"The quick brown fox jumps over the lazy dog while the cat sleeps on the warm windowsill of the old farmhouse."}
{"id":"changed","text":"Near-duplicate detection finds documents that share most of their shingles, as the book describes in its second chapter on sketches!"}
`
	if err := os.WriteFile(in, []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, errs := runMain("dedup", "-q", "--store", idx, "--out", out, in)
	if code != 0 {
		t.Fatalf("dedup --store: exit %d: %s", code, errs)
	}
	if strings.Contains(errs, "upgrad") {
		t.Fatalf("an index with identity fingerprints was upgraded: %s", errs)
	}
	raw, err := os.ReadFile(filepath.Join(out, "pairs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	identical := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var p struct {
			A, B      string
			Identical bool
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		if p.Identical {
			identical[p.B] = p.A
		}
	}
	if len(identical) != 1 || identical["copy"] != "a" {
		t.Fatalf("identical pairs %v, want copy identical to the stored a only", identical)
	}
	var sum struct {
		Exact     int  `json:"exact_duplicates"`
		Unconfirm int  `json:"identity_unconfirmed"`
		Upgraded  bool `json:"identity_upgraded"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Exact != 1 || sum.Unconfirm != 0 || sum.Upgraded {
		t.Fatalf("summary: %+v, want 1 exact duplicate, none unconfirmed, not upgraded", sum)
	}
	code, stdout, errs := runMain("index", "check", "--store", idx)
	if code != 0 || !strings.Contains(stdout+errs, "4 identity fingerprints (0 public") {
		t.Fatalf("index check: exit %d: %s%s", code, stdout, errs)
	}
}
