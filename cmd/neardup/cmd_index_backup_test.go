package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
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
