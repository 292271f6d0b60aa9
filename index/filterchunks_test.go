package index

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// recordedFilter returns the encoding of the filter recorded in st (its
// chunks joined when chunked).
func recordedFilter(t testing.TB, st store.Store) ([]byte, bool) {
	t.Helper()
	raw, ok, err := st.Meta(bg, filterMeta, nil)
	if err != nil || !ok {
		return nil, ok
	}
	data, err := readFilterValue(bg, st, raw)
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

// regrow replaces x's filter by one rebuilt from the records for capacity
// fingerprints, marked unrecorded as after an Add, so that the next Flush
// records it.
func regrow(t *testing.T, x *Index, st store.Store, capacity uint) {
	t.Helper()
	b := st.NewBatch()
	b.PutMeta(dirtyMeta, []byte{1})
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	x.fps.mu.Lock()
	defer x.fps.mu.Unlock()
	if err := x.fps.rebuild(bg, x, capacity); err != nil {
		t.Fatal(err)
	}
	x.fps.marked = true
}

// A filter past filterChunkBytes is recorded in chunks (format 3) whose
// joined bytes are the single-value encoding; a smaller one later deletes
// the chunks it does not use; a missing chunk is corruption that Check
// reports and repairs, unless the marker says a Flush did not finish,
// when opening rebuilds the filter and Check has nothing to say.
func TestFilterChunks(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, minhashConfig(16, 1, lsh.Banding(2, 8), 0))
	_, sets := corpus(300, nil, 12)
	var docs []*Doc
	for i, s := range sets {
		docs = append(docs, mkDoc(t, x, fmt.Sprintf("d%d", i), s, false))
	}
	mustAdd(t, x, docs...)
	found := func(x *Index) {
		t.Helper()
		for _, i := range []int{0, 123, 299} {
			if got := identical(t, x, docs[i].Fingerprint, nil); got != docs[i].Name {
				t.Fatalf("d%d: found %q", i, got)
			}
		}
	}
	head := func() chunkHead {
		t.Helper()
		raw, _, _ := st.Meta(bg, filterMeta, nil)
		h, chunked, err := parseChunkHead(raw)
		if err != nil || !chunked {
			t.Fatalf("recorded filter: chunked %v, %v", chunked, err)
		}
		return h
	}
	chunks := func() (n int) {
		t.Helper()
		for i := range uint64(100) {
			if _, ok, _ := st.Meta(bg, filterChunkName(i), nil); ok {
				n++
			}
		}
		return n
	}

	// Large: 1M fingerprints' worth (about 5 MB) in 20-odd chunks.
	regrow(t, x, st, 1<<20)
	if err := x.Flush(bg); err != nil {
		t.Fatal(err)
	}
	want, err := x.fps.encode()
	if err != nil {
		t.Fatal(err)
	}
	h := head()
	if h.length != uint64(len(want)) || h.chunks < 16 || chunks() != int(h.chunks) {
		t.Fatalf("head %+v (%d chunks stored) for an encoding of %d bytes", h, chunks(), len(want))
	}
	if got, _ := recordedFilter(t, st); !bytes.Equal(got, want) {
		t.Fatalf("chunks joined: %d bytes, not the encoding (%d bytes)", len(got), len(want))
	}
	if _, ok, _ := st.Meta(bg, dirtyMeta, nil); ok {
		t.Fatal("marker left after Flush")
	}
	y := mustOpen(t, st, Config{})
	found(y)
	checkClean(t, y)

	// Smaller, still chunked: the chunks past the new ones are deleted.
	regrow(t, x, st, 1<<18)
	if err := x.Flush(bg); err != nil {
		t.Fatal(err)
	}
	if h2 := head(); h2.chunks >= h.chunks || chunks() != int(h2.chunks) {
		t.Fatalf("after shrinking from %d chunks: head %+v, %d stored", h.chunks, h2, chunks())
	}
	found(mustOpen(t, st, Config{}))

	// One chunk short after an unfinished Flush (the marker stays):
	// opening rebuilds, Check finds nothing wrong.
	b := st.NewBatch()
	b.PutMeta(dirtyMeta, []byte{1})
	b.DeleteMeta(filterChunkName(1))
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	z := mustOpen(t, st, Config{})
	found(z)
	checkClean(t, z)

	// One chunk short with no marker: corrupt; Check says so, and its
	// repair deletes the filter (head and chunks) and sets the marker.
	b = st.NewBatch()
	b.DeleteMeta(dirtyMeta)
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	z = mustOpen(t, st, Config{})
	r, err := z.Check(bg, false)
	if err != nil || r.OK() || r.Metadata != 1 || !strings.Contains(strings.Join(r.Problems, "\n"), "chunk 1 of") {
		t.Fatalf("Check of a filter missing a chunk: %+v, %v", r, err)
	}
	if r, err = z.Check(bg, true); err != nil || r.Metadata != 1 {
		t.Fatalf("repair: %+v, %v", r, err)
	}
	if _, ok, _ := st.Meta(bg, filterMeta, nil); ok || chunks() != 0 {
		t.Fatalf("after repair: head %v, %d chunks", ok, chunks())
	}
	z = mustOpen(t, st, Config{})
	found(z)
	checkClean(t, z)

	// Reading a corrupt filter fails with ErrCorrupt.
	regrow(t, x, st, 1<<18)
	if err := x.Flush(bg); err != nil {
		t.Fatal(err)
	}
	b = st.NewBatch()
	b.PutMeta(filterChunkName(0), []byte("short"))
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	raw, _, _ := st.Meta(bg, filterMeta, nil)
	if _, err := readFilterValue(bg, st, raw); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short chunk: %v", err)
	}
	z = mustOpen(t, st, Config{})
	if _, err := z.Identical(bg, []identity.Fingerprint{docs[5].Fingerprint}, nil, func(int, uint64, string) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("lookup through a corrupt filter: %v", err)
	}
}

