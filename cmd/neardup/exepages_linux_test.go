package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExecutableSpans: the spans trimExecutable drops are the executable's
// read-only mappings without private pages (dropping a relocated page
// would lose its relocations), and a run of the trimming leaves the
// process working (the test goes on calling code that was dropped).
func TestExecutableSpans(t *testing.T) {
	spans, size := executableSpans()
	if len(spans) == 0 || size <= 0 {
		t.Fatalf("no executable mappings found (%d spans, %d bytes)", len(spans), size)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Readlink("/proc/self/exe")
	perms := map[uintptr]string{}
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[5] != exe {
			continue
		}
		lo, _, _ := strings.Cut(f[0], "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		perms[uintptr(a)] = f[1]
	}
	var sum uintptr
	for _, s := range spans {
		p, ok := perms[s.addr]
		if !ok || strings.Contains(p, "w") {
			t.Errorf("span %#x (%d bytes): permissions %q, want a read-only mapping of %s", s.addr, s.size, p, exe)
		}
		sum += s.size
	}
	if int64(sum) > size {
		t.Errorf("spans take %d bytes, more than the executable's %d", sum, size)
	}
	rss := func() string {
		b, _ := os.ReadFile("/proc/self/status")
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "RssFile:") {
				return strings.TrimSpace(strings.TrimPrefix(l, "RssFile:"))
			}
		}
		return "?"
	}
	before := rss()
	stop := trimExecutable(size) // a budget it takes more than a twentieth of
	time.Sleep(50 * time.Millisecond)
	after := rss()
	stop()
	if got := strings.Repeat("x", 3); got != "xxx" { // code runs after the drop
		t.Fatal(got)
	}
	t.Logf("RssFile %s before, %s after a drop", before, after)
	// Without a budget, or with a large one, nothing runs.
	trimExecutable(0)()
	trimExecutable(size * 20)()
}
