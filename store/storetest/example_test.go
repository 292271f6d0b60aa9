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
