package main

// The --memory flag's default: the machine's physical memory.

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/store"
)

// physicalMemory returns the machine's memory in bytes (MemTotal of
// /proc/meminfo), or 0 when unknown.
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fs[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// memoryFlagUsage is the help of --memory on the commands that take it.
const memoryFlagUsage = "memory budget, e.g. 2GiB (default 75% of physical memory): the Go memory limit, and the store's cache, memtables and bulk buffer are sized from it"

// memoryBudget is a command's --memory: the size given ("0" or
// "unlimited": no budget), or by default 75% of physical memory (no budget
// when unknown).
func memoryBudget(s string) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return physicalMemory() * 3 / 4, nil
	case "0", "unlimited":
		return 0, nil
	}
	n, err := parseBytes(s)
	if err != nil {
		return 0, usagef("--memory %v", err)
	}
	return n, nil
}

// withMemoryLimit sets the Go memory limit to budget (when there is one)
// and returns the function that restores the earlier limit.
func withMemoryLimit(budget int64) (restore func()) {
	if budget <= 0 {
		return func() {}
	}
	old := debug.SetMemoryLimit(budget)
	return func() { debug.SetMemoryLimit(old) }
}

// pebbleBudget sizes a Pebble store from a memory budget, into o (a new
// value when nil): the block cache an eighth of the budget and the bulk
// buffer a sixteenth (each at most its default), two memtables a
// thirty-second each (4 to 64 MiB). Without a budget o is unchanged.
func pebbleBudget(o *store.PebbleOptions, budget int64) *store.PebbleOptions {
	if budget <= 0 {
		return o
	}
	if o == nil {
		o = &store.PebbleOptions{}
	}
	o.CacheBytes = min(budget/8, 256<<20)
	o.BulkBytes = max(min(budget/16, 64<<20), 1<<20)
	o.MemTableBytes = uint64(min(max(budget/32, 4<<20), 64<<20))
	return o
}

// pebbleShare is what a Pebble store sized by pebbleBudget takes of a
// budget: off the Go heap (Pebble allocates them with malloc when built
// with cgo), its block cache and the two memtables it charges to it; on
// the Go heap, the bulk buffer. The Go memory limit of a command that
// holds the store is the budget less offHeap, and what the command's own
// buffers may take is that less heap, so that together they stay within
// the budget. Pebble's minimum sizes pass a tiny budget: its share is
// taken as at most half of it.
func pebbleShare(budget int64) (offHeap, heap int64) {
	if budget <= 0 {
		return 0, 0
	}
	o := pebbleBudget(nil, budget)
	offHeap = min(o.CacheBytes+2*int64(o.MemTableBytes), budget/2)
	heap = min(o.BulkBytes, budget/2-offHeap)
	return offHeap, heap
}

// What store.Memory holds per posting and per record besides the record's
// bytes: a map entry (key and slice header, at the maps' load factor) and
// the allocation behind it.
const (
	memPostingBytes = 64
	memDocBytes     = 64
)

// memoryShare is the part of a budget that --store memory may take: the
// rest is the run's own (dedup.Options.Memory).
func memoryShare(budget int64) int64 { return budget / 2 }

// budgetedMemory is --store memory under a budget: store.Memory whose
// commits are counted, and refused once what it holds would pass limit,
// with a usage error (exit 2) that says so, instead of the process
// growing past the budget.
type budgetedMemory struct {
	*store.Memory
	limit, budget int64
	used          atomic.Int64
}

// NewBatch implements store.Store.
func (m *budgetedMemory) NewBatch() store.Batch {
	return &budgetedBatch{Batch: m.Memory.NewBatch(), m: m}
}

type budgetedBatch struct {
	store.Batch
	m *budgetedMemory
	n int64 // bytes of the writes since the last commit
}

func (b *budgetedBatch) AddPosting(key, id uint64) {
	b.n += memPostingBytes
	b.Batch.AddPosting(key, id)
}

func (b *budgetedBatch) PutDoc(id uint64, rec []byte) {
	b.n += int64(len(rec)) + memDocBytes
	b.Batch.PutDoc(id, rec)
}

func (b *budgetedBatch) Commit(ctx context.Context) error {
	if used := b.m.used.Add(b.n); used > b.m.limit {
		return &UsageError{Bare: true, Err: fmt.Errorf("--store memory needs more than %s, its share (half) of --memory %s: use the default store (Pebble, on disk), or a larger --memory",
			formatBytes(b.m.limit), formatBytes(b.m.budget))}
	}
	b.n = 0
	return b.Batch.Commit(ctx)
}

// Sampling the inputs for checkMemoryStore: the first documents up to
// these many, or these many bytes of the inputs.
const (
	storeSampleDocs  = 2000
	storeSampleBytes = 4 << 20
)

// checkMemoryStore refuses at the start, with a usage error giving the
// estimate and the budget, a run of --store memory whose index cannot fit
// in its share of the budget (memoryShare). The first documents of the
// inputs (storeSampleDocs, storeSampleBytes) are deduplicated as the run
// would (its index configuration, exact verification and stored
// features decide the records' sizes) into a store that counts as
// budgetedMemory does: that gives the bytes a document takes in the store
// and in the inputs' size on disk, and the number of documents follows
// from the inputs' size (all of them are counted when the inputs are that
// small). Standard input has no size: the run is then refused only once
// the store passes its share (budgetedMemory), with the same kind of
// one-line error.
func checkMemoryStore(ctx context.Context, inputs []string, copts corpus.Options, do dedup.Options) error {
	budget := do.Memory
	if budget <= 0 || hasStdin(inputs) {
		return nil
	}
	copts.OnWarning, copts.OnReject, copts.OnInputEnd = nil, nil, nil
	r, err := corpus.Open(inputs, copts)
	if err != nil {
		return nil // the run says what is wrong with the inputs
	}
	defer r.Close()
	total := r.TotalBytes()
	m := &budgetedMemory{Memory: store.NewMemory(), limit: math.MaxInt64, budget: budget}
	var n int64
	sample := func(yield func(*corpus.Document, error) bool) {
		for n < storeSampleDocs && r.BytesRead() < storeSampleBytes && r.Next() {
			n++
			if !yield(r.Doc(), nil) {
				return
			}
		}
	}
	if _, err := dedup.Run(ctx, sample, dedup.Options{Index: do.Index, Store: m, Exact: do.Exact, StoreFeatures: do.StoreFeatures, Workers: 1}); err != nil {
		return nil // the run itself says what fails
	}
	read := r.BytesRead()
	if n == 0 || read <= 0 || total <= 0 {
		return nil
	}
	docs := n
	if r.Next() { // more than the sample: scaled to the inputs' size
		docs = max(n+1, int64(float64(n)*float64(total)/float64(read)))
	}
	per := m.used.Load() / n
	need := docs * per
	if limit := memoryShare(budget); need > limit {
		return &UsageError{Bare: true, Err: fmt.Errorf("--store memory would hold about %s (about %d documents in %s of input, %d bytes each in the store), more than its share %s (half) of --memory %s: use the default store (Pebble, on disk), or --memory %s or more",
			mib(need), docs, mib(total), per, formatBytes(limit), formatBytes(budget), formatBytes(2*roundMiB(need+need/8)))}
	}
	return nil
}

// roundMiB rounds n up to whole MiB (a size to print, or to give as
// --memory).
func roundMiB(n int64) int64 { return (n + 1<<20 - 1) &^ (1<<20 - 1) }

// mib formats n in MiB with one decimal.
func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + "MiB" }
