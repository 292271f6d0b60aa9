package redis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redis"
	"github.com/neardup/neardup/store/redis/redistest"
	"github.com/neardup/neardup/store/storetest"
)

var prefixes atomic.Int64

// newPrefix returns a prefix no other store in this test binary uses, so
// every store the suite opens on one server starts empty.
func newPrefix(tag string) string {
	return fmt.Sprintf("t%d%s", prefixes.Add(1), tag)
}

func open(t *testing.T, url string, o *redis.Options) *redis.Store {
	t.Helper()
	s, err := redis.Open(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceStandalone(t *testing.T) {
	srv := redistest.Start(t)
	t.Run("Lookups", func(t *testing.T) { testLookups(t, open(t, srv.URL(), &redis.Options{Prefix: newPrefix("")})) })
	storetest.Run(t, func(t *testing.T) store.Store {
		s := open(t, srv.URL(), &redis.Options{Prefix: newPrefix("")})
		if c := s.Capabilities(); c != (store.Capabilities{Durable: true, Atomic: true, Ordered: true, Shared: true}) {
			t.Errorf("capabilities %+v", c)
		}
		return s
	})
}

func TestConformanceCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	t.Run("Lookups", func(t *testing.T) { testLookups(t, open(t, cl.URL(), &redis.Options{Prefix: newPrefix("")})) })
	t.Run("Spread", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s := open(t, cl.URL(), &redis.Options{Prefix: newPrefix("")})
			if c := s.Capabilities(); c != (store.Capabilities{Durable: true, Atomic: false, Ordered: true, Shared: true}) {
				t.Errorf("capabilities %+v", c)
			}
			return s
		})
	})
	t.Run("OneSlot", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s := open(t, cl.URL(), &redis.Options{Prefix: "{" + newPrefix("") + "}"})
			if c := s.Capabilities(); !c.Atomic {
				t.Errorf("capabilities %+v, want atomic with a hash tag", c)
			}
			return s
		})
	})
}

// TestSpread checks that an index on a cluster really spreads over every
// master (and that a hash-tagged one stays on one).
func TestSpread(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := context.Background()
	for _, c := range []struct {
		prefix  string
		masters int
	}{{"spread", 3}, {"{tagged}", 1}} {
		s := open(t, cl.URL(), &redis.Options{Prefix: c.prefix})
		b := s.NewBatch()
		for k := range uint64(300) {
			b.AddPosting(k*0x9e3779b97f4a7c15, k)
			b.PutDoc(k*0x9e3779b97f4a7c15, []byte("x"))
		}
		if err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		used := 0
		for _, n := range cl.Nodes {
			if size := n.Client(t).DBSize(ctx).Val(); size > 0 {
				used++
			}
			n.Client(t).FlushAll(ctx)
		}
		if used != c.masters {
			t.Errorf("prefix %q: keys on %d masters, want %d", c.prefix, used, c.masters)
		}
		s.Close()
	}
}

