package feature

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestKernelsSwitch checks the documented switches of Kernels: the
// package's own flags agree with its answer, and GODEBUG=cpu.avx512f=off
// (read by golang.org/x/sys/cpu in a fresh process) leaves out the AVX-512
// kernels.
func TestKernelsSwitch(t *testing.T) {
	if os.Getenv("NEARDUP_KERNELS_CHILD") != "" {
		os.Stdout.WriteString("kernels=" + Kernels() + "\n")
		return
	}
	k := Kernels()
	switch {
	case !hasCLMUL && k != "go", hasCLMUL512 && k != "avx512", hasCLMUL && !hasCLMUL512 && k == "avx512":
		t.Fatalf("Kernels() = %q with hasCLMUL %v, hasCLMUL512 %v", k, hasCLMUL, hasCLMUL512)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKernelsSwitch$")
	cmd.Env = append(os.Environ(), "NEARDUP_KERNELS_CHILD=1", "GODEBUG=cpu.avx512f=off")
	out, err := cmd.Output()
	if errors.Is(err, syscall.ENOEXEC) {
		// The test binary runs under an emulator (.ci/run's arm64 tests
		// under qemu-user) that the kernel does not know of, so it cannot
		// start itself.
		t.Skipf("kernels %s; the test binary cannot start itself here: %v", k, err)
	}
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	_, got, ok := strings.Cut(string(out), "kernels=")
	got, _, _ = strings.Cut(got, "\n")
	if !ok || got == "avx512" {
		t.Fatalf("with GODEBUG=cpu.avx512f=off, Kernels() = %q (output %q)", got, out)
	}
	if k != "avx512" && got != k {
		t.Fatalf("GODEBUG=cpu.avx512f=off changed the kernels of a CPU without AVX-512: %q, then %q", k, got)
	}
	t.Logf("kernels %s; with GODEBUG=cpu.avx512f=off %s", k, got)
}
