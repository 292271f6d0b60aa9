package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/neardup/neardup/store"
)

// Op is a set of store operations, for choosing which ones a Failing store
// fails. Each constant counts as one operation per call, or per item where
// it says so, so that "after N" can land in the middle of a scan or a
// multi-key lookup.
type Op uint16

const (
	// OpPostings is a Postings call, or one key of a LookupPostings.
	OpPostings Op = 1 << iota
	// OpDoc is a Doc call, or one id of a LookupDocs.
	OpDoc
	// OpMeta is a Meta call.
	OpMeta
	// OpScan is the start of a ScanDocs or ScanPostings, and each item it
	// yields.
	OpScan
	// OpCommit is the Commit of a batch, or of a bulk (store.NewBulk).
	OpCommit
	// OpCompact is a Compact call.
	OpCompact
	// OpClose is the store's Close.
	OpClose

	// OpReads are all reads.
	OpReads = OpPostings | OpDoc | OpMeta | OpScan
	// OpWrites are all writes.
	OpWrites = OpCommit | OpCompact
	// OpAll is every operation.
	OpAll = OpReads | OpWrites | OpClose
)

var opNames = [...]string{"postings", "doc", "meta", "scan", "commit", "compact", "close"}

// String returns the names of the operations in o, joined by "|".
func (o Op) String() string {
	var names []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Rule says which operations a Failing store fails, and how.
type Rule struct {
	// Ops are the operations the rule applies to.
	Ops Op
	// After is the number of operations in Ops that succeed, counted from
	// when the rule is added, before the rule starts to fail them.
	After int
	// Times is how many operations the rule fails; 0 fails every one
	// after the first After (a disk that stays full).
	Times int
	// Err is the error returned, wrapped so that errors.Is(err, Err) holds
	// (for example syscall.ENOSPC or syscall.EIO).
	Err error
	// Applied makes a failing Commit apply the batch first and then
	// report the error, like a network store whose reply was lost: the
	// caller must not assume that a failed commit left nothing behind.
	Applied bool

	seen, failed int
}

// InjectedError is the error a Failing store returns.
type InjectedError struct {
	Op  Op    // the operation that failed
	Err error // Rule.Err
}

func (e *InjectedError) Error() string {
	return fmt.Sprintf("storetest: injected %s failure: %v", e.Op, e.Err)
}

func (e *InjectedError) Unwrap() error { return e.Err }

// Failing is a store.Store that passes every call to another store and
// fails the operations its rules choose, the way Pebble's vfs/errorfs
// fails filesystem operations: with a given error, after N successful
// calls, once, N times or for good. A failed read returns the error
// without calling fn further; a failed Commit applies nothing (unless
// Rule.Applied) and leaves the batch's writes in place, so a caller may
// retry it. Failing also implements store.Compacter and store.Bulker,
// forwarding to the wrapped store through store.Compact and store.NewBulk.
//
// Safe for concurrent use if the wrapped store is. The zero value is not
// usable; make one with NewFailing.
type Failing struct {
	s store.Store

	mu       sync.Mutex
	rules    []*Rule
	calls    [len(opNames)]int
	injected int
}

var (
	_ store.Store     = (*Failing)(nil)
	_ store.Compacter = (*Failing)(nil)
	_ store.Bulker    = (*Failing)(nil)
)

// NewFailing returns a store that forwards to s and fails nothing until
// told to with Fail.
func NewFailing(s store.Store) *Failing { return &Failing{s: s} }

// Fail adds a rule. Rules are checked in the order they were added; the
// first that fails an operation decides its error.
func (f *Failing) Fail(r Rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.seen, r.failed = 0, 0
	f.rules = append(f.rules, &r)
}

// FailAfter fails every operation in ops after the next n succeed, with
// err: Fail(Rule{Ops: ops, After: n, Err: err}).
func (f *Failing) FailAfter(ops Op, n int, err error) {
	f.Fail(Rule{Ops: ops, After: n, Err: err})
}

// Heal removes every rule: later operations reach the wrapped store again
// (the disk was freed).
func (f *Failing) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Calls returns how many operations in ops were attempted so far, failed
// ones included.
func (f *Failing) Calls(ops Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for i, c := range f.calls {
		if ops&(1<<i) != 0 {
			n += c
		}
	}
	return n
}

// Injected returns how many failures were injected so far.
func (f *Failing) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// Unwrap returns the wrapped store.
func (f *Failing) Unwrap() store.Store { return f.s }

// check counts one operation and returns the injected error, if a rule
// fails it, and the rule.
func (f *Failing) check(op Op) (*InjectedError, *Rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range opNames {
		if op == 1<<i {
			f.calls[i]++
		}
	}
	for _, r := range f.rules {
		if r.Ops&op == 0 {
			continue
		}
		if r.seen < r.After {
			r.seen++
			continue
		}
		if r.Times > 0 && r.failed >= r.Times {
			continue
		}
		r.failed++
		f.injected++
		return &InjectedError{Op: op, Err: r.Err}, r
	}
	return nil, nil
}

func (f *Failing) fail(op Op) error {
	if e, _ := f.check(op); e != nil {
		return e
	}
	return nil
}

// Postings implements store.Store.
func (f *Failing) Postings(ctx context.Context, key uint64, dst []uint64) ([]uint64, error) {
	if err := f.fail(OpPostings); err != nil {
		return dst, err
	}
	return f.s.Postings(ctx, key, dst)
}

// LookupPostings implements store.Store; each key is one OpPostings.
func (f *Failing) LookupPostings(ctx context.Context, keys []uint64, fn func(i int, ids []uint64) error) error {
	return f.s.LookupPostings(ctx, keys, func(i int, ids []uint64) error {
		if err := f.fail(OpPostings); err != nil {
			return err
		}
		return fn(i, ids)
	})
}

// Doc implements store.Store.
func (f *Failing) Doc(ctx context.Context, id uint64, dst []byte) ([]byte, bool, error) {
	if err := f.fail(OpDoc); err != nil {
		return dst, false, err
	}
	return f.s.Doc(ctx, id, dst)
}

// LookupDocs implements store.Store; each id is one OpDoc.
func (f *Failing) LookupDocs(ctx context.Context, ids []uint64, fn func(i int, rec []byte, ok bool) error) error {
	return f.s.LookupDocs(ctx, ids, func(i int, rec []byte, ok bool) error {
		if err := f.fail(OpDoc); err != nil {
			return err
		}
		return fn(i, rec, ok)
	})
}

// ScanDocs implements store.Store; the start and each item are one OpScan.
func (f *Failing) ScanDocs(ctx context.Context, fn func(id uint64, rec []byte) error) error {
	if err := f.fail(OpScan); err != nil {
		return err
	}
	return f.s.ScanDocs(ctx, func(id uint64, rec []byte) error {
		if err := f.fail(OpScan); err != nil {
			return err
		}
		return fn(id, rec)
	})
}

// ScanPostings implements store.Store; the start and each item are one
// OpScan.
func (f *Failing) ScanPostings(ctx context.Context, fn func(key, id uint64) error) error {
	if err := f.fail(OpScan); err != nil {
		return err
	}
	return f.s.ScanPostings(ctx, func(key, id uint64) error {
		if err := f.fail(OpScan); err != nil {
			return err
		}
		return fn(key, id)
	})
}

// Meta implements store.Store.
func (f *Failing) Meta(ctx context.Context, name string, dst []byte) ([]byte, bool, error) {
	if err := f.fail(OpMeta); err != nil {
		return dst, false, err
	}
	return f.s.Meta(ctx, name, dst)
}

// Capabilities implements store.Store: those of the wrapped store.
func (f *Failing) Capabilities() store.Capabilities { return f.s.Capabilities() }

// Close implements store.Store. The wrapped store is closed even when the
// close is made to fail, so that tests release their directories.
func (f *Failing) Close() error {
	injected := f.fail(OpClose)
	err := f.s.Close()
	if injected != nil {
		return injected
	}
	return err
}

// Compact implements store.Compacter.
func (f *Failing) Compact(ctx context.Context) error {
	if err := f.fail(OpCompact); err != nil {
		return err
	}
	return store.Compact(ctx, f.s)
}

// NewBatch implements store.Store.
func (f *Failing) NewBatch() store.Batch { return &failingBatch{Batch: f.s.NewBatch(), f: f} }

// NewBulk implements store.Bulker: the wrapped store's bulk (or batch),
// whose Commit fails as a batch's does.
func (f *Failing) NewBulk() store.Batch { return &failingBatch{Batch: store.NewBulk(f.s), f: f} }

type failingBatch struct {
	store.Batch
	f *Failing
}

func (b *failingBatch) Commit(ctx context.Context) error {
	e, r := b.f.check(OpCommit)
	if e == nil {
		return b.Batch.Commit(ctx)
	}
	if r.Applied {
		if err := b.Batch.Commit(ctx); err != nil {
			return err
		}
	}
	return e
}
