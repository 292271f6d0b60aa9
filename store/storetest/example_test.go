package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// A disk that fills up after the first commit: the second commit fails
// with ENOSPC and applies nothing; after Heal the same batch commits.
func ExampleFailing() {
	ctx := context.Background()
	s := storetest.NewFailing(store.NewMemory())
	defer s.Close()
	s.FailAfter(storetest.OpCommit, 1, syscall.ENOSPC)

	b := s.NewBatch()
	defer b.Close()
	b.AddPosting(7, 1)
	fmt.Println("first:", b.Commit(ctx))
	b.AddPosting(7, 2)
	err := b.Commit(ctx)
	fmt.Println("second:", err, errors.Is(err, syscall.ENOSPC))
	ids, _ := s.Postings(ctx, 7, nil)
	fmt.Println("stored:", ids)

	s.Heal()
	fmt.Println("retry:", b.Commit(ctx))
	ids, _ = s.Postings(ctx, 7, nil)
	fmt.Println("stored:", ids)
	// Output:
	// first: <nil>
	// second: storetest: injected commit failure: no space left on device true
	// stored: [1]
	// retry: <nil>
	// stored: [1 2]
}

// A read error in the middle of a scan, once: the scan stops with the
// error after two documents, and the next scan reads everything.
func ExampleFailing_Fail() {
	ctx := context.Background()
	s := storetest.NewFailing(store.NewMemory())
	defer s.Close()
	b := s.NewBatch()
	for id := range uint64(4) {
		b.PutDoc(id, []byte("doc"))
	}
	b.Commit(ctx)
	b.Close()

	// The start of the scan and two items succeed, the third item fails.
	s.Fail(storetest.Rule{Ops: storetest.OpScan, After: 3, Times: 1, Err: syscall.EIO})
	n := 0
	err := s.ScanDocs(ctx, func(uint64, []byte) error { n++; return nil })
	fmt.Println(n, err)
	n = 0
	err = s.ScanDocs(ctx, func(uint64, []byte) error { n++; return nil })
	fmt.Println(n, err)
	// Output:
	// 2 storetest: injected scan failure: input/output error
	// 4 <nil>
}

// Calls and Injected let a test check that the code under test really
// reached the failure and did not retry forever.
func ExampleFailing_Calls() {
	ctx := context.Background()
	s := storetest.NewFailing(store.NewMemory())
	defer s.Close()
	s.Fail(storetest.Rule{Ops: storetest.OpDoc, Times: 2, Err: syscall.EIO}) // fails twice, then heals
	for range 3 {
		_, _, err := s.Doc(ctx, 1, nil)
		fmt.Println(err)
	}
	fmt.Println(s.Calls(storetest.OpDoc), s.Calls(storetest.OpReads), s.Injected())
	// Output:
	// storetest: injected doc failure: input/output error
	// storetest: injected doc failure: input/output error
	// <nil>
	// 3 3 2
}

// Each key of a LookupPostings counts as one OpPostings, so a failure can
// land in the middle of a multi-key lookup.
func ExampleFailing_LookupPostings() {
	ctx := context.Background()
	s := storetest.NewFailing(store.NewMemory())
	defer s.Close()
	s.FailAfter(storetest.OpPostings, 2, syscall.EIO)
	err := s.LookupPostings(ctx, []uint64{1, 2, 3, 4}, func(i int, ids []uint64) error {
		fmt.Println("key", i)
		return nil
	})
	var ie *storetest.InjectedError
	fmt.Println(errors.As(err, &ie), ie.Op)
	// Output:
	// key 0
	// key 1
	// true postings
}

// A commit whose reply is lost: the writes were applied, but the caller
// sees an error (Rule.Applied), as with a network store.
func ExampleRule_applied() {
	ctx := context.Background()
	s := storetest.NewFailing(store.NewMemory())
	defer s.Close()
	s.Fail(storetest.Rule{Ops: storetest.OpCommit, Times: 1, Applied: true, Err: syscall.ETIMEDOUT})
	b := s.NewBatch()
	defer b.Close()
	b.PutDoc(1, []byte("x"))
	err := b.Commit(ctx)
	_, ok, _ := s.Doc(ctx, 1, nil)
	fmt.Println(errors.Is(err, syscall.ETIMEDOUT), ok)
	// Output: true true
}

func ExampleOp_String() {
	fmt.Println(storetest.OpCommit|storetest.OpScan, storetest.OpWrites)
	// Output: scan|commit commit|compact
}

// Unwrap reaches the wrapped store, for example to check what a failed
// run left behind without going through the rules.
func ExampleFailing_Unwrap() {
	ctx := context.Background()
	s := storetest.NewFailing(store.NewMemory())
	defer s.Close()
	s.FailAfter(storetest.OpAll, 0, syscall.EIO)
	_, err := s.Postings(ctx, 1, nil)
	_, err2 := s.Unwrap().Postings(ctx, 1, nil)
	fmt.Println(err != nil, err2)
	// Output: true <nil>
}
