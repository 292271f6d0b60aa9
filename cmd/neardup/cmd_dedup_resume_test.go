package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mainArgsEnv holds, as JSON, the arguments of a neardup command that the
// re-executed test binary runs instead of its tests (the real command
// line, flags parsed by cobra).
const mainArgsEnv = "NEARDUP_TEST_MAIN_ARGS"

func init() {
	a := os.Getenv(mainArgsEnv)
	if a == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(a), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(run(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
}

// runNeardupProcess runs neardup with args in a new process of the test binary,
// with extra environment variables; it reports whether SIGKILL ended it.
func runNeardupProcess(t *testing.T, env []string, args ...string) (killed bool, stderr string, err error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(args)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), mainArgsEnv+"="+string(a)), env...)
	var eb bytes.Buffer
	cmd.Stderr = &eb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && !ee.Exited() {
		return true, eb.String(), nil
	}
	return false, eb.String(), err
}

// runAfter runs neardup with args in a new process of the test binary
// and kills it (SIGKILL) after delay unless it has ended.
func runAfter(t *testing.T, delay time.Duration, args ...string) (killed bool, stderr string, err error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(args)
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(a))
	var eb bytes.Buffer
	cmd.Stderr = &eb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tm := time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
	err = cmd.Wait()
	tm.Stop()
	if ee, ok := err.(*exec.ExitError); ok && !ee.Exited() {
		return true, eb.String(), nil
	}
	return false, eb.String(), err
}

