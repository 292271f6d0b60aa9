package main

import (
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
)

// dedupRecords is corpus.Records for dedup: the reader's documents and
// rejected records in order, and, when marks is set, a *dedup.InputEnd
// after the last record of each input, with the reader's warnings and
// skips counted in it: the checkpoints of a resumable run.
func dedupRecords(inputs []string, o corpus.Options, marks bool) (*corpus.Reader, iter.Seq2[*corpus.Document, error], error) {
	var pending []error
	var r *corpus.Reader
	var prev corpus.Stats
	onReject := o.OnReject
	o.OnReject = func(e *corpus.RecordError) {
		if onReject != nil {
			onReject(e)
		}
		pending = append(pending, e)
	}
	if marks {
		o.OnInputEnd = func(i int) {
			s := r.Stats()
			pending = append(pending, &dedup.InputEnd{Input: i, Warnings: s.Warnings - prev.Warnings, Skipped: s.Skipped - prev.Skipped})
			prev = s
		}
	}
	r, err := corpus.Open(inputs, o)
	if err != nil {
		return nil, nil, err
	}
	prev = r.Stats() // skips met walking the directories are not an input's
	seq := func(yield func(*corpus.Document, error) bool) {
		flush := func() bool {
			for _, e := range pending {
				if !yield(nil, e) {
					return false
				}
			}
			pending = pending[:0]
			return true
		}
		for r.Next() {
			if !flush() || !yield(r.Doc(), nil) {
				return
			}
		}
		if flush() && r.Err() != nil {
			yield(nil, r.Err())
		}
	}
	return r, seq, nil
}

// dedupConfig is what a resumption compares: every option that decides
// the output, by its field name in dedupOptions (the flags), as JSON.
//
// Which flags were given is left out: it only matters against a store's
// recorded configuration, and the run adds the configuration it resolved
// (key "dedup.index").
func dedupConfig(opts dedupOptions) (map[string]string, error) {
	opts.Given = nil
	b, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	for k, v := range all {
		switch k {
		case "Out", "Quiet", "Workers", "Memory", "Work", "KeepWork", "Resume", "JSON", "Report", "MaxRejected", "Shard", "Given":
			continue // they do not change the stage files
		}
		var sub map[string]json.RawMessage
		if json.Unmarshal(v, &sub) == nil && sub != nil { // a group of flags: one key each
			for sk, sv := range sub {
				cfg[k+"."+sk] = string(sv)
			}
			continue
		}
		cfg[k] = string(v)
	}
	return cfg, nil
}

// dedupOptionsOf rebuilds the options a configuration was made from
// (dedup merge).
func dedupOptionsOf(cfg map[string]string) (dedupOptions, error) {
	var opts dedupOptions
	all := map[string]json.RawMessage{}
	groups := map[string]map[string]json.RawMessage{}
	for k, v := range cfg {
		if strings.HasPrefix(k, "dedup.") {
			continue
		}
		if g, sk, ok := strings.Cut(k, "."); ok {
			if groups[g] == nil {
				groups[g] = map[string]json.RawMessage{}
			}
			groups[g][sk] = json.RawMessage(v)
			continue
		}
		all[k] = json.RawMessage(v)
	}
	for g, m := range groups {
		b, err := json.Marshal(m)
		if err != nil {
			return opts, err
		}
		all[g] = b
	}
	b, err := json.Marshal(all)
	if err == nil {
		err = json.Unmarshal(b, &opts)
	}
	return opts, err
}

// stageInputs describes the reader's inputs for the stage manifests; an
// input that cannot be read is recorded as missing (size -1).
func stageInputs(r *corpus.Reader) []dedup.InputFile {
	ins := r.Inputs()
	out := make([]dedup.InputFile, len(ins))
	for i, in := range ins {
		out[i] = dedup.InputFile{Name: in.Path, Size: -1}
		if fi, err := os.Stat(in.Path); err == nil && in.Path != "-" {
			out[i].Size, out[i].ModTime = fi.Size(), fi.ModTime().UTC()
		}
	}
	return out
}

// hasStdin reports whether an input is standard input.
func hasStdin(inputs []string) bool { return slices.Contains(inputs, "-") }

// Test-only kill hook. When the environment sets NEARDUP_TEST_KILL_AFTER
// to N > 0, the process kills itself (SIGKILL) at the N-th event of a
// dedup run: a stage beginning or ending, a progress report, a checkpoint,
// an output file written. NEARDUP_TEST_EVENT_LOG names a file that gets a
// line per event ("N stage kind"), so that a test can choose kill points
// in every stage. Both are for the resumption tests (cmd_dedup_resume_test.go)
// and do nothing unless set.
var (
	killAfter, _ = strconv.ParseInt(os.Getenv("NEARDUP_TEST_KILL_AFTER"), 10, 64)
	eventLog     = os.Getenv("NEARDUP_TEST_EVENT_LOG")
	eventCount   atomic.Int64
)

// killPoint counts an event and, at the chosen one, kills the process.
func killPoint(stage, kind string) {
	if killAfter <= 0 && eventLog == "" {
		return
	}
	n := eventCount.Add(1)
	if eventLog != "" {
		if f, err := os.OpenFile(eventLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%d %s %s\n", n, stage, kind)
			f.Close()
		}
	}
	if n == killAfter {
		killSelf()
		select {} // the signal is on its way
	}
}

// withKillHook adds the kill hook to a listener's callbacks (inert
// unless the test environment is set).
func withKillHook(l dedup.EventListener) dedup.EventListener {
	if killAfter <= 0 && eventLog == "" {
		return l
	}
	begin, prog, end, cp := l.StageBegin, l.Progress, l.StageEnd, l.Checkpoint
	l.StageBegin = func(s dedup.StageInfo) {
		killPoint(s.Stage, "begin")
		if begin != nil {
			begin(s)
		}
	}
	l.Progress = func(p dedup.ProgressInfo) {
		killPoint(p.Stage, "progress")
		if prog != nil {
			prog(p)
		}
	}
	l.StageEnd = func(s dedup.StageInfo) {
		killPoint(s.Stage, "end")
		if end != nil {
			end(s)
		}
	}
	l.Checkpoint = func(c dedup.CheckpointInfo) {
		killPoint(c.Stage, "checkpoint")
		if cp != nil {
			cp(c)
		}
	}
	return l
}
