package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/neardup/neardup/store"
)

func ExampleNewMemory() {
	s := store.NewMemory()
	defer s.Close()
	b := s.NewBatch()
	b.AddPosting(0xabc, 2)
	b.AddPosting(0xabc, 1)
	b.PutDoc(1, []byte(`{"url":"a"}`))
	if err := b.Commit(context.Background()); err != nil {
		panic(err)
	}
	ids, _ := s.Postings(context.Background(), 0xabc, nil)
	rec, ok, _ := s.Doc(context.Background(), 1, nil)
	fmt.Println(ids, string(rec), ok)
	// Output: [1 2] {"url":"a"} true
}

func ExampleOpenPebble() {
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, err := store.OpenPebble(dir, nil) // 256 MiB block cache, Bloom filters on every level
	if err != nil {
		panic(err)
	}
	b := s.NewBatch()
	for id := uint64(1); id <= 3; id++ {
		b.AddPosting(42, id)
	}
	if err := b.Commit(context.Background()); err != nil { // durable when it returns
		panic(err)
	}
	b.Close()
	store.Compact(context.Background(), s) // after a bulk build
	s.Close()

	s, _ = store.OpenPebble(dir, nil)
	defer s.Close()
	ids, _ := s.Postings(context.Background(), 42, nil)
	fmt.Println(ids)
	// Output: [1 2 3]
}

func ExampleStore_ScanDocs() {
	s := store.NewMemory()
	b := s.NewBatch()
	b.PutDoc(20, []byte("b"))
	b.PutDoc(10, []byte("a"))
	b.Commit(context.Background())
	s.ScanDocs(context.Background(), func(id uint64, rec []byte) error {
		fmt.Println(id, string(rec))
		return nil
	})
	// Output:
	// 10 a
	// 20 b
}

// A command that owns an output directory takes its lock before it cleans
// anything inside, so that a second run on the same directory stops at
// once instead of deleting the first run's files.
func ExampleLockDir() {
	out, _ := os.MkdirTemp("", "neardup-out")
	defer os.RemoveAll(out)
	unlock, err := store.LockDir(out)
	if err != nil {
		panic(err) // "directory OUT is in use by another neardup process (pid N)"
	}
	defer unlock()
	// ... remove stale outputs, open OUT/index with OpenPebble, write ...

	_, err = store.LockDir(out) // a second run
	fmt.Println(errors.Is(err, store.ErrInUse))
	// Output: true
}

// Stats counts what a store holds and measures what it takes on disk,
// for `neardup index stats`.
func ExamplePebble_Stats() {
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	b := s.NewBatch()
	b.AddPosting(42, 1)
	b.AddPosting(43, 1)
	b.PutDoc(1, []byte("a record"))
	if err := b.Commit(context.Background()); err != nil {
		panic(err)
	}
	st, err := s.Stats(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Docs, st.Postings, st.DiskBytes < 1<<20)
	// Output: 1 2 true
}
