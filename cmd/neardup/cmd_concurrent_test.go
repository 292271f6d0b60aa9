package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// TestDedupSameOutTogether starts two dedup runs on one --out at the same
// time, as separate processes: exactly one runs; the other exits 1 at
// once, before the first is done, with one line saying that the directory
// is in use by another neardup process and its pid; no panic.
func TestDedupSameOutTogether(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(sampleCorpus)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, sub := range []string{"a", "b", "c"} { // a longer run: three copies, distinct ids
		p := filepath.Join(dir, "in", sub, "docs.jsonl.gz")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, src, 0o644)
		inputs = append(inputs, filepath.Dir(p))
	}
	out := filepath.Join(dir, "out")
	type run struct {
		cmd    *exec.Cmd
		stderr bytes.Buffer
		err    error
		took   time.Duration
		done   time.Time
	}
	runs := make([]*run, 2)
	for i := range runs {
		r := &run{cmd: neardupCmd(t, append([]string{"dedup", "-q", "--max-rejected", "1", "--out", out}, inputs...)...)}
		r.cmd.Stderr = &r.stderr
		runs[i] = r
	}
	start := time.Now()
	for _, r := range runs {
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	ch := make(chan *run, 2)
	for _, r := range runs {
		go func() {
			r.err = r.cmd.Wait()
			r.done = time.Now()
			r.took = r.done.Sub(start)
			ch <- r
		}()
	}
	<-ch
	<-ch
	var ok, failed []*run
	for _, r := range runs {
		t.Logf("pid %d: %v after %v: %s", r.cmd.Process.Pid, r.err, r.took.Round(time.Millisecond), strings.TrimSpace(r.stderr.String()))
		if r.err == nil {
			ok = append(ok, r)
		} else {
			failed = append(failed, r)
		}
	}
	if len(ok) != 1 || len(failed) != 1 {
		t.Fatalf("%d runs succeeded, %d failed; want one of each", len(ok), len(failed))
	}
	f, w := failed[0], ok[0]
	msg := strings.TrimSpace(f.stderr.String())
	want := fmt.Sprintf("is in use by another neardup process (pid %d)", w.cmd.Process.Pid)
	if f.cmd.ProcessState.ExitCode() != ExitFailure || strings.Contains(msg, "\n") || !strings.Contains(msg, want) || strings.Contains(msg, "panic") {
		t.Errorf("the second run: exit %d, %q; want one line with %q", f.cmd.ProcessState.ExitCode(), msg, want)
	}
	if !f.done.Before(w.done) {
		t.Errorf("the second run ended after the first (%v, %v): it did not fail at once", f.took, w.took)
	}
	var sum struct{ Read, Kept int64 }
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || sum.Read != 3*474 {
		t.Errorf("the run's summary: %s (%v)", b, err)
	}
}

// maxRSS runs neardup with args as a subprocess and returns its peak
// resident set size in bytes and its standard error.
func maxRSS(t *testing.T, args ...string) (int64, string) {
	t.Helper()
	cmd := neardupCmd(t, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v: %s", args, err, stderr.String())
	}
	rss, ok := peakRSS(cmd.ProcessState)
	if !ok {
		t.Skip("no peak RSS from the OS here")
	}
	return rss, stderr.String()
}

type pqDoc struct {
	ID   string `parquet:"id"`
	Text string `parquet:"text"`
}

