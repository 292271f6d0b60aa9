package main

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// vmHWM returns the process's peak resident set size (VmHWM in
// /proc/self/status), in bytes, or 0 when unavailable.
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpuSeconds returns the process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// threadCPU returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID;
// the goroutine must be locked to its thread). On a loaded machine wall
// time per goroutine counts the time other processes ran; this does not.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// liveHeap returns the live heap bytes after a full GC.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// heapSample is one reading of the heap monitor.
type heapSample struct {
	t       time.Duration // since the monitor started
	objects int64         // /memory/classes/heap/objects:bytes
}

// heapMonitor samples the Go heap (runtime/metrics) every period, keeping
// the peak of live+unswept heap objects and of all memory the runtime
// mapped, and a timeline for per-stage estimates.
type heapMonitor struct {
	start     time.Time
	stop      chan struct{}
	done      sync.WaitGroup
	mu        sync.Mutex
	peakObj   int64
	peakTotal int64
	samples   []heapSample
}

func startHeapMonitor(period time.Duration) *heapMonitor {
	m := &heapMonitor{start: time.Now(), stop: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	read := func() {
		metrics.Read(s)
		obj, tot := int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
		m.mu.Lock()
		m.peakObj = max(m.peakObj, obj)
		m.peakTotal = max(m.peakTotal, tot)
		m.samples = append(m.samples, heapSample{time.Since(m.start), obj})
		m.mu.Unlock()
	}
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			read()
			select {
			case <-m.stop:
				read()
				return
			case <-tk.C:
			}
		}
	}()
	return m
}

func (m *heapMonitor) finish() {
	close(m.stop)
	m.done.Wait()
}

// window returns the heap at the first sample at or after from and the peak
// of samples in [from, to].
func (m *heapMonitor) window(from, to time.Duration) (atStart, peak int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	atStart = -1
	for _, s := range m.samples {
		if s.t < from || s.t > to {
			continue
		}
		if atStart < 0 {
			atStart = s.objects
		}
		peak = max(peak, s.objects)
	}
	return max(atStart, 0), peak
}

// dirBytes returns the total size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// percentile returns the q-quantile (nearest rank) of sorted durations in
// microseconds.
func percentile(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	i = min(max(i, 0), len(s)-1)
	return float64(s[i].Nanoseconds()) / 1e3
}

// startProfile starts a CPU profile and an execution trace into
// dir/NAME.cpu.pprof and dir/NAME.trace (nothing when dir is ""), and
// returns the function that stops them.
func startProfile(dir, name string) (stop func()) {
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatal(err)
	}
	cf, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		fatal(err)
	}
	tf, err := os.Create(filepath.Join(dir, name+".trace"))
	if err != nil {
		fatal(err)
	}
	if err := pprof.StartCPUProfile(cf); err != nil {
		fatal(err)
	}
	if err := trace.Start(tf); err != nil {
		fatal(err)
	}
	return func() {
		trace.Stop()
		pprof.StopCPUProfile()
		if err := errors.Join(cf.Close(), tf.Close()); err != nil {
			fatal(err)
		}
	}
}

// writeHeapProfile writes the live heap (after a collection) to path.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fatal(err)
	}
	runtime.GC()
	if err := errors.Join(pprof.WriteHeapProfile(f), f.Close()); err != nil {
		fatal(err)
	}
}
