package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/neardup/neardup/corpus"
)

// rejectLog remembers the first rejected record of each reason, so that a
// run with too many rejections can show an example of the commonest one.
// Safe for concurrent use (readers call OnReject from their goroutines).
type rejectLog struct {
	mu    sync.Mutex
	first map[string]*corpus.RecordError
}

// observe records e if it is the first of its reason.
func (l *rejectLog) observe(e *corpus.RecordError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == nil {
		l.first = map[string]*corpus.RecordError{}
	}
	if _, ok := l.first[e.Reason]; !ok {
		c := *e
		c.Fields = slices.Clone(e.Fields)
		l.first[e.Reason] = &c
	}
}

// tooManyRejected is the error of a run that rejected more than
// --max-rejected of its records. It is a job failure (exit 1): the run's
// output has been written.
type tooManyRejected struct {
	rejected, read int64
	max            float64
	reason         string // the commonest reason
	count          int64  // records rejected for it
	example        *corpus.RecordError
}

func (e *tooManyRejected) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rejected %d of %d records (%.1f%%), more than --max-rejected %g: most for %s (%d)",
		e.rejected, e.read, 100*float64(e.rejected)/float64(e.read), e.max, e.reason, e.count)
	if x := e.example; x != nil {
		b.WriteString(", e.g. ")
		b.WriteString(recordPlace(x))
		if x.Err != nil {
			b.WriteString(": ")
			b.WriteString(x.Err.Error())
		}
		if x.Reason == corpus.ReasonMissingText && len(x.Fields) > 0 {
			if strings.EqualFold(filepath.Ext(x.Path), ".json") {
				// A .json file read as one record (package.json, a
				// config): the user most likely wanted every file as a
				// document.
				b.WriteString(" (choose one of its fields with --text-field, or read every file as one document with --format file)")
			} else {
				b.WriteString(" (choose one of its fields with --text-field)")
			}
		}
	}
	return b.String()
}

// recordPlace formats where a record is: "path:line", "path@offset" or the
// path, and its id when known.
func recordPlace(e *corpus.RecordError) string {
	p := e.Path
	switch {
	case e.Line > 0:
		p += ":" + strconv.FormatInt(e.Line, 10)
	case e.Offset >= 0:
		p += "@" + strconv.FormatInt(e.Offset, 10)
	}
	if e.ID != "" {
		p += " (id " + strconv.Quote(e.ID) + ")"
	}
	return p
}

// check returns a tooManyRejected error when rejected/read exceeds max.
func (l *rejectLog) check(read, rejected int64, by map[string]int64, max float64) error {
	if read == 0 || rejected == 0 || float64(rejected) <= max*float64(read) {
		return nil
	}
	e := &tooManyRejected{rejected: rejected, read: read, max: max}
	reasons := make([]string, 0, len(by))
	for r := range by {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if c := cmp.Compare(by[b], by[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(reasons) > 0 {
		e.reason, e.count = reasons[0], by[reasons[0]]
	}
	l.mu.Lock()
	e.example = l.first[e.reason]
	l.mu.Unlock()
	return e
}

// checkMaxRejected validates --max-rejected: a fraction in [0, 1].
func checkMaxRejected(v float64) error {
	if !(v >= 0 && v <= 1) {
		return usagef("--max-rejected %v: want a fraction of the records in [0, 1] (1: never fail)", v)
	}
	return nil
}
