package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// killChildEnv names the output directory when the test binary is
// re-executed as a dedup run to be killed.
const killChildEnv = "NEARDUP_TEST_DEDUP_KILL_OUT"

func init() {
	out := os.Getenv(killChildEnv)
	if out == "" {
		return
	}
	env, _, _ := testEnv()
	o := dedupDefaults([]string{sampleCorpus}, out)
	o.Memory = "64KiB"
	if err := runDedup(context.Background(), env, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// A dedup run killed (SIGKILL) at any point of any stage leaves nothing
// that spoils the next run on the same --out and --work: after 20 kills at
// increasing delays, a run to completion writes the same pairs, clusters
// and kept corpus as an undisturbed out-of-core run. (This is a rerun from
// the start, not a resumption: --resume is not implemented.)
func TestDedupKilledThenRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(out string, kill time.Duration) (killed bool) {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if kill > 0 {
			time.AfterFunc(kill, func() { cmd.Process.Signal(syscall.SIGKILL) })
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok && !ee.Exited() {
			return true
		}
		if err != nil {
			t.Fatalf("run: %v: %s", err, stderr.String())
		}
		return false
	}
	ref := filepath.Join(t.TempDir(), "ref")
	t0 := time.Now()
	run(ref, 0)
	full := time.Since(t0)
	out := filepath.Join(t.TempDir(), "out")
	const kills = 20
	killed := 0
	for i := range kills {
		// Delays spread over the first 3/4 of the reference run, the
		// start-up included (later runs can be faster: warm caches).
		if run(out, full*3/4*time.Duration(i+1)/kills) {
			killed++
		}
	}
	if killed < kills/3 {
		t.Fatalf("only %d of %d runs were killed before they finished (a run takes %v)", killed, kills, full)
	}
	run(out, 0)
	for _, f := range []string{"pairs.jsonl", "clusters.jsonl", "kept/docs.jsonl.gz"} {
		a, err := os.ReadFile(filepath.Join(ref, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s after %d kills differs from an undisturbed run (%v)", f, killed, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "work")); !os.IsNotExist(err) {
		t.Fatalf("work directory left after the final run: %v", err)
	}
	t.Logf("%d of %d runs killed; a run takes %v", killed, kills, full)
}
