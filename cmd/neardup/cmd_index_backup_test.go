package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/corpus/corpustest"
)

// TestIndexBackupRestore: a backup of an index at rest, restored, passes
// index check and answers queries as the original; a served index is
// refused to the CLI (the server holds it) and backed up through the
// server, while it serves.
func TestIndexBackupRestore(t *testing.T) {
	tmp := t.TempDir()
	idx := filepath.Join(tmp, "idx")
	if code, _, errs := runMainStdin(t, "", "index", "add", "-q", "--store", idx, sampleCorpus); code != 0 {
		t.Fatalf("index add: exit %d, %s", code, errs)
	}
	bk := filepath.Join(tmp, "bk")
	if code, out, errs := runMainStdin(t, "", "index", "backup", "--store", idx, bk); code != 0 || !strings.Contains(out, "backed up to") {
		t.Fatalf("index backup: exit %d, %s %s", code, out, errs)
	}
	if code, _, errs := runMainStdin(t, "", "index", "backup", "--store", idx, bk); code != ExitUsage || !strings.Contains(errs, "already exists") {
		t.Fatalf("backup into an existing directory: exit %d, %s", code, errs)
	}
	rs := filepath.Join(tmp, "restored")
	if code, _, errs := runMainStdin(t, "", "index", "restore", "--store", rs, bk); code != 0 {
		t.Fatalf("index restore: exit %d, %s", code, errs)
	}
	if code, out, errs := runMainStdin(t, "", "index", "check", "--store", rs); code != 0 {
		t.Fatalf("index check of the restored index: exit %d, %s %s", code, out, errs)
	}
	_, want, _ := runMainStdin(t, "", "index", "query", "--store", idx, sampleCorpus)
	_, got, _ := runMainStdin(t, "", "index", "query", "--store", rs, sampleCorpus)
	if got != want || strings.Count(got, "\n") != 474 {
		t.Fatalf("restored index answers differently (%d lines, original %d)", strings.Count(got, "\n"), strings.Count(want, "\n"))
	}
	if code, _, errs := runMainStdin(t, "", "index", "restore", "--store", rs, bk); code == 0 || !strings.Contains(errs, "not empty") {
		t.Fatalf("restore into a non-empty directory: exit %d, %s", code, errs)
	}

	// Served: through the server only.
	t.Setenv("NEARDUP_TOKEN", "tok")
	url, stop := startServe(t, "--store", idx, "--token", "tok")
	defer stop()
	code, _, errs := runMainStdin(t, "", "index", "backup", "--store", idx, filepath.Join(tmp, "held"))
	if code == 0 || !strings.Contains(errs, "--server") {
		t.Fatalf("backup of a served store: exit %d, %s", code, errs)
	}
	live := filepath.Join(tmp, "live")
	if code, _, errs := runMainStdin(t, "", "index", "backup", "--server", url, live); code != 0 {
		t.Fatalf("backup through the server: exit %d, %s", code, errs)
	}
	if code, _, errs := runMainStdin(t, "", "index", "backup", "--server", url, "relative"); code != ExitUsage {
		t.Fatalf("relative backup path: exit %d, %s", code, errs)
	}
	rs2 := filepath.Join(tmp, "restored2")
	if code, _, errs := runMainStdin(t, "", "index", "restore", "--store", rs2, live); code != 0 {
		t.Fatalf("restore of the live backup: exit %d, %s", code, errs)
	}
	if code, _, errs := runMainStdin(t, "", "index", "check", "--store", rs2); code != 0 {
		t.Fatalf("check of the live backup: exit %d, %s", code, errs)
	}
	if _, got, _ := runMainStdin(t, "", "index", "query", "--store", rs2, sampleCorpus); got != want {
		t.Fatal("the live backup answers differently")
	}
}

