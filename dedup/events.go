package dedup

import (
	"fmt"
	"io"
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

// events serializes the listener's calls and records stage timings.
type events struct {
	mu     sync.Mutex
	l      EventListener
	stages []Stage
}

func (e *events) begin(stage string, items int64) time.Time {
	if e.l.StageBegin != nil {
		e.mu.Lock()
		e.l.StageBegin(StageInfo{Stage: stage, Items: items})
		e.mu.Unlock()
	}
	return time.Now()
}

func (e *events) end(stage string, items int64, start time.Time) {
	d := time.Since(start)
	e.endAfter(stage, items, d)
}

func (e *events) endAfter(stage string, items int64, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stages = append(e.stages, Stage{Name: stage, Seconds: d.Seconds(), Items: items})
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
		e.l.Progress(ProgressInfo{Stage: stage, Done: done, Total: total, Unit: unit})
		e.mu.Unlock()
	}
}

func (e *events) rejected(r *corpus.RecordError) {
	if e.l.Rejected != nil {
		e.mu.Lock()
		e.l.Rejected(r)
		e.mu.Unlock()
	}
}
