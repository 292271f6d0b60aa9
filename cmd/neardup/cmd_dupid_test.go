package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexAddDuplicateID: within one run, a record whose id an earlier
// record used is rejected as duplicate-id naming both sources, and the
// first one stays in the index (nothing is replaced).
func TestIndexAddDuplicateID(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	first := strings.Repeat("permission is hereby granted free of charge to any person obtaining a copy ", 10)
	docs := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(docs, []byte(`{"id":"x","text":"`+first+`"}`+"\n"+`{"id":"y","text":"nothing alike at all here"}`+"\n"+`{"id":"x","text":"a different text entirely, which must not replace the first"}`+"\n"), 0o644)
	code, out, errs := runMain("index", "add", "--store", idx, "-q", "--json", "--max-rejected", "1", docs)
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	var res indexAddJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Added != 2 || res.Replaced != 0 || res.Read != 3 || res.Rejected != 1 || res.RejectedBy["duplicate-id"] != 1 {
		t.Errorf("add: %+v, want 2 added, 1 rejected as duplicate-id", res)
	}
	if want := docs + ":3: duplicate-id: id \"x\" already used by " + docs + ":1"; !strings.Contains(errs, want) {
		t.Errorf("stderr %q does not say %q", errs, want)
	}
	q := filepath.Join(dir, "q.jsonl")
	os.WriteFile(q, []byte(`{"id":"q","text":"`+first+`"}`+"\n"), 0o644)
	code, out, errs = runMain("index", "query", "--store", idx, q)
	var qr queryJSON
	if code != 0 || json.Unmarshal([]byte(out), &qr) != nil || len(qr.Matches) != 1 || qr.Matches[0].ID != "x" || qr.Matches[0].Similarity != 1 {
		t.Errorf("query: the first x is not the one stored: %d %q %q", code, out, errs)
	}
	// Over --max-rejected (1 of 3): the rest is added, then exit 1.
	code, _, errs = runMain("index", "add", "--store", filepath.Join(dir, "idx2"), "-q", docs)
	if code != ExitFailure || !strings.Contains(errs, "duplicate-id") {
		t.Errorf("add with too many rejected: exit %d: %s", code, errs)
	}
}

