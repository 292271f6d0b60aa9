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

// LookupPostings reads the lists of many keys in one call: one round trip
// for a network store, one iterator for Pebble.
func ExampleMemory_LookupPostings() {
	ctx := context.Background()
	s := store.NewMemory()
	b := s.NewBatch()
	b.AddPosting(1, 10)
	b.AddPosting(1, 11)
	b.AddPosting(3, 10)
	b.Commit(ctx)
	s.LookupPostings(ctx, []uint64{1, 2, 3}, func(i int, ids []uint64) error {
		fmt.Println(i, ids) // ids is valid only during the call
		return nil
	})
	// Output:
	// 0 [10 11]
	// 1 []
	// 2 [10]
}

func ExampleMemory_LookupDocs() {
	ctx := context.Background()
	s := store.NewMemory()
	b := s.NewBatch()
	b.PutDoc(10, []byte("ten"))
	b.Commit(ctx)
	s.LookupDocs(ctx, []uint64{10, 99}, func(i int, rec []byte, ok bool) error {
		fmt.Println(i, string(rec), ok)
		return nil
	})
	// Output:
	// 0 ten true
	// 1  false
}

// ScanPostings walks every (key, id) pair, for checks and repairs.
func ExampleMemory_ScanPostings() {
	ctx := context.Background()
	s := store.NewMemory()
	b := s.NewBatch()
	b.AddPosting(2, 7)
	b.AddPosting(1, 9)
	b.AddPosting(1, 7)
	b.Commit(ctx)
	s.ScanPostings(ctx, func(key, id uint64) error {
		fmt.Println(key, id)
		return nil
	})
	// Output:
	// 1 7
	// 1 9
	// 2 7
}

// Metadata holds values such as the configuration an index was built with.
func ExampleMemory_Meta() {
	ctx := context.Background()
	s := store.NewMemory()
	b := s.NewBatch()
	b.PutMeta("config", []byte(`{"k":128}`))
	b.Commit(ctx)
	v, ok, _ := s.Meta(ctx, "config", nil)
	fmt.Println(string(v), ok)
	_, ok, _ = s.Meta(ctx, "missing", nil)
	fmt.Println(ok)
	// Output:
	// {"k":128} true
	// false
}

// Within a batch later writes win; nothing is visible before Commit, and
// Close discards what was not committed.
func ExampleMemory_NewBatch() {
	ctx := context.Background()
	s := store.NewMemory()
	b := s.NewBatch()
	b.AddPosting(5, 1)
	b.RemovePosting(5, 1) // the later write wins
	b.AddPosting(5, 2)
	b.PutDoc(2, []byte("old"))
	b.PutDoc(2, []byte("new"))
	fmt.Println(b.Len(), "writes")
	ids, _ := s.Postings(ctx, 5, nil)
	fmt.Println("before commit:", ids)
	b.Commit(ctx)
	ids, _ = s.Postings(ctx, 5, nil)
	rec, _, _ := s.Doc(ctx, 2, nil)
	fmt.Println("after commit:", ids, string(rec), b.Len())

	b.DeleteDoc(2)
	b.Close() // discarded
	_, ok, _ := s.Doc(ctx, 2, nil)
	fmt.Println("still there:", ok)
	// Output:
	// 5 writes
	// before commit: []
	// after commit: [2] new 0
	// still there: true
}

func ExampleMemory_Capabilities() {
	fmt.Printf("%+v\n", store.NewMemory().Capabilities())
	// Output: {Durable:false Atomic:true Ordered:true Shared:false}
}

func ExamplePebble_Capabilities() {
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Printf("%+v\n", s.Capabilities())
	// Output: {Durable:true Atomic:true Ordered:true Shared:false}
}

// A bulk build: NewBulk gives Pebble's SST-ingesting bulk, and a plain
// batch for stores without one. Compact after the build.
func ExampleNewBulk() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	bulk := store.NewBulk(s)
	for id := uint64(1); id <= 1000; id++ {
		bulk.AddPosting(id%10, id)
		bulk.PutDoc(id, []byte("record"))
	}
	if err := bulk.Commit(ctx); err != nil { // durable and atomic when it returns
		panic(err)
	}
	bulk.Close()
	if err := store.Compact(ctx, s); err != nil {
		panic(err)
	}
	ids, _ := s.Postings(ctx, 3, nil)
	fmt.Println(len(ids), ids[:3])
	// Output: 100 [3 13 23]
}

func ExamplePebble_LookupPostings() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	b := s.NewBatch()
	b.AddPosting(1, 30)
	b.AddPosting(1, 20)
	b.AddPosting(2, 20)
	b.Commit(ctx)
	b.Close()
	// One iterator serves every key.
	s.LookupPostings(ctx, []uint64{1, 2, 3}, func(i int, ids []uint64) error {
		fmt.Println(i, ids)
		return nil
	})
	// Output:
	// 0 [20 30]
	// 1 [20]
	// 2 []
}

func ExamplePebble_Metrics() {
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	m := s.Metrics() // Pebble's own report, for diagnosis
	fmt.Println(len(m) > 0)
	// Output: true
}

func ExampleDiskUsage() {
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		panic(err)
	}
	s.Close()
	n, err := store.DiskUsage(dir) // no need to open the store
	fmt.Println(n > 0, err)
	// Output: true <nil>
}

// A Writes records writes to decide later where they go: here it is
// inspected, then replayed into a store's batch.
func ExampleWrites() {
	ctx := context.Background()
	var w store.Writes
	w.AddPosting(7, 1)
	w.PutDoc(1, []byte("rec"))
	w.PutMeta("config", []byte("k=64"))
	for i := range w.Len() {
		o := w.Op(i)
		fmt.Printf("%v key=%d id=%d name=%q value=%q\n", o.Kind, o.Key, o.ID, o.Name, o.Value)
	}

	s := store.NewMemory()
	b := s.NewBatch()
	w.Replay(b)
	b.Commit(ctx)
	w.Reset()
	ids, _ := s.Postings(ctx, 7, nil)
	rec, _, _ := s.Doc(ctx, 1, nil)
	fmt.Println(ids, string(rec), w.Len())
	// Output:
	// AddPosting key=7 id=1 name="" value=""
	// PutDoc key=0 id=1 name="" value="rec"
	// PutMeta key=0 id=0 name="config" value="k=64"
	// [1] rec 0
}

func ExampleNewSortedBulk() {
	dir, _ := os.MkdirTemp("", "neardup-store")
	defer os.RemoveAll(dir)
	s, _ := store.OpenPebble(dir, nil)
	defer s.Close()
	b := store.NewSortedBulk(s) // records in increasing id order, straight into tables
	defer b.Close()
	for id := uint64(1); id <= 3; id++ {
		b.PutDoc(id, []byte(fmt.Sprint("record ", id)))
		b.AddPosting(42, 4-id) // postings in any order
	}
	if err := b.Commit(context.Background()); err != nil { // one ingestion, durable
		panic(err)
	}
	ids, _ := s.Postings(context.Background(), 42, nil)
	rec, _, _ := s.Doc(context.Background(), 2, nil)
	fmt.Println(ids, string(rec))

	late := store.NewSortedBulk(s)
	late.PutDoc(9, []byte("x"))
	late.PutDoc(5, []byte("y")) // out of order: the bulk fails
	fmt.Println(late.Commit(context.Background()) != nil)
	late.Close()
	// Output:
	// [1 2 3] record 2
	// true
}
