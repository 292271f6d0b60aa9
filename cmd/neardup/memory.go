package main

// The --memory flag's default: the machine's physical memory.

import (
	"bufio"
	"context"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

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
		return usagef("--store memory needs more than %s, its share (half) of --memory %s: use the default store (Pebble, on disk), or a larger --memory",
			formatBytes(b.m.limit), formatBytes(b.m.budget))
	}
	b.n = 0
	return b.Batch.Commit(ctx)
}