// collapse and serve take --lsh bing (the book's 6 × 16 bits, 4 of 6);
// a scheme the table cannot hold, or that needs more samples than the
// index's sketches have, is a usage error.
func TestCollapseLSHBing(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	if code, _, errs := runMainStdin(t, "", "index", "add", "-q", "--store", idx, sampleCorpus); code != 0 {
		t.Fatalf("index add: exit %d, %s", code, errs)
	}
	ids := licenceIDs(t)
	code, out, errs := runMainStdin(t, strings.Join(ids, "\n")+"\n", "collapse", "--json", "--store", idx, "--lsh", "bing")
	if code != 0 {
		t.Fatalf("collapse --lsh bing: exit %d, %s", code, errs)
	}
	var res struct {
		Kept      []string
		Collapsed []struct{ ID, Into string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Collapsed) == 0 || len(res.Kept)+len(res.Collapsed) != len(ids) {
		t.Fatalf("collapse --lsh bing: %d kept, %d collapsed, %v", len(res.Kept), len(res.Collapsed), err)
	}
	// Pairs are verified, these long documents by the sketch estimate
	// within the index's slack (1.645 standard errors, about 0.06 at 128
	// samples): none far below the threshold.
	jac := licenceJaccard(t)
	for _, c := range res.Collapsed {
		if jac[[2]string{c.ID, c.Into}] < 0.7 {
			t.Errorf("collapsed %s into %s at J = %v", c.ID, c.Into, jac[[2]string{c.ID, c.Into}])
		}
	}
	for _, c := range []struct{ lsh, want string }{{"5,12,1", "at most 8 supershingles"}, {"60,6,4", "needs 360 samples"}} {
		code, _, errs := runMainStdin(t, "a\n", "collapse", "--store", idx, "--lsh", c.lsh)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("collapse --lsh %s: exit %d, %q", c.lsh, code, errs)
		}
	}
	code, _, errs = runMainStdin(t, "", "serve", "--store", idx, "--lsh", "60,6,4", "--addr", "127.0.0.1:0")
	if code != ExitUsage || !strings.Contains(errs, "needs 360 samples") {
		t.Errorf("serve --lsh 60,6,4: exit %d, %q", code, errs)
	}
	url, stop := startServe(t, "--store", idx, "--lsh", "bing")
	defer stop()
	resp, err := http.Get(url + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Collapse string }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || !strings.Contains(st.Collapse, "r=5 b=6 m=4 keybits=16") {
		t.Fatalf("served collapse scheme %q %v, want Bing's", st.Collapse, err)
	}
}

func TestRunParamsBeside(t *testing.T) {
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &bytes.Buffer{}}
	plot := filepath.Join(t.TempDir(), "curves.svg")
	opts := paramsOptions{threshold: 0.8, fpWeight: 0.02, fnWeight: 0.98, maxSamples: 128, maxKeys: 64, keyBits: 64, sampleBits: 64, lsh: "bing", plot: plot}
	if err := runParams(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "beside it, --lsh bing:\nthreshold 0.8: k=30 samples, r=5 per supershingle, b=6 supershingles, at least m=4") {
		t.Fatalf("output:\n%s", s)
	}
	out.Reset()
	opts.json, opts.plot = true, ""
	if err := runParams(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	var res paramsResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Beside == nil || res.Beside.Params.R != 5 || res.Beside.Keys != 15 || res.Beside.Bytes != 12 {
		t.Fatalf("json: %+v %v", res, err)
	}
	opts.preset = "bing"
	if err := runParams(context.Background(), env, opts); err == nil {
		t.Fatal("--lsh with --preset accepted")
	}
}

