package index

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redis"
	"github.com/neardup/neardup/store/redis/redistest"
)

// TestLoadPostingsFollowsJournal: two indexes over one Redis prefix (two
// servers) keep their postings in memory; each writes at random, and
// every query on either, right after a write on the other, gives the
// matches an index reading the postings from Redis gives. A third index
// loaded late replays the journal to the same postings. The journal's
// notes keep both collapse tables equal to the stored documents.
func TestLoadPostingsFollowsJournal(t *testing.T) {
	url := redistest.Start(t).URL()
	open := func() store.Store { return openRedis(t, url, &redis.Options{Prefix: "follow"}) }
	cfg := minhashConfig(32, 5, lsh.Banding(4, 8), 0.5)
	st := open()
	a := mustOpen(t, st, cfg)
	b := mustOpen(t, open(), Config{})
	plain := mustOpen(t, open(), Config{})
	var cols []*Collapser
	for _, x := range []*Index{a, b} {
		c, err := x.NewCollapser(CollapseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
		if _, err := x.LoadPostings(bg); err != nil {
			t.Fatal(err)
		}
		if x.mem.Load() == nil || x.mem.Load().follow == nil {
			t.Fatal("not following the journal")
		}
	}
	_, sets := corpus(10, []float64{0.9, 0.6}, 79)
	r := rng.New(10)
	for step := range 300 {
		w, o := a, b
		if r.Intn(2) == 0 {
			w, o = b, a
		}
		nm := fmt.Sprintf("n%02d", r.Intn(25))
		if r.Intn(3) < 2 {
			mustAdd(t, w, mkDoc(t, w, nm, sets[r.Intn(uint64(len(sets)))], r.Intn(2) == 0))
		} else if _, err := w.Remove(bg, nm); err != nil {
			t.Fatal(err)
		}
		q := mkDoc(t, o, "query", sets[r.Intn(uint64(len(sets)))], false)
		for _, x := range []*Index{o, w} {
			got, err := x.Query(bg, nil, q, "")
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Query(bg, nil, q, "")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: from memory %v, from Redis %v", step, got, want)
			}
		}
	}
	// Both collapse tables hold the signatures of exactly the stored
	// documents, whoever wrote them (the journal's notes).
	for _, x := range []*Index{a, b} {
		if err := x.followJournal(bg); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 25 {
		nm := fmt.Sprintf("n%02d", i)
		d, stored, err := plain.Get(bg, nm)
		if err != nil {
			t.Fatal(err)
		}
		var want []uint16
		if stored {
			want, _ = cols[0].t.Signature(nil, d.Sketch.Values)
		}
		for k, c := range cols {
			got, ok := c.t.Get(nil, ID(nm))
			if ok != stored || !slices.Equal(got, want) {
				t.Errorf("collapse table %d: %s: %v %v, stored %v %v", k, nm, got, ok, want, stored)
			}
		}
	}
	late := mustOpen(t, open(), Config{})
	if _, err := late.LoadPostings(bg); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Index{a, b, late} {
		if err := x.mem.Load().sync(bg, x.mem.Load().follow.began); err != nil {
			t.Fatal(err)
		}
		comparePostings(t, x, st)
	}
}

// An index created before its store was journaled (here: a prefix whose
// journal marker is missing) loads its postings all the same: a follower
// starts from the postings, not from the journal's history.
func TestLoadPostingsOldJournal(t *testing.T) {
	url := redistest.Start(t).URL()
	st, err := redis.Open(bg, url, &redis.Options{Prefix: "old"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x := mustOpen(t, st, Config{})
	_, sets := corpus(3, nil, 7)
	for i, s := range sets {
		mustAdd(t, x, mkDoc(t, x, fmt.Sprint("d", i), s, false))
	}
	b := st.NewBatch()
	b.DeleteMeta(journalMeta)
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := x.LoadPostings(bg); err != nil {
		t.Fatal(err)
	}
	comparePostings(t, x, st)
}

// TestJournalTrimmed: three servers follow one journal (Redis and Redis
// Cluster), with an expiry of two seconds. While all three read, the
// journal keeps what the slowest has not read, and that one catches up
// from the journal without a rebuild. Then one pauses past the expiry
// while the others write and read, then acknowledge: the journal is
// trimmed to the live two's position (the paused one pins nothing), and
// the paused one, asked again, finds its place gone, rebuilds from the
// postings, and answers as the store does. ReleasePostings leaves the
// journal.
func TestJournalTrimmed(t *testing.T) {
	if testing.Short() {
		t.Skip("waits past a journal expiry")
	}
	for _, cluster := range []bool{false, true} {
		t.Run(fmt.Sprint("cluster=", cluster), func(t *testing.T) {
			var url string
			if cluster {
				url = redistest.StartCluster(t, 3).URL()
			} else {
				url = redistest.Start(t).URL()
			}
			testJournalTrimmed(t, url)
		})
	}
}

func testJournalTrimmed(t *testing.T, url string) {
	const expiry = 2 * time.Second
	open := func() *redis.Store { return openRedis(t, url, &redis.Options{Prefix: "trim", JournalExpiry: expiry}) }
	cfg := minhashConfig(32, 5, lsh.Banding(4, 8), 0.5)
	st := open()
	a := mustOpen(t, st, cfg)
	b := mustOpen(t, open(), Config{})
	c := mustOpen(t, open(), Config{})
	plain := mustOpen(t, open(), Config{})
	for _, x := range []*Index{a, b, c} {
		if _, err := x.LoadPostings(bg); err != nil {
			t.Fatal(err)
		}
	}
	_, sets := corpus(20, []float64{0.9}, 31)
	r := rng.New(3)
	batches := 0
	write := func(w *Index, n int) {
		for range n {
			nm := fmt.Sprintf("n%03d", r.Intn(200))
			if r.Intn(4) < 3 {
				mustAdd(t, w, mkDoc(t, w, nm, sets[r.Intn(uint64(len(sets)))], false))
			} else if _, err := w.Remove(bg, nm); err != nil {
				t.Fatal(err)
			}
			batches++
		}
	}
	check := func(x *Index) {
		t.Helper()
		q := mkDoc(t, x, "query", sets[r.Intn(uint64(len(sets)))], false)
		got, err := x.Query(bg, nil, q, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.Query(bg, nil, q, "")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("from memory %v, from Redis %v", got, want)
		}
	}
	state := func(x *Index) JournalState {
		t.Helper()
		s, err := x.FollowState(bg)
		if err != nil || !s.Following {
			t.Fatalf("follow state %+v %v", s, err)
		}
		return s
	}
	// All three live: c reads once a second, within the expiry.
	for range 3 {
		write(a, 20)
		write(b, 20)
		check(a)
		check(b)
		check(c)
		time.Sleep(400 * time.Millisecond)
	}
	if s := state(c); s.Rebuilds != 1 {
		t.Fatalf("c rebuilt while live: %+v", s)
	}
	// c pauses past the expiry while a and b go on, then a and b go
	// quiet and acknowledge what they have read (once a second each).
	deadline := time.Now().Add(expiry + 500*time.Millisecond)
	for time.Now().Before(deadline) {
		write(a, 10)
		write(b, 10)
		check(a)
		check(b)
		time.Sleep(200 * time.Millisecond)
	}
	for range 2 {
		time.Sleep(1100 * time.Millisecond)
		check(a)
		check(b)
	}
	// The paused c no longer pins the journal: it holds the entry at the
	// live followers' position and what came after (nothing).
	s := state(a)
	t.Logf("journal: %d entries, %d bytes after %d batches", s.Entries, s.Bytes, batches)
	if s.Entries <= 0 || s.Entries > 3 {
		t.Fatalf("journal of %d entries after %d batches: not trimmed", s.Entries, batches)
	}
	if s.Bytes <= 0 {
		t.Fatalf("journal bytes %d", s.Bytes)
	}
	check(c)
	if s := state(c); s.Rebuilds != 2 {
		t.Fatalf("c, back after the expiry: %+v, want a rebuild", s)
	}
	write(a, 10)
	for _, x := range []*Index{a, b, c} {
		check(x)
		comparePostings(t, x, st)
	}
	if err := c.ReleasePostings(bg); err != nil {
		t.Fatal(err)
	}
	if s, _ := c.FollowState(bg); s.Following {
		t.Fatal("following after ReleasePostings")
	}
	check(c) // from the store
}

// openRedis opens a connection to the Redis index at url, closed when the
// test ends: each one is a server of its own on a shared index.
func openRedis(t *testing.T, url string, o *redis.Options) *redis.Store {
	t.Helper()
	st, err := redis.Open(bg, url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