// A Flush of a chunked filter that fails at any of its store calls (each
// chunk's commit, the last batch, the reads) returns a one-line error
// wrapping the fault and leaves the marker: a new Index rebuilds the
// filter and finds every document, Check finds nothing wrong, and Flush
// again records a whole filter.
func TestFilterChunksFaults(t *testing.T) {
	_, sets := corpus(40, nil, 5)
	for _, method := range []string{"Commit", "Meta"} {
		faults := 0
		for n := 1; ; n++ {
			fs := &faultStore{Store: store.NewMemory()}
			x := mustOpen(t, fs, minhashConfig(16, 1, lsh.Banding(2, 8), 0))
			var docs []*Doc
			for i, s := range sets {
				docs = append(docs, mkDoc(t, x, fmt.Sprintf("d%d", i), s, false))
			}
			mustAdd(t, x, docs...)
			regrow(t, x, fs.Store, 1<<18) // about 1.3 MB: 5 chunks
			fs.arm(method, n)
			err := x.Flush(bg)
			fired := fs.fired
			fs.arm("", 0)
			if !fired {
				if err != nil {
					t.Fatalf("Flush without a fault: %v", err)
				}
				break
			}
			faults++
			if err == nil || !errors.Is(err, errInjected) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Flush with %s #%d failing: err = %v, want a one-line error wrapping the fault", method, n, err)
			}
			y := mustOpen(t, fs.Store, Config{})
			for _, d := range docs {
				if got := identical(t, y, d.Fingerprint, nil); got != d.Name {
					t.Fatalf("after Flush with %s #%d failing, %s: found %q", method, n, d.Name, got)
				}
			}
			checkClean(t, y)
			if err := x.Flush(bg); err != nil {
				t.Fatalf("Flush again after %s #%d failing: %v", method, n, err)
			}
			if got, _ := recordedFilter(t, fs.Store); len(got) <= filterChunkBytes {
				t.Fatalf("Flush again after %s #%d failing: recorded %d bytes", method, n, len(got))
			}
			checkClean(t, mustOpen(t, fs.Store, Config{}))
		}
		if method == "Commit" && faults < 5 {
			t.Errorf("%d commits failed in turn, want one per chunk and the last batch", faults)
		}
		t.Logf("%s: %d faults injected, each one reported", method, faults)
	}
}