// TestDedupSameNamesInTwoDirs: dedup crawl1/ crawl2/ with files of the
// same relative names keeps both, with distinct ids, each file whole; a
// record repeating an id within the run is rejected, naming both sources,
// in rejected.jsonl.
func TestDedupSameNamesInTwoDirs(t *testing.T) {
	dir := t.TempDir()
	texts := map[string]string{
		"crawl1/page.html": "<html><body><p>" + strings.Repeat("the first crawl has its own words here ", 20) + "</p></body></html>",
		"crawl2/page.html": "<html><body><p>" + strings.Repeat("a second crawl says something else entirely ", 20) + "</p></body></html>",
	}
	for name, text := range texts {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	dup := filepath.Join(dir, "dup.jsonl")
	os.WriteFile(dup, []byte(`{"id":"d","text":"one text"}`+"\n"+`{"id":"d","text":"another text"}`+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, errs := runMain("dedup", "-q", "--max-rejected", "1", "--out", out, filepath.Join(dir, "crawl1"), filepath.Join(dir, "crawl2"), dup)
	if code != 0 {
		t.Fatalf("dedup: exit %d: %s %s", code, stdout, errs)
	}
	for name, text := range texts {
		matches, _ := filepath.Glob(filepath.Join(out, "kept", "*", filepath.Base(name)))
		matches2, _ := filepath.Glob(filepath.Join(out, "kept", name))
		matches = append(matches, matches2...)
		found := false
		for _, m := range matches {
			if b, _ := os.ReadFile(m); string(b) == text {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not kept whole (found %v)", name, matches)
		}
	}
	rej := readLines(t, filepath.Join(out, "rejected.jsonl"))
	if len(rej) != 1 || rej[0]["reason"] != "duplicate-id" || rej[0]["id"] != "d" || rej[0]["source"] != dup || rej[0]["line"] != 2.0 ||
		!strings.Contains(rej[0]["error"].(string), dup+":1") {
		t.Errorf("rejected.jsonl: %v", rej)
	}
	var sum struct{ Read, Kept int64 }
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	json.Unmarshal(b, &sum)
	if sum.Read != 4 || sum.Kept != 3 {
		t.Errorf("summary: read %d kept %d, want 4 and 3", sum.Read, sum.Kept)
	}
	_ = context.Background
}

// TestDedupRemovedAndTooLarge: removed.jsonl lists every dropped
// duplicate with the id kept in its cluster; --max-record-bytes rejects a
// larger record with too-large (in rejected.jsonl) and the run goes on.
func TestDedupRemovedAndTooLarge(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, errs := runMain("dedup", "-q", "--out", out, sampleCorpus)
	if code != 0 {
		t.Fatalf("dedup: exit %d: %s %s", code, stdout, errs)
	}
	var sum struct{ Read, Kept, Duplicates int64 }
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	json.Unmarshal(b, &sum)
	removed := readLines(t, filepath.Join(out, "removed.jsonl"))
	if int64(len(removed)) != sum.Duplicates || sum.Duplicates == 0 {
		t.Fatalf("removed.jsonl has %d lines, %d duplicates", len(removed), sum.Duplicates)
	}
	kept := map[string]bool{}
	for _, c := range readLines(t, filepath.Join(out, "clusters.jsonl")) {
		kept[c["kept"].(string)] = true
	}
	for _, r := range removed {
		if !kept[r["duplicate_of"].(string)] || r["id"] == r["duplicate_of"] {
			t.Errorf("removed %v: duplicate_of is not a kept document", r)
		}
	}
	if rej := readLines(t, filepath.Join(out, "rejected.jsonl")); len(rej) != 0 {
		t.Errorf("rejected.jsonl of a clean corpus: %v", rej)
	}
	// --keep none: every member is removed, each naming another member.
	outNone := filepath.Join(dir, "out-none")
	if code, _, errs := runMain("dedup", "-q", "--keep", "none", "--out", outNone, sampleCorpus); code != 0 {
		t.Fatalf("dedup --keep none: exit %d: %s", code, errs)
	}
	for _, r := range readLines(t, filepath.Join(outNone, "removed.jsonl")) {
		if of, _ := r["duplicate_of"].(string); of == "" || of == r["id"] {
			t.Errorf("--keep none: removed %v names no other member", r)
		}
	}

	docs := filepath.Join(dir, "docs.jsonl")
	big := strings.Repeat("large ", 100)
	os.WriteFile(docs, []byte(`{"id":"a","text":"small one"}`+"\n"+`{"id":"b","text":"`+big+`"}`+"\n"+`{"id":"c","text":"small two"}`+"\n"), 0o644)
	out2 := filepath.Join(dir, "out2")
	code, stdout, errs = runMain("dedup", "-q", "--max-rejected", "1", "--max-record-bytes", "200", "--out", out2, docs)
	if code != 0 || !strings.Contains(stdout, "read 3: kept 2, duplicates 0 (0 identical, 0 near), rejected 1") {
		t.Fatalf("dedup --max-record-bytes: exit %d: %s %s", code, stdout, errs)
	}
	rej := readLines(t, filepath.Join(out2, "rejected.jsonl"))
	if len(rej) != 1 || rej[0]["reason"] != "too-large" || rej[0]["line"] != 2.0 {
		t.Errorf("rejected.jsonl: %v", rej)
	}
	code, stdout, errs = runMain("index", "add", "-q", "--json", "--max-rejected", "1", "--max-record-bytes", "200", "--store", filepath.Join(dir, "idx"), docs)
	if code != 0 || !strings.Contains(stdout, `"rejected_by":{"too-large":1}`) {
		t.Errorf("index add --max-record-bytes: exit %d: %s %s", code, stdout, errs)
	}
	if code, _, _ := runMain("dedup", "--max-record-bytes", "12 parsecs", "--out", out2, docs); code != ExitUsage {
		t.Errorf("a bad size: exit %d", code)
	}
}

// TestDedupOutInsideInput: an --out inside an input directory is not read
// back as input, on the first run or on a second one over the first's
// output.
func TestDedupOutInsideInput(t *testing.T) {
	dir := t.TempDir()
	for i, text := range []string{"the first page has words of its own", "the second page says something else"} {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.txt", i)), []byte(text), 0o644)
	}
	out := filepath.Join(dir, "out")
	for run := range 2 {
		code, stdout, errs := runMain("dedup", "-q", "--out", out, dir)
		if code != 0 || !strings.Contains(stdout, "read 2: kept 2") {
			t.Errorf("run %d: exit %d: %s %s", run+1, code, stdout, errs)
		}
	}
}
