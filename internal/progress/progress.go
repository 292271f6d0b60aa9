// Package progress reports the progress of long-running stages: a bar with
// rate and ETA on a terminal (github.com/schollz/progressbar/v3), plain log
// lines at most every few seconds otherwise, nothing when disabled.
//
// A Bar is safe for concurrent use: workers call Add from many goroutines.
package progress

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Bar is one stage's progress. The zero value and a nil *Bar discard
// updates.
type Bar struct {
	bar    *progressbar.ProgressBar
	log    io.Writer
	stage  string
	unit   string
	total  int64
	done   atomic.Int64
	start  time.Time
	mu     sync.Mutex
	last   time.Time
	every  time.Duration
	quiet  bool
	closed bool
}

// Options select how a Bar reports.
type Options struct {
	// W receives the output; nil disables reporting.
	W io.Writer
	// Interactive draws a bar (for a terminal); otherwise log lines are
	// written at most every Every.
	Interactive bool
	// Every is the interval of log lines. The default is 5 seconds.
	Every time.Duration
	// NoSummary leaves out the line Finish writes (for commands that print
	// their own summary).
	NoSummary bool
}

// New starts a stage named stage with total units (bytes when unit is
// "bytes"; -1 when unknown).
func New(o Options, stage string, total int64, unit string) *Bar {
	if o.W == nil {
		return nil
	}
	b := &Bar{log: o.W, stage: stage, unit: unit, total: total, start: time.Now(), every: o.Every, quiet: o.NoSummary}
	if b.every == 0 {
		b.every = 5 * time.Second
	}
	b.last = b.start
	if o.Interactive {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(o.W),
			progressbar.OptionSetDescription(fmt.Sprintf("%-8s", stage)),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString(unit),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionFullWidth(),
		}
		if unit == "bytes" {
			opts = append(opts, progressbar.OptionShowBytes(true))
		}
		b.bar = progressbar.NewOptions64(total, opts...)
	}
	return b
}

// Add records n more units done.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	d := b.done.Add(n)
	if b.bar != nil {
		_ = b.bar.Add64(n)
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.last) >= b.every && !b.closed {
		b.last = now
		b.line(d, now)
	}
}

// Set records the absolute amount done (for byte counters read elsewhere).
func (b *Bar) Set(done int64) {
	if b == nil {
		return
	}
	if d := done - b.done.Load(); d > 0 {
		b.Add(d)
	}
}

func (b *Bar) line(done int64, now time.Time) {
	el := now.Sub(b.start).Seconds()
	rate := float64(done) / max(el, 1e-9)
	if b.total > 0 {
		eta := ""
		if done > 0 && done < b.total {
			eta = ", ETA " + time.Duration(float64(b.total-done)/rate*float64(time.Second)).Round(time.Second).String()
		}
		fmt.Fprintf(b.log, "%s: %d/%d %s (%.1f%%), %.0f %s/s%s\n", b.stage, done, b.total, b.unit, 100*float64(done)/float64(b.total), rate, b.unit, eta)
		return
	}
	fmt.Fprintf(b.log, "%s: %d %s, %.0f %s/s\n", b.stage, done, b.unit, rate, b.unit)
}

// Finish ends the stage and writes its one-line summary.
func (b *Bar) Finish() time.Duration {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	el := time.Since(b.start)
	if b.closed {
		return el
	}
	b.closed = true
	if b.bar != nil {
		_ = b.bar.Finish()
	}
	if b.quiet {
		return el
	}
	d := b.done.Load()
	fmt.Fprintf(b.log, "%s: %d %s in %s (%.0f %s/s)\n", b.stage, d, b.unit, el.Round(time.Millisecond), float64(d)/max(el.Seconds(), 1e-9), b.unit)
	return el
}