// splitCorpus writes the sample corpus as n JSONL files, plus a broken
// line in one and, in a later one, a record repeating the first id: a
// corpus of several inputs with rejected records of both kinds.
func splitCorpus(t *testing.T, dir string, n int) {
	t.Helper()
	f, err := os.Open(sampleCorpus)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	per := (len(lines) + n - 1) / n
	for i := range n {
		part := slices.Clone(lines[min(i*per, len(lines)):min((i+1)*per, len(lines))])
		switch i {
		case 2:
			part = append(part, `{"id": broken`)
		case 4:
			part = append(part, lines[0])
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part%02d.jsonl", i)), []byte(strings.Join(part, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sameOutputs fails unless every output file of got equals want's byte
// for byte; summary.json is compared without its times, stages,
// resumption note and out-of-core note.
func sameOutputs(t *testing.T, want, got, what string) {
	t.Helper()
	err := filepath.WalkDir(want, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		if rel == ".neardup.lock" {
			return nil // holds the pid of the process that locked --out
		}
		if d.IsDir() {
			if rel == "index" || rel == "work" {
				return filepath.SkipDir // the Pebble store is not byte-deterministic
			}
			return nil
		}
		a, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil {
			return err
		}
		if rel == "summary.json" {
			a, b = stableSummary(t, a), stableSummary(t, b)
		}
		if !bytes.Equal(a, b) {
			return fmt.Errorf("%s differs:\n%s\n%s", rel, a, b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func stableSummary(t *testing.T, b []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "seconds")
	delete(m, "stages")
	delete(m, "resumed")
	delete(m, "external") // a merge works out of core, a run may not
	delete(m, "spilled_bytes")
	out, _ := json.Marshal(m)
	return out
}

// A dedup run killed (SIGKILL, by the test-only hook of
// cmd_dedup_stages.go) at events spread over every stage — read+sketch
// (between and at input ends), candidate pairs, verification,
// clustering, writing the outputs — and rerun with --resume writes every
// output file of an uninterrupted run, byte for byte; a third of the
// resumed runs are killed again and resumed once more. The resumed runs
// continue from every stage, within stage 1 from an input end.
func TestDedupResumeAfterKills(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	splitCorpus(t, in, 6)
	args := func(out string, more ...string) []string {
		return append([]string{"dedup", in, "--out", out, "--memory", "64KiB", "-q"}, more...)
	}
	ref := filepath.Join(dir, "ref")
	evlog := filepath.Join(dir, "events.log")
	if _, msg, err := runNeardupProcess(t, []string{"NEARDUP_TEST_EVENT_LOG=" + evlog}, args(ref)...); err != nil {
		t.Fatalf("reference run: %v: %s", err, msg)
	}
	// The reference run's events, by stage.
	b, err := os.ReadFile(evlog)
	if err != nil {
		t.Fatal(err)
	}
	byStage := map[string][]int{}
	var stages []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		n, _ := strconv.Atoi(f[0])
		if f[1] == "store" {
			continue // in the background: its events move
		}
		if byStage[f[1]] == nil {
			stages = append(stages, f[1])
		}
		byStage[f[1]] = append(byStage[f[1]], n)
	}
	for _, s := range []string{"sketch", "index", "verify", "cluster", "write"} {
		if len(byStage[s]) == 0 {
			t.Fatalf("no events of stage %s in the reference run: %v", s, byStage)
		}
	}
	// Kill points: up to 6 per stage, spread over its events.
	var points []int
	for _, s := range stages {
		ev := byStage[s]
		k := min(len(ev), 6)
		for i := range k {
			points = append(points, ev[i*len(ev)/k])
		}
	}
	if len(points) < 20 {
		t.Fatalf("only %d kill points: %v", len(points), byStage)
	}
	rnd := rand.New(rand.NewPCG(15, 1))
	resumedFrom := map[string]int{}
	t0 := time.Now()
	for i, n := range points {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		killed, msg, err := runNeardupProcess(t, []string{"NEARDUP_TEST_KILL_AFTER=" + strconv.Itoa(n)}, args(out)...)
		if err != nil || !killed {
			t.Fatalf("kill at event %d: killed %v, %v: %s", n, killed, err, msg)
		}
		if i%3 == 1 { // killed again while resuming
			m := 1 + rnd.IntN(max(1, n))
			if _, msg, err := runNeardupProcess(t, []string{"NEARDUP_TEST_KILL_AFTER=" + strconv.Itoa(m)}, args(out, "--resume")...); err != nil {
				t.Fatalf("kill at event %d, then %d of the resumed run: %v: %s", n, m, err, msg)
			}
		}
		if _, msg, err := runNeardupProcess(t, nil, args(out, "--resume")...); err != nil {
			t.Fatalf("resume after a kill at event %d: %v: %s", n, err, msg)
		}
		sameOutputs(t, ref, out, fmt.Sprintf("killed at event %d and resumed", n))
		var sum struct{ Resumed string }
		if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err == nil {
			json.Unmarshal(b, &sum)
		}
		resumedFrom[sum.Resumed]++
		if _, err := os.Stat(filepath.Join(out, "work")); !os.IsNotExist(err) {
			t.Fatalf("work directory left after the resumed run: %v", err)
		}
		os.RemoveAll(out)
	}
	for _, s := range []string{"sketch", "index", "verify", "cluster"} {
		if resumedFrom[s] == 0 {
			t.Errorf("no run resumed from stage %s: %v", s, resumedFrom)
		}
	}
	// Kills at times spread over a run land anywhere, a file half
	// written included.
	t1 := time.Now()
	if _, msg, err := runNeardupProcess(t, nil, args(filepath.Join(dir, "timed"))...); err != nil {
		t.Fatalf("timed run: %v: %s", err, msg)
	}
	full := time.Since(t1)
	for i := range 4 {
		out := filepath.Join(dir, fmt.Sprintf("timed%d", i))
		delay := full * time.Duration(2*i+1) / 8
		killed, msg, err := runAfter(t, delay, args(out)...)
		if err != nil {
			t.Fatalf("run killed after %v: %v: %s", delay, err, msg)
		}
		if _, msg, err := runNeardupProcess(t, nil, args(out, "--resume")...); err != nil {
			t.Fatalf("resume after a kill at %v (killed %v): %v: %s", delay, killed, err, msg)
		}
		sameOutputs(t, ref, out, fmt.Sprintf("killed after %v and resumed", delay))
	}
	t.Logf("%d kill points %v; resumed from %v; %v", len(points), points, resumedFrom, time.Since(t0).Round(time.Millisecond))
}

// A resumption refuses, in one line and with a non-zero exit, inputs or
// options that changed since the run it would continue, and standard
// input; --memory, --workers and the like may change.
func TestDedupResumeRefusesChanges(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	splitCorpus(t, in, 3)
	out := filepath.Join(dir, "out")
	env, _, _ := testEnv()
	o := dedupDefaults([]string{in}, out)
	o.Memory, o.KeepWork = "64KiB", true // the stage files stay
	if err := runDedup(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	// Unchanged but for --memory and --workers, it resumes after the
	// last saved stage: only clustering and the outputs run again.
	r := o
	r.Resume, r.Memory, r.Workers = true, "1MiB", 1
	if err := runDedup(context.Background(), env, r); err != nil {
		t.Fatal(err)
	}
	var sum struct{ Resumed string }
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil || sum.Resumed != "cluster" {
		t.Fatalf("resumed from %q (%v), want cluster", sum.Resumed, err)
	}
	for _, c := range []struct {
		name string
		edit func(o *dedupOptions)
		want string
	}{
		{"threshold", func(o *dedupOptions) { o.Threshold = 0.9 }, `Threshold changed (was "0.8", now "0.9")`},
		{"shingle", func(o *dedupOptions) { o.Feature.K = 4 }, `Feature.K changed (was "5", now "4")`},
		{"input", func(o *dedupOptions) {
			p := filepath.Join(in, "part01.jsonl")
			if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, "input " + filepath.Join(in, "part01.jsonl") + " changed (modified"},
		{"stdin", func(o *dedupOptions) { o.Inputs = []string{"-"} }, "standard input cannot be resumed"},
	} {
		r := o
		r.Resume, r.KeepWork, r.Memory, r.Workers = true, false, "1MiB", 1
		c.edit(&r)
		err := runDedup(context.Background(), env, r)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want a one-line error with %q", c.name, err, c.want)
		}
	}
}

// Three shards of a run, separate processes at the same time (one of
// them killed at its second input end and resumed), joined by dedup
// merge in a fourth, write the output of one process reading everything,
// byte for byte. A merge refuses a missing or repeated shard, an
// unfinished one, and shards with different flags, in one line.
func TestDedupShardsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	splitCorpus(t, in, 7)
	ref := filepath.Join(dir, "ref")
	if _, msg, err := runNeardupProcess(t, nil, "dedup", in, "--out", ref, "-q"); err != nil {
		t.Fatalf("single run: %v: %s", err, msg)
	}
	work := func(i int) string { return filepath.Join(dir, fmt.Sprintf("w%d", i)) }
	key := filepath.Join(dir, "shards.key") // made by the first shard to start
	shard := func(i int, env []string, more ...string) (bool, string, error) {
		return runNeardupProcess(t, env, append([]string{"dedup", in, "--shard", fmt.Sprintf("%d/3", i), "--work", work(i), "-q", "--key-file", key}, more...)...)
	}
	errs := make(chan error, 3)
	for i := 1; i <= 3; i++ {
		go func() {
			var env []string
			if i == 2 {
				// Shard 2 reads inputs 1 and 4: killed after its first
				// input end (events: begin, progress ×3, checkpoint).
				env = []string{"NEARDUP_TEST_KILL_AFTER=6"}
			}
			killed, msg, err := shard(i, env)
			if err == nil && killed != (i == 2) {
				err = fmt.Errorf("killed %v", killed)
			}
			if err == nil && killed {
				_, msg, err = shard(i, nil, "--resume")
			}
			if err != nil {
				err = fmt.Errorf("shard %d/3: %v: %s", i, err, msg)
			}
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "merged")
	if _, msg, err := runNeardupProcess(t, nil, "dedup", "merge", "--out", out, "-q", work(3), work(1), work(2)); err != nil {
		t.Fatalf("merge: %v: %s", err, msg)
	}
	sameOutputs(t, ref, out, "3 shards merged")
	// A merge killed in its candidate stage, resumed.
	out2 := filepath.Join(dir, "merged2")
	if killed, msg, err := runNeardupProcess(t, []string{"NEARDUP_TEST_KILL_AFTER=4"}, "dedup", "merge", "--out", out2, "-q", work(1), work(2), work(3)); err != nil || !killed {
		t.Fatalf("merge killed: %v, %v: %s", killed, err, msg)
	}
	if _, msg, err := runNeardupProcess(t, nil, "dedup", "merge", "--resume", "--out", out2, "-q", work(1), work(2), work(3)); err != nil {
		t.Fatalf("merge resumed: %v: %s", err, msg)
	}
	sameOutputs(t, ref, out2, "3 shards merged, killed and resumed")

	// Refusals.
	other := filepath.Join(dir, "w2-other")
	if _, msg, err := runNeardupProcess(t, nil, "dedup", in, "--shard", "2/3", "--work", other, "-q", "--threshold", "0.9", "--key-file", key); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	unfinished := filepath.Join(dir, "w2-killed")
	if killed, msg, err := runNeardupProcess(t, []string{"NEARDUP_TEST_KILL_AFTER=6"}, "dedup", in, "--shard", "2/3", "--work", unfinished, "-q", "--key-file", key); err != nil || !killed {
		t.Fatalf("killed %v, %v: %s", killed, err, msg)
	}
	otherKey := filepath.Join(dir, "w2-other-key")
	if _, msg, err := runNeardupProcess(t, nil, "dedup", in, "--shard", "2/3", "--work", otherKey, "-q", "--key-file", filepath.Join(dir, "other.key")); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	if _, msg, err := runNeardupProcess(t, nil, "dedup", in, "--shard", "2/3", "--work", filepath.Join(dir, "w2-no-key"), "-q"); err == nil || !strings.Contains(msg, "--shard needs --key-file") {
		t.Errorf("a shard without --key-file: %v: %s", err, msg)
	}
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{[]string{work(1), work(3)}, "shard 2/3 missing (2 of 3 given)"},
		{[]string{work(1), work(1), work(3)}, "shard 1/3 given twice"},
		{[]string{work(1), other, work(3)}, `Threshold is "0.8" in ` + work(1) + `, "0.9" in ` + other},
		{[]string{work(1), unfinished, work(3)}, "shard 2/3 in " + unfinished + " has not finished stage 1"},
		{[]string{work(1), otherKey, work(3)}, "fingerprinted documents under different identity keys"},
		{[]string{work(1), in, work(3)}, "holds no shard's stage files"},
	} {
		env, _, stderr := testEnv()
		code := Main(context.Background(), append([]string{"dedup", "merge", "--out", filepath.Join(dir, "refused"), "-q"}, c.dirs...), env)
		msg := strings.TrimSpace(stderr.String())
		if code == 0 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("merge %v: exit %d, %q; want a one-line error with %q", c.dirs, code, msg, c.want)
		}
	}
}
