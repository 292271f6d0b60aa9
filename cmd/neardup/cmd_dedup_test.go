package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/store"
)

const sampleCorpus = "../../testdata/licenses/docs.jsonl.gz"

func testEnv() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, &out, &errb
}

func dedupDefaults(inputs []string, out string) dedupOptions {
	o := dedupOptions{Inputs: inputs, Out: out, Threshold: 0.8, Sampler: "oph", K: 128, LSH: "auto",
		Exact: "auto", Keep: "first", MaxSize: 1000, Quiet: true, Slack: 1.645, MaxRejected: 0.10}
	o.Feature.K = 5
	o.Feature.Format, o.Feature.Case, o.Feature.Digits = "auto", "lower", "keep"
	o.Corpus.IDField, o.Corpus.TextField = "id", "text"
	return o
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

func TestDedupSampleCorpus(t *testing.T) {
	dir := t.TempDir()
	env, stdout, _ := testEnv()
	if err := runDedup(context.Background(), env, dedupDefaults([]string{sampleCorpus}, dir)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "read 474:") {
		t.Fatalf("stdout: %s", stdout)
	}
	var sum struct{ Read, Kept, Duplicates, Rejected, Pairs, Clusters int64 }
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Read != 474 || sum.Read != sum.Kept+sum.Duplicates+sum.Rejected || sum.Duplicates == 0 {
		t.Fatalf("summary: %+v", sum)
	}
	pairs := readLines(t, filepath.Join(dir, "pairs.jsonl"))
	clusters := readLines(t, filepath.Join(dir, "clusters.jsonl"))
	if int64(len(pairs)) != sum.Pairs || int64(len(clusters)) != sum.Clusters {
		t.Fatalf("%d pairs, %d clusters; summary says %d, %d", len(pairs), len(clusters), sum.Pairs, sum.Clusters)
	}
	members := 0
	for _, c := range clusters {
		ms := c["members"].([]any)
		if ms[0] != c["kept"] || len(ms) < 2 {
			t.Fatalf("cluster %v: kept must come first", c)
		}
		members += len(ms) - 1
	}
	if int64(members) != sum.Duplicates {
		t.Fatalf("clusters drop %d documents, summary says %d", members, sum.Duplicates)
	}
	// The kept corpus reads back with exactly the kept documents.
	r, err := corpus.Open([]string{filepath.Join(dir, "kept")}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for r.Next() {
		n++
	}
	r.Close()
	if n != sum.Kept {
		t.Fatalf("kept/ holds %d documents, want %d", n, sum.Kept)
	}
}

func TestDedupRefusesToWriteOverInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"a","text":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, _, _ := testEnv()
	err := runDedup(context.Background(), env, dedupDefaults([]string{in}, dir))
	if err == nil || !strings.Contains(err.Error(), "nothing is written over an input") {
		t.Fatalf("err = %v", err)
	}
}

func TestDedupRejectsAndDuplicateIDs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in", "docs.jsonl")
	os.MkdirAll(filepath.Dir(in), 0o755)
	// 60 distinct words: d adds one word at the end, J = 56/57.
	var words []string
	for i := 0; i < 60; i++ {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	text := strings.Join(words, " ")
	lines := []string{
		`{"id":"a","text":"` + text + `"}`,
		`{"id":"b","text":"` + text + `"}`,          // identical body: exact duplicate
		`{"id":"a","text":"another text entirely"}`, // duplicate id: rejected
		`{"id":"c"`, // bad JSON: rejected
		`{"id":"d","text":"` + text + ` tail"}`,
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, stdout, _ := testEnv()
	o := dedupDefaults([]string{in}, filepath.Join(dir, "out"))
	o.MaxRejected = 0.5
	if err := runDedup(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "read 5: kept 1, duplicates 2 (1 identical, 1 near), rejected 2") {
		t.Fatalf("stdout: %s", stdout)
	}
	// 2 of 5 is more than the default 10%: the run writes everything, then
	// fails naming a reason and an example record.
	stdout.Reset()
	o.MaxRejected = 0.10
	err := runDedup(context.Background(), env, o)
	var tm *tooManyRejected
	if !errors.As(err, &tm) || !strings.Contains(err.Error(), "rejected 2 of 5 records (40.0%)") || !strings.Contains(err.Error(), "docs.jsonl:") {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(stdout.String(), "read 5: kept 1") {
		t.Fatalf("no summary before failing: %s", stdout)
	}
	for _, f := range []string{"summary.json", "pairs.jsonl", "clusters.jsonl"} {
		if _, err := os.Stat(filepath.Join(o.Out, f)); err != nil {
			t.Errorf("output %s not written: %v", f, err)
		}
	}
}

func TestIndexAddQueryRemove(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	docs := filepath.Join(dir, "docs.jsonl")
	text := strings.Repeat("permission is hereby granted free of charge to any person obtaining a copy ", 10)
	os.WriteFile(docs, []byte(`{"id":"x","text":"`+text+`"}`+"\n"+`{"id":"y","text":"nothing alike at all here"}`+"\n"), 0o644)
	q := filepath.Join(dir, "q.jsonl")
	os.WriteFile(q, []byte(`{"id":"q","text":"`+text+` and more"}`+"\n"), 0o644)
	o := indexOptions{Store: idx, Sampler: "oph", K: 128, LSH: "auto", Threshold: 0.8, Features: true, Quiet: true}
	o.Feature.K = 5
	o.Feature.Format, o.Feature.Case, o.Feature.Digits = "auto", "lower", "keep"
	o.Corpus.IDField, o.Corpus.TextField = "id", "text"
	env, stdout, _ := testEnv()
	o.Args = []string{docs}
	if err := runIndexAdd(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	o.Args = []string{q}
	stdout.Reset()
	if err := runIndexQuery(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	var res queryJSON
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(res.Matches) != 1 || res.Matches[0].ID != "x" || !res.Matches[0].Exact {
		t.Fatalf("query: %+v", res)
	}
	o.Args = []string{"x"}
	if err := runIndexRemove(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	o.Args = []string{q}
	stdout.Reset()
	if err := runIndexQuery(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), `"matches":[]`) {
		t.Fatalf("after remove: %s", stdout)
	}
}

// An index reopens with no sampler, k or seed flags; a flag that
// contradicts the recorded value fails with one line naming the flag and
// both values.
func TestIndexReopenWithoutFlags(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	text := strings.Repeat("permission is hereby granted free of charge to any person obtaining a copy ", 10)
	docs := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(docs, []byte(`{"id":"x","text":"`+text+`"}`+"\n"+`{"id":"y","text":"nothing alike at all here"}`+"\n"), 0o644)
	q := filepath.Join(dir, "q.jsonl")
	os.WriteFile(q, []byte(`{"id":"q","text":"`+text+` and more"}`+"\n"), 0o644)
	run := func(args ...string) (int, string, string) {
		env, stdout, stderr := testEnv()
		return Main(context.Background(), args, env), stdout.String(), stderr.String()
	}
	code, out, errs := run("index", "add", "--store", idx, "--k", "64", "--sampler", "minhash", "-q", docs)
	if code != 0 || !strings.Contains(out, "added 2 documents") || !strings.Contains(out, "2 new, 0 replaced") {
		t.Fatalf("add: %d %q %q", code, out, errs)
	}
	code, out, errs = run("index", "query", "--store", idx, q)
	var res queryJSON
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Matches) != 1 || res.Matches[0].ID != "x" {
		t.Fatalf("query without flags: %d %q %q", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--k", "128"}, "neardup: --k: the index was built with 64, not 128\n"},
		{[]string{"--sampler", "oph"}, "neardup: --sampler: the index was built with minhash, not oph\n"},
		{[]string{"--shingle", "3"}, "neardup: --shingle: the index was built with 5, not 3\n"},
	} {
		args := append([]string{"index", "query", "--store", idx}, c.args...)
		code, _, errs = run(append(args, q)...)
		if code != ExitUsage || !strings.HasPrefix(errs, c.msg) || strings.Count(errs, "\n") != 2 {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errs, c.msg)
		}
	}
	if code, out, errs = run("index", "remove", "--store", idx, "x", "y", "z"); code != 0 || !strings.Contains(out, "removed 2 of 3") {
		t.Fatalf("remove: %d %q %q", code, out, errs)
	}
}

// The three runs through the command: z is kept.
func TestDedupThreeRunsCommand(t *testing.T) {
	dir := t.TempDir()
	var w1, w2 []string
	for i := 0; i < 40; i++ {
		w1 = append(w1, fmt.Sprintf("a%d", i))
		w2 = append(w2, fmt.Sprintf("b%d", i))
	}
	t1, t2 := strings.Join(w1, " "), strings.Join(w2, " ")
	in := map[string]string{"a.jsonl": `{"id":"x","text":"` + t1 + `"}`, "b.jsonl": `{"id":"x","text":"` + t2 + `"}`, "d.jsonl": `{"id":"z","text":"` + t1 + `"}`}
	for name, line := range in {
		os.WriteFile(filepath.Join(dir, name), []byte(line+"\n"), 0o644)
	}
	var out string
	for i, name := range []string{"a.jsonl", "b.jsonl", "d.jsonl"} {
		env, stdout, stderr := testEnv()
		args := []string{"dedup", "-q", "--store", filepath.Join(dir, "S"), "--out", filepath.Join(dir, fmt.Sprint("out", i)), filepath.Join(dir, name)}
		if code := Main(context.Background(), args, env); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		out = stdout.String()
	}
	if !strings.Contains(out, "read 1: kept 1, duplicates 0") {
		t.Fatalf("third run: %s", out)
	}
}

// TestDedupOutLockedFirst: a second dedup on an --out that another run
// holds fails at once, naming the directory and the holder, and leaves the
// first run's index in place (it used to remove OUT/index before locking).
func TestDedupOutLockedFirst(t *testing.T) {
	dir := t.TempDir()
	env, _, _ := testEnv()
	if err := runDedup(context.Background(), env, dedupDefaults([]string{sampleCorpus}, dir)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := store.LockDir(dir) // the "first run", still live
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	env, _, _ = testEnv()
	err = runDedup(context.Background(), env, dedupDefaults([]string{sampleCorpus}, dir))
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second run on a locked --out: %v; want ErrInUse naming %s", err, dir)
	}
	after, err := os.ReadDir(filepath.Join(dir, "index"))
	if err != nil || len(after) != len(before) {
		t.Fatalf("the locked run's index changed: %d entries before, %d after (%v)", len(before), len(after), err)
	}
}

// --keep none drops every member of every cluster: kept/ holds none of
// them, clusters.jsonl says kept "", and the counts add up.
func TestDedupKeepNone(t *testing.T) {
	dir := t.TempDir()
	env, stdout, errb := testEnv()
	if code := Main(context.Background(), []string{"dedup", sampleCorpus, "--out", dir, "--store", "memory", "--keep", "none", "--json", "-q"}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var sum struct{ Read, Kept, Duplicates, Clusters int }
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	members := map[string]bool{}
	for _, c := range readLines(t, filepath.Join(dir, "clusters.jsonl")) {
		if c["kept"] != "" {
			t.Errorf("cluster %v keeps %v", c["cluster"], c["kept"])
		}
		for _, m := range c["members"].([]any) {
			members[m.(string)] = true
		}
	}
	if sum.Clusters == 0 || len(members) != sum.Duplicates || sum.Read != sum.Kept+sum.Duplicates {
		t.Fatalf("summary %+v, %d members", sum, len(members))
	}
	r, err := corpus.Open([]string{filepath.Join(dir, "kept")}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for r.Next() {
		n++
		if members[r.Doc().ID] {
			t.Errorf("cluster member %q kept", r.Doc().ID)
		}
	}
	if n != sum.Kept {
		t.Errorf("kept/ holds %d documents, summary says %d", n, sum.Kept)
	}
	env, _, errb = testEnv()
	if code := Main(context.Background(), []string{"dedup", sampleCorpus, "--out", t.TempDir(), "--keep", "all"}, env); code != ExitUsage || !strings.Contains(errb.String(), "none") {
		t.Errorf("--keep all: exit %d, %s", code, errb)
	}
}

// The report of a --keep none run names each example cluster's first
// member as the reference ("first", every member dropped), never an empty
// kept document.
func TestDedupKeepNoneReport(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	env, _, errb := testEnv()
	if code := Main(context.Background(), []string{"dedup", sampleCorpus, "-o", filepath.Join(dir, "out"), "--store", "memory", "--keep", "none", "-q", "--report", page}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	if strings.Contains(h, "<code></code>") || !strings.Contains(h, "every member dropped") || !strings.Contains(h, "</code> vs first") || strings.Contains(h, "</code> vs kept") {
		t.Errorf("report of --keep none: empty kept %v, dropped tag %v, vs first %v, vs kept %v", strings.Contains(h, "<code></code>"),
			strings.Contains(h, "every member dropped"), strings.Contains(h, "</code> vs first"), strings.Contains(h, "</code> vs kept"))
	}
}
