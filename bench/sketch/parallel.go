package main

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// Parallel is raw text to sketch on several goroutines at once (each with
// its own extractor and sampler, taking 64 documents at a time from a
// shared counter), as dedup's sketch stage runs.
type Parallel struct {
	Sampler string `json:"sampler"`
	Workers int    `json:"workers"`
	// WallDocsPerSec is by the median wall-clock time of a pass over
	// the corpus (GOMAXPROCS = Workers); it is what the workers achieve
	// together, and what other processes on the machine take from them.
	WallDocsPerSec float64 `json:"wall_docs_per_sec"`
	// CPUDocsPerSec is by the median of the workers' summed thread CPU
	// time: documents per CPU-second, per core, whatever the load.
	CPUDocsPerSec float64 `json:"cpu_docs_per_sec"`
	// Speedup is WallDocsPerSec over the one-worker figure of the same
	// run.
	Speedup float64 `json:"speedup"`
}

// parallelRaw times raw text to alg sketches with 1..maxWorkers workers,
// reps passes each (interleaved).
func parallelRaw(alg sketch.Algorithm, cfg config, text [][]byte, maxWorkers, reps int) ([]Parallel, error) {
	type worker struct {
		ex  *feature.Extractor
		smp sample.Sampler
		fs  []feature.Feature
		dst []uint64
	}
	var pool []*worker
	for range maxWorkers {
		ex, err := feature.New(feature.Options{Format: feature.FormatText})
		if err != nil {
			return nil, err
		}
		smp, err := sample.New(samplerConfig(alg, cfg))
		if err != nil {
			return nil, err
		}
		pool = append(pool, &worker{ex: ex, smp: smp})
	}
	// pass sketches every document with n workers and returns the wall
	// time and the workers' summed thread CPU time.
	pass := func(n int) (wall, cpu time.Duration) {
		prev := runtime.GOMAXPROCS(n)
		defer runtime.GOMAXPROCS(prev)
		var next atomic.Int64
		var total atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for _, w := range pool[:n] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				c0, _ := threadCPU()
				for {
					lo := int(next.Add(64)) - 64
					if lo >= len(text) {
						break
					}
					for _, t := range text[lo:min(lo+64, len(text))] {
						w.fs = w.ex.Extract(w.fs[:0], t)
						w.dst = w.smp.Sketch(w.dst[:0], w.fs)
					}
				}
				c1, _ := threadCPU()
				total.Add(int64(c1 - c0))
			}()
		}
		wg.Wait()
		return time.Since(start), time.Duration(total.Load())
	}
	for n := 1; n <= maxWorkers; n++ {
		pass(n) // warm up every worker's buffers
	}
	walls := make([][]time.Duration, maxWorkers+1)
	cpus := make([][]time.Duration, maxWorkers+1)
	for range reps {
		for n := 1; n <= maxWorkers; n++ {
			runtime.GC()
			w, c := pass(n)
			walls[n] = append(walls[n], w)
			cpus[n] = append(cpus[n], c)
		}
	}
	var out []Parallel
	for n := 1; n <= maxWorkers; n++ {
		p := Parallel{Sampler: alg.String(), Workers: n,
			WallDocsPerSec: float64(len(text)) / median(walls[n]).Seconds()}
		if c := median(cpus[n]); c > 0 {
			p.CPUDocsPerSec = float64(len(text)) / c.Seconds()
		}
		p.Speedup = p.WallDocsPerSec / out0(out, p).WallDocsPerSec
		out = append(out, p)
	}
	return out, nil
}

// out0 is the one-worker result (p itself when it is the first).
func out0(out []Parallel, p Parallel) Parallel {
	if len(out) == 0 {
		return p
	}
	return out[0]
}