// TestKill9 commits batches, kills redis-server with SIGKILL after each
// acknowledged commit at random points, restarts it, and checks that every
// acknowledged write is there.
func TestKill9(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	var acked []uint64
	for round := range 3 {
		s := open(t, srv.URL(), &redis.Options{Prefix: "kill"})
		b := s.NewBatch()
		for i := range 50 {
			id := uint64(round*1000 + i)
			b.AddPosting(id%7, id)
			b.PutDoc(id, fmt.Appendf(nil, "doc %d", id))
			if err := b.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			acked = append(acked, id)
		}
		srv.Kill()
		s.Close()
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, srv.URL(), &redis.Options{Prefix: "kill"})
	defer s.Close()
	var got []uint64
	if err := s.ScanDocs(ctx, func(id uint64, rec []byte) error {
		if string(rec) != fmt.Sprintf("doc %d", id) {
			t.Errorf("doc %d = %q", id, rec)
		}
		got = append(got, id)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, acked) {
		t.Errorf("after kill -9: %d docs, want %d", len(got), len(acked))
	}
	n := 0
	for k := range uint64(7) {
		ids, err := s.Postings(ctx, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		n += len(ids)
	}
	if n != len(acked) {
		t.Errorf("after kill -9: %d postings, want %d", n, len(acked))
	}
}

// TestClusterKill9 is TestKill9 on a cluster whose masters are all killed
// and restarted.
func TestClusterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a cluster")
	}
	cl := redistest.StartCluster(t, 3)
	ctx := context.Background()
	s := open(t, cl.URL(), &redis.Options{Prefix: "kill"})
	b := s.NewBatch()
	for id := range uint64(200) {
		b.AddPosting(id*0x9e3779b97f4a7c15, id)
		b.PutDoc(id<<52, []byte{byte(id)})
		if err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	cl.Kill()
	if err := cl.Restart(); err != nil {
		t.Fatal(err)
	}
	s = open(t, cl.URL(), &redis.Options{Prefix: "kill"})
	defer s.Close()
	for id := range uint64(200) {
		ids, err := s.Postings(ctx, id*0x9e3779b97f4a7c15, nil)
		if err != nil || !slices.Equal(ids, []uint64{id}) {
			t.Fatalf("posting %d after restart: %v %v", id, ids, err)
		}
		rec, ok, err := s.Doc(ctx, id<<52, nil)
		if err != nil || !ok || !slices.Equal(rec, []byte{byte(id)}) {
			t.Fatalf("doc %d after restart: %v %v %v", id, rec, ok, err)
		}
	}
}

// TestShared checks that two stores on one server see each other's
// commits at once, and that prefixes keep indexes apart.
func TestShared(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := open(t, srv.URL(), &redis.Options{Prefix: "shared"})
	defer a.Close()
	b := open(t, srv.URL()+"?prefix=shared", nil)
	defer b.Close()
	other := open(t, srv.URL(), &redis.Options{Prefix: "shared:p:"}) // a prefix that extends a's keys
	defer other.Close()
	w := a.NewBatch()
	w.AddPosting(1, 10)
	w.PutDoc(10, []byte("ten"))
	w.PutMeta("config", []byte("c"))
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ids, _ := b.Postings(ctx, 1, nil); !slices.Equal(ids, []uint64{10}) {
		t.Errorf("b sees %v", ids)
	}
	if v, ok, _ := b.Meta(ctx, "config", nil); !ok || string(v) != "c" {
		t.Errorf("b meta %q %v", v, ok)
	}
	w2 := other.NewBatch()
	w2.AddPosting(2, 20)
	w2.PutDoc(20, []byte("twenty"))
	if err := w2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ids, _ := other.Postings(ctx, 1, nil); len(ids) != 0 {
		t.Errorf("other index sees a's postings: %v", ids)
	}
	var keys []uint64
	a.ScanPostings(ctx, func(k, id uint64) error { keys = append(keys, k, id); return nil })
	if !slices.Equal(keys, []uint64{1, 10}) {
		t.Errorf("a's postings %v", keys)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{
		"http://127.0.0.1:1",
		"127.0.0.1:6379",
		"redis://a:1,b:2",
		"redis+cluster://a:1,,b:2",
		"redis://127.0.0.1:1?prefix=a*b",
		"redis://127.0.0.1:1?no_such_option=1",
	} {
		if s, err := redis.Open(ctx, u, nil); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", u)
		}
	}
	// A server that is not there: an error naming it, password hidden.
	_, err := redis.Open(ctx, "redis://user:secret@127.0.0.1:1", &redis.Options{Timeout: 200e6})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open of a missing server: %v", err)
	}
}

func TestNotDurable(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	if err := srv.Client(t).ConfigSet(ctx, "appendfsync", "everysec").Err(); err != nil {
		t.Fatal(err)
	}
	s := open(t, srv.URL(), nil)
	if s.Capabilities().Durable {
		t.Error("durable with appendfsync everysec")
	}
	s.Close()
	s = open(t, srv.URL(), &redis.Options{AssumeDurable: true})
	if !s.Capabilities().Durable {
		t.Error("AssumeDurable ignored")
	}
	s.Close()
}

