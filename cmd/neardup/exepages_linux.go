package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// trimExecutable keeps the executable's own pages out of the resident set
// while a batch command (dedup, dedup merge, index add) runs under a small
// budget, and returns the function that stops it.
//
// The kernel maps the executable's text and read-only data (about 40 MB:
// every command links every library) in large folios, up to 2 MiB at a
// time, and a fault maps the whole folio, so within seconds nearly all of
// it is resident: at --memory 96MiB that is 40 MiB of the budget for code
// that mostly never runs again. Those pages are clean copies of the file.
// Every trimPeriod, trimExecutable asks the kernel to reclaim them
// (MADV_PAGEOUT; unmapping them with MADV_DONTNEED is not enough, the next
// fault maps the whole folio again), and PR_SET_THP_DISABLE keeps them
// from coming back as 2 MiB mappings, so that only the code in use stays
// resident (300k × 200 words at --memory 96MiB: 10-17 MiB instead of
// 43 MiB). The kernel leaves the pages another process maps too. It runs
// only when the executable's mappings would take more than a twentieth of
// budget, and touches only the executable's mappings that are not
// writable and hold no private page (the relocated ones).
func trimExecutable(budget int64) (stop func()) {
	if budget <= 0 {
		return func() {}
	}
	spans, size := executableSpans()
	if len(spans) == 0 || size*20 <= budget {
		return func() {}
	}
	if err := unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0); err != nil {
		return func() {}
	}
	// The pages of an executable just built may still be dirty in the page
	// cache, and the kernel reclaims none of them until they are written
	// back (up to 30 s later): write them back now.
	if f, err := os.Open("/proc/self/exe"); err == nil {
		_ = f.Sync() // an error only leaves them resident longer
		f.Close()
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(trimPeriod)
		defer t.Stop()
		for {
			for _, s := range spans {
				// The spans are the executable's own mappings, mapped as long
				// as the process runs; an error only leaves the pages resident.
				_, _, _ = unix.Syscall(unix.SYS_MADVISE, s.addr, s.size, unix.MADV_PAGEOUT)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		_ = unix.Prctl(unix.PR_SET_THP_DISABLE, 0, 0, 0, 0)
	}
}

// trimPeriod is how often trimExecutable drops the executable's pages.
const trimPeriod = 500 * time.Millisecond

type exeSpan struct {
	addr, size uintptr
}

// executableSpans returns the mappings of the executable's file that
// trimExecutable may drop (not writable, no private page: Anonymous 0 in
// /proc/self/smaps) and the size of all its mappings.
func executableSpans() (spans []exeSpan, size int64) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, 0
	}
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, 0
	}
	last := false // the mapping being read is spans' last, and may be dropped
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && len(f) >= 5 {
			last = false // a mapping's header line
			if len(f) < 6 || f[5] != exe {
				continue
			}
			a, err1 := strconv.ParseUint(lo, 16, 64)
			z, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil || z <= a {
				continue
			}
			size += int64(z - a)
			if !strings.Contains(f[1], "w") {
				spans = append(spans, exeSpan{addr: uintptr(a), size: uintptr(z - a)})
				last = true
			}
			continue
		}
		if last && f[0] == "Anonymous:" && (len(f) < 2 || f[1] != "0") {
			spans = spans[:len(spans)-1] // holds relocated (private) pages
			last = false
		}
	}
	return spans, size
}