// TestIndexBackupUnderLoad is the issue's "a backup taken under load
// restores to an index that answers the same queries", as a user runs
// it: two 'index add --server' clients add the licence corpus in parts
// through a served index while 'index backup --server' runs; 'index
// restore' makes an index of the backup, 'index check' passes on it, it
// holds every part acknowledged before the backup was asked for, and
// 'index query' answers the whole corpus exactly as an index built with
// 'index add --features' from the documents the backup holds.
func TestIndexBackupUnderLoad(t *testing.T) {
	tmp := t.TempDir()
	docs := corpustest.Docs(t, licensesDir)
	const clients, parts = 2, 6 // parts per client
	partFile := func(c, p int) string { return filepath.Join(tmp, fmt.Sprintf("part-%d-%d.jsonl", c, p)) }
	byPart := map[string][]corpustest.Doc{}
	for i, d := range docs {
		f := partFile(i%clients, i/clients*parts/((len(docs)+clients-1)/clients))
		byPart[f] = append(byPart[f], d)
	}
	for f, ds := range byPart {
		writeJSONL(t, f, ds)
	}

	t.Setenv("NEARDUP_TOKEN", "tok")
	idx := filepath.Join(tmp, "idx")
	url, stop := startServe(t, "--store", idx, "--token", "tok")
	defer stop()
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	firstParts := make(chan struct{}, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range parts {
				if code, _, errs := runMainStdin(t, "", "index", "add", "-q", "--server", url, partFile(c, p)); code != 0 {
					t.Errorf("index add --server part %d-%d: exit %d, %s", c, p, code, errs)
					return
				}
				mu.Lock()
				acked[partFile(c, p)] = true
				mu.Unlock()
				if p == 0 {
					firstParts <- struct{}{}
				}
			}
		}()
	}
	for range clients {
		<-firstParts
	}
	mu.Lock()
	before := maps.Clone(acked)
	mu.Unlock()
	bk := filepath.Join(tmp, "bk")
	code, out, errs := runMainStdin(t, "", "index", "backup", "--server", url, bk)
	mu.Lock()
	after := len(acked)
	mu.Unlock()
	wg.Wait()
	if code != 0 || !strings.Contains(out, "backed up to") {
		t.Fatalf("index backup --server under load: exit %d, %s %s", code, out, errs)
	}

	rs := filepath.Join(tmp, "restored")
	if code, _, errs := runMainStdin(t, "", "index", "restore", "--store", rs, bk); code != 0 {
		t.Fatalf("index restore: exit %d, %s", code, errs)
	}
	if code, out, errs := runMainStdin(t, "", "index", "check", "--store", rs); code != 0 {
		t.Fatalf("index check of the backup taken under load: exit %d, %s %s", code, out, errs)
	}
	code, got, errs := runMainStdin(t, "", "index", "query", "--store", rs, sampleCorpus)
	if code != 0 {
		t.Fatalf("index query of the restored index: exit %d, %s", code, errs)
	}
	// The documents it holds are those that find themselves.
	held := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		var r struct {
			ID      string
			Matches []struct{ ID string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		for _, m := range r.Matches {
			if m.ID == r.ID {
				held[r.ID] = true
			}
		}
	}
	for f := range before {
		for _, d := range byPart[f] {
			if !held[d.ID] {
				t.Fatalf("%s was acknowledged before the backup and is not in it", d.ID)
			}
		}
	}
	var heldDocs []corpustest.Doc
	for _, d := range docs {
		if held[d.ID] {
			heldDocs = append(heldDocs, d)
		}
	}
	t.Logf("backup under load holds %d of %d documents (%d parts acknowledged before it, %d when it returned, of %d)",
		len(heldDocs), len(docs), len(before), after, clients*parts)
	heldFile := filepath.Join(tmp, "held.jsonl")
	writeJSONL(t, heldFile, heldDocs)
	// A served index keeps every document's feature set (serve's
	// default); index add keeps them with --features.
	fresh := filepath.Join(tmp, "fresh")
	if code, _, errs := runMainStdin(t, "", "index", "add", "-q", "--features", "--store", fresh, heldFile); code != 0 {
		t.Fatalf("index add of the held documents: exit %d, %s", code, errs)
	}
	_, want, _ := runMainStdin(t, "", "index", "query", "--store", fresh, sampleCorpus)
	if got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("the restored backup answers the corpus differently from an index of the %d documents it holds:\n%s\nwant\n%s", len(heldDocs), g[i], w[i])
			}
		}
		t.Fatalf("the restored backup answers %d lines, an index of the %d documents it holds %d", len(g), len(heldDocs), len(w))
	}
}

func writeJSONL(t *testing.T, path string, docs []corpustest.Doc) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