func TestCanceled(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, srv.URL(), nil)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Postings(ctx, 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Postings: %v", err)
	}
	if err := s.LookupDocs(ctx, []uint64{1}, func(int, []byte, bool) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("LookupDocs: %v", err)
	}
	b := s.NewBatch()
	b.PutDoc(1, nil)
	if err := b.Commit(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Commit: %v", err)
	}
	if _, ok, _ := s.Doc(context.Background(), 1, nil); ok {
		t.Error("canceled commit applied")
	}
}

// BenchmarkLookupPostings: one pipelined round trip for the 17 keys of a
// query, each set holding 4 ids, on a standalone redis-server.
func BenchmarkLookupPostings(b *testing.B) {
	srv := redistest.Start(b)
	s, err := redis.Open(context.Background(), srv.URL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	w := s.NewBatch()
	for k := range uint64(10000) {
		for id := range uint64(4) {
			w.AddPosting(k*0x9e3779b97f4a7c15, k<<8|id)
		}
	}
	if err := w.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	keys := make([]uint64, 17)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for j := range keys {
			keys[j] = uint64((i*17+j)%10000) * 0x9e3779b97f4a7c15
		}
		if err := s.LookupPostings(ctx, keys, func(int, []uint64) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// testLookups checks the multi-key and scanning methods against the
// single-key ones: order, missing keys and ids, stopping on an error,
// DeleteMeta.
func testLookups(t *testing.T, s *redis.Store) {
	defer s.Close()
	ctx := context.Background()
	b := s.NewBatch()
	for k := range uint64(50) {
		for id := range k % 5 {
			b.AddPosting(k*0x9e3779b97f4a7c15, id<<60|k)
		}
		if k%3 == 0 {
			b.PutDoc(k<<50, []byte{byte(k)})
		}
	}
	b.PutMeta("a", []byte("1"))
	b.PutMeta("b", []byte("2"))
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	golden := uint64(0x9e3779b97f4a7c15)
	k49, k3 := golden*49, golden*3
	keys := []uint64{k49, 12345, k3, k49}
	var seen []int
	err := s.LookupPostings(ctx, keys, func(i int, ids []uint64) error {
		seen = append(seen, i)
		want, _ := s.Postings(ctx, keys[i], nil)
		if !slices.Equal(ids, want) || !slices.IsSorted(ids) {
			t.Errorf("LookupPostings key %d: %v, Postings %v", i, ids, want)
		}
		return nil
	})
	if err != nil || !slices.Equal(seen, []int{0, 1, 2, 3}) {
		t.Errorf("LookupPostings: %v %v", seen, err)
	}
	stop := errors.New("stop")
	if err := s.LookupPostings(ctx, keys, func(int, []uint64) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("LookupPostings stopping: %v", err)
	}
	ids := []uint64{3 << 50, 4 << 50, 0, 48 << 50}
	var got []string
	err = s.LookupDocs(ctx, ids, func(i int, rec []byte, ok bool) error {
		got = append(got, fmt.Sprint(i, rec, ok))
		return nil
	})
	if want := []string{"0 [3] true", "1 [] false", "2 [0] true", "3 [48] true"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("LookupDocs: %q %v, want %q", got, err, want)
	}
	var pk, pid []uint64
	if err := s.ScanPostings(ctx, func(k, id uint64) error { pk, pid = append(pk, k), append(pid, id); return nil }); err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := range uint64(50) {
		n += int(k % 5)
	}
	if len(pk) != n {
		t.Errorf("ScanPostings: %d postings, want %d", len(pk), n)
	}
	for i := 1; i < len(pk); i++ {
		if pk[i-1] > pk[i] || pk[i-1] == pk[i] && pid[i-1] >= pid[i] {
			t.Fatalf("ScanPostings out of order at %d", i)
		}
	}
	if err := s.ScanPostings(ctx, func(uint64, uint64) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("ScanPostings stopping: %v", err)
	}
	b.DeleteMeta("a")
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Meta(ctx, "a", nil); ok {
		t.Error("DeleteMeta: still there")
	}
	if v, ok, _ := s.Meta(ctx, "b", nil); !ok || string(v) != "2" {
		t.Errorf("Meta b = %q %v", v, ok)
	}
}
