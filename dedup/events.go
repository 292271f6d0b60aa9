package dedup

import (
	"fmt"
	"io"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/neardup/neardup/corpus"
)

// EventListener receives what a run reports as it goes, in the manner of
// pebble's EventListener: a struct of optional callbacks (nil ones are not
// called). The pipeline never prints; a command draws progress bars or
// logs from these, a library user does what it likes. Callbacks are
// called from one goroutine at a time, and must not block for long (the
// pipeline waits for them).
type EventListener struct {
	// StageBegin is called when a stage starts.
	StageBegin func(StageInfo)
	// Progress is called as a stage advances (at most every few thousand
	// items).
	Progress func(ProgressInfo)
	// StageEnd is called when a stage ends, with its duration and the
	// number of items it handled.
	StageEnd func(StageInfo)
	// Checkpoint is called when a resumable run (Options.Stages) has
	// saved a stage's output, complete or (stage 1) up to an input end.
	Checkpoint func(CheckpointInfo)
	// Rejected is called for every rejected record: the *corpus.RecordError
	// values the documents' iterator yielded and the pipeline's own
	// rejections (ReasonDuplicateID).
	Rejected func(*corpus.RecordError)
}

// Stages of a run, in order (StageInfo.Stage, ProgressInfo.Stage).
const (
	StageSketch = "sketch"      // read, fingerprint, extract, sketch (items: documents)
	StageQuery  = "query-store" // match this run's documents with a store's earlier ones (documents)
	StageIndex  = "index"       // the batch join over lookup keys (key passes)
	StageVerify = "verify"      // verify candidate pairs (pairs)
	StageClust  = "cluster"     // cluster verified pairs (pairs)
	StageStore  = "store"       // add this run's documents to the store (documents)
)

// StageInfo describes a stage that begins or ends.
type StageInfo struct {
	Stage string
	// Items is the number of items the stage handled (StageEnd), or will
	// handle when known in advance (StageBegin; 0 otherwise).
	Items int64
	// Duration is the stage's wall time (StageEnd).
	Duration time.Duration
}

// ProgressInfo describes the progress of a stage.
type ProgressInfo struct {
	Stage string
	// Done items out of Total (0 when unknown: the documents of the
	// sketch stage), counted in Unit ("docs", "keys", "pairs").
	Done, Total int64
	Unit        string
	// ETA is the time the stage still needs at its rate so far, when Total
	// is known (0 otherwise).
	ETA time.Duration
}

// MakeLoggingEventListener returns an EventListener that writes one line
// per stage end and per rejected record to w.
func MakeLoggingEventListener(w io.Writer) EventListener {
	return EventListener{
		StageEnd: func(s StageInfo) {
			fmt.Fprintf(w, "dedup: %s: %d items in %v\n", s.Stage, s.Items, s.Duration.Round(time.Millisecond))
		},
		Rejected: func(e *corpus.RecordError) { fmt.Fprintf(w, "dedup: rejected: %v\n", e) },
	}
}

// events serializes the listener's calls and records stage timings, peak
// memory and bytes spilled.
type events struct {
	mu      sync.Mutex
	l       EventListener
	stages  []Stage
	peaks   map[string]int64 // stages under way -> peak memory so far
	starts  map[string]time.Time
	spilled map[string]int64
	stop    chan struct{}
	stopped chan struct{}
}

// heldMemory is the memory the Go runtime holds from the OS.
func heldMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// sample updates the peaks of the stages under way.
func (e *events) sample() {
	m := heldMemory()
	e.mu.Lock()
	for s, p := range e.peaks {
		e.peaks[s] = max(p, m)
	}
	e.mu.Unlock()
}

// startSampling samples memory every 10 ms until stopSampling.
func (e *events) startSampling() {
	e.stop, e.stopped = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(e.stopped)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-e.stop:
				return
			case <-t.C:
				e.sample()
			}
		}
	}()
}

func (e *events) stopSampling() {
	if e.stop != nil {
		close(e.stop)
		<-e.stopped
		e.stop = nil
	}
}

// addSpilled counts bytes a stage wrote to the work directory.
func (e *events) addSpilled(stage string, n int64) {
	e.mu.Lock()
	if e.spilled == nil {
		e.spilled = map[string]int64{}
	}
	e.spilled[stage] += n
	e.mu.Unlock()
}

func (e *events) begin(stage string, items int64) time.Time {
	m := heldMemory()
	e.mu.Lock()
	if e.peaks == nil {
		e.peaks = map[string]int64{}
	}
	e.peaks[stage] = m
	if e.starts == nil {
		e.starts = map[string]time.Time{}
	}
	now := time.Now()
	e.starts[stage] = now
	e.mu.Unlock()
	if e.l.StageBegin != nil {
		e.mu.Lock()
		e.l.StageBegin(StageInfo{Stage: stage, Items: items})
		e.mu.Unlock()
	}
	return time.Now()
}

func (e *events) end(stage string, items int64, start time.Time) {
	d := time.Since(start)
	e.sample()
	e.endAfter(stage, items, d)
}

func (e *events) endAfter(stage string, items int64, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stages = append(e.stages, Stage{Name: stage, Seconds: d.Seconds(), Items: items, PeakMemory: e.peaks[stage], Spilled: e.spilled[stage]})
	delete(e.peaks, stage)
	if e.l.StageEnd != nil {
		e.l.StageEnd(StageInfo{Stage: stage, Items: items, Duration: d})
	}
}

// progress returns a reporter for stage, or nil when nobody listens.
func (e *events) progress(stage, unit string) func(done, total int64) {
	if e.l.Progress == nil {
		return nil
	}
	return func(done, total int64) {
		e.mu.Lock()
		p := ProgressInfo{Stage: stage, Done: done, Total: total, Unit: unit}
		if start, ok := e.starts[stage]; ok && total > 0 && done > 0 && done < total {
			el := time.Since(start)
			p.ETA = time.Duration(float64(el) * float64(total-done) / float64(done))
		}
		e.l.Progress(p)
		e.mu.Unlock()
	}
}

func (e *events) checkpoint(c CheckpointInfo) {
	if e.l.Checkpoint != nil {
		e.mu.Lock()
		e.l.Checkpoint(c)
		e.mu.Unlock()
	}
}

// restored records a stage a resumed run read from its stage files.
func (e *events) restored(s Stage) {
	s.Restored = true
	e.mu.Lock()
	e.stages = append(e.stages, s)
	e.mu.Unlock()
}

// stat returns the last recorded entry of stage.
func (e *events) stat(stage string) Stage {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.stages) - 1; i >= 0; i-- {
		if e.stages[i].Name == stage {
			return e.stages[i]
		}
	}
	return Stage{Name: stage}
}

func (e *events) rejected(r *corpus.RecordError) {
	if e.l.Rejected != nil {
		e.mu.Lock()
		e.l.Rejected(r)
		e.mu.Unlock()
	}
}
