package storetest_test

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// A Failing store with no rules is the store it wraps.
func TestFailingConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.NewFailing(store.NewMemory()) })
}

func TestFailingRules(t *testing.T) {
	ctx := context.Background()
	f := storetest.NewFailing(store.NewMemory())
	defer f.Close()
	b := f.NewBatch()
	defer b.Close()
	for i := range uint64(10) {
		b.AddPosting(1, i)
		b.PutDoc(i, []byte{byte(i)})
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// Writes fail after one more succeeds, for good; reads are untouched.
	f.FailAfter(storetest.OpCommit, 1, syscall.ENOSPC)
	b.AddPosting(2, 1)
	if err := b.Commit(ctx); err != nil {
		t.Fatalf("commit before the rule bites: %v", err)
	}
	for range 3 {
		b.AddPosting(3, 1)
		err := b.Commit(ctx)
		var ie *storetest.InjectedError
		if !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &ie) || ie.Op != storetest.OpCommit {
			t.Fatalf("commit after the rule: %v, want injected ENOSPC", err)
		}
	}
	if ids, err := f.Postings(ctx, 3, nil); err != nil || len(ids) != 0 {
		t.Errorf("a failed commit was applied: %v %v", ids, err)
	}
	f.Heal()
	if err := b.Commit(ctx); err != nil { // the batch kept its writes
		t.Fatalf("commit after Heal: %v", err)
	}
	if ids, _ := f.Postings(ctx, 3, nil); !slices.Equal(ids, []uint64{1}) {
		t.Errorf("retried commit: %v", ids)
	}

	// A scan fails in the middle: the 4th item (after the start and 3).
	f.Fail(storetest.Rule{Ops: storetest.OpScan, After: 4, Times: 1, Err: syscall.EIO})
	var seen []uint64
	err := f.ScanDocs(ctx, func(id uint64, _ []byte) error { seen = append(seen, id); return nil })
	if !errors.Is(err, syscall.EIO) || !slices.Equal(seen, []uint64{0, 1, 2}) {
		t.Errorf("scan failing mid-way: %v after %v", err, seen)
	}
	// Times: 1 — the next scan succeeds.
	seen = seen[:0]
	if err := f.ScanDocs(ctx, func(id uint64, _ []byte) error { seen = append(seen, id); return nil }); err != nil || len(seen) != 10 {
		t.Errorf("scan after a one-time failure: %v, %d items", err, len(seen))
	}

	// A multi-key lookup fails at its third key.
	f.Fail(storetest.Rule{Ops: storetest.OpPostings, After: 2, Times: 1, Err: syscall.EIO})
	calls0 := f.Calls(storetest.OpPostings)
	var got []int
	err = f.LookupPostings(ctx, []uint64{1, 2, 3, 4}, func(i int, _ []uint64) error { got = append(got, i); return nil })
	if !errors.Is(err, syscall.EIO) || !slices.Equal(got, []int{0, 1}) {
		t.Errorf("lookup failing at the third key: %v after %v", err, got)
	}
	if n := f.Calls(storetest.OpPostings) - calls0; n != 3 {
		t.Errorf("Calls(OpPostings) grew by %d, want 3", n)
	}

	// Applied: the commit happens, and its acknowledgement is lost.
	f.Heal()
	f.Fail(storetest.Rule{Ops: storetest.OpCommit, Times: 1, Err: syscall.ETIMEDOUT, Applied: true})
	b.AddPosting(4, 4)
	if err := b.Commit(ctx); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("applied-then-failed commit: %v", err)
	}
	if ids, _ := f.Postings(ctx, 4, nil); !slices.Equal(ids, []uint64{4}) {
		t.Errorf("applied-then-failed commit not applied: %v", ids)
	}

	// Bulks fail at Commit like batches.
	f.FailAfter(storetest.OpCommit, 0, syscall.EIO)
	bulk := store.NewBulk(f)
	bulk.AddPosting(5, 5)
	if err := bulk.Commit(ctx); !errors.Is(err, syscall.EIO) {
		t.Errorf("bulk commit: %v", err)
	}
	bulk.Close()
	if n := f.Injected(); n != 7 {
		t.Errorf("Injected = %d, want 7", n)
	}
}

func TestFailingClose(t *testing.T) {
	m := store.NewMemory()
	f := storetest.NewFailing(m)
	f.FailAfter(storetest.OpClose, 0, syscall.EIO)
	if err := f.Close(); !errors.Is(err, syscall.EIO) {
		t.Errorf("Close: %v", err)
	}
	// The wrapped store was closed all the same.
	if _, err := m.Postings(context.Background(), 1, nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("wrapped store after a failed Close: %v", err)
	}
}