// TestDedupHostileParquetMemory runs dedup on a 112-byte Parquet file
// whose footer claims 2 GiB, and on a file with a corrupt page, each in a
// subprocess: the peak RSS stays under 100 MiB above a run on a small
// JSONL file; the crafted file is one rejected record; the corrupt page's
// rows are rejected (counted) and the other row groups read.
func TestDedupHostileParquetMemory(t *testing.T) {
	dir := t.TempDir()
	base := firstDocs(t, dir, 20)
	baseline, _ := maxRSS(t, "dedup", "-q", "--out", filepath.Join(dir, "o0"), base)

	crafted := append([]byte("PAR1"), make([]byte, 100)...)
	crafted = append(crafted, 0xff, 0xff, 0xff, 0x7f) // footer length 2^31-1
	crafted = append(crafted, "PAR1"...)
	cp := filepath.Join(dir, "crafted.parquet")
	os.WriteFile(cp, crafted, 0o644)

	var docs []pqDoc
	for i := range 300 {
		docs = append(docs, pqDoc{ID: fmt.Sprintf("doc-%03d", i), Text: fmt.Sprintf("document %d says %s", i, strings.Repeat(fmt.Sprintf("w%d ", i), 20))})
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqDoc](&buf, parquet.PageBufferSize(256))
	for i := 0; i < len(docs); i += 100 { // three row groups
		if _, err := w.Write(docs[i : i+100]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	bad := append([]byte(nil), good...)
	// A flipped byte in the text of row 150, in a data page of the middle
	// row group (its first occurrence: page indexes come after the data).
	at := bytes.Index(good, []byte("document 150 says"))
	if at < 0 {
		t.Fatal("row 150 not found in the file")
	}
	bad[at+3] ^= 0x55
	bp := filepath.Join(dir, "corrupt.parquet")
	os.WriteFile(bp, bad, 0o644)

	for _, c := range []struct {
		name string
		path string
	}{{"crafted footer", cp}, {"corrupt page", bp}} {
		out := filepath.Join(dir, "out-"+filepath.Base(c.path))
		rss, errs := maxRSS(t, "dedup", "-q", "--max-rejected", "1", "--out", out, c.path)
		t.Logf("%s: peak RSS %d MiB, baseline %d MiB", c.name, rss>>20, baseline>>20)
		if rss-baseline > 100<<20 {
			t.Errorf("%s: peak RSS %d MiB, %d MiB above the baseline", c.name, rss>>20, (rss-baseline)>>20)
		}
		var sum struct{ Read, Kept, Duplicates, Rejected int64 }
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		rej := readLines(t, filepath.Join(out, "rejected.jsonl"))
		var counted int64
		for _, r := range rej {
			counted += int64(r["count"].(float64))
		}
		t.Logf("%s: %+v; rejected.jsonl %v; %s", c.name, sum, rej, strings.TrimSpace(errs))
		if counted != sum.Rejected || sum.Read != sum.Kept+sum.Duplicates+sum.Rejected {
			t.Errorf("%s: rejected.jsonl counts %d, summary %+v", c.name, counted, sum)
		}
		switch c.path {
		case cp:
			if sum.Read != 1 || sum.Rejected != 1 {
				t.Errorf("crafted footer: %+v, want one rejected record", sum)
			}
		case bp:
			if sum.Read != 300 || sum.Rejected == 0 || sum.Rejected > 100 || sum.Kept+sum.Duplicates < 200 {
				t.Errorf("corrupt page: %+v, want 300 read, the rows of one bad page on rejected, the other groups read", sum)
			}
		}
	}
}

// TestSIGTERMHonoured sends SIGTERM to dedup and index add while they
// work (ids from the place of each record: the copies are distinct): each stops within a second, exit 1, one line; the store it leaves
// passes index check.
func TestSIGTERMHonoured(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(sampleCorpus)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in")
	// Enough copies that neither command can finish in the 0.7 s before
	// the signal, on an idle machine too (index add writes sketches only
	// through one bulk: a few thousand documents a second).
	for i := range 60 {
		p := filepath.Join(in, fmt.Sprintf("c%02d", i), "docs.jsonl.gz")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, src, 0o644)
	}
	for _, c := range []struct {
		name  string
		args  []string
		store string
	}{
		{"dedup", []string{"dedup", "-q", "--id-field", "none", "--out", filepath.Join(dir, "out"), in}, filepath.Join(dir, "out", "index")},
		{"index add", []string{"index", "add", "-q", "--id-field", "none", "--store", filepath.Join(dir, "idx"), in}, filepath.Join(dir, "idx")},
	} {
		cmd := neardupCmd(t, c.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // past the store's creation, into the documents
		sent := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		took := time.Since(sent)
		msg := strings.TrimSpace(stderr.String())
		t.Logf("%s: %v after %v: %s", c.name, err, took.Round(time.Millisecond), msg)
		if err == nil {
			t.Errorf("%s: finished before SIGTERM (exit 0)", c.name)
			continue
		}
		if took > time.Second+500*time.Millisecond || cmd.ProcessState.ExitCode() != ExitFailure || strings.Contains(msg, "\n") || !strings.Contains(msg, "interrupted") {
			t.Errorf("%s: exit %d after %v: %q", c.name, cmd.ProcessState.ExitCode(), took, msg)
		}
		if _, err := os.Stat(c.store); err == nil {
			if code, out, errs := runMain("index", "check", "--store", c.store); code != 0 && !strings.Contains(errs, "holds no index") {
				t.Errorf("%s: index check after SIGTERM: exit %d: %s %s", c.name, code, out, errs)
			}
		}
	}
}
