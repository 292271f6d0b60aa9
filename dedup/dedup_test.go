package dedup

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

var bg = context.Background()

func writeFile(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func body(i, n int) string {
	var w []string
	for j := 0; j < n; j++ {
		w = append(w, fmt.Sprintf("w%d_%d", i, j))
	}
	return strings.Join(w, " ")
}

// TestThreeRuns is the reproduction: dedup a.jsonl --store S (x
// with text T1), then b.jsonl (x with text T2), then d.jsonl (z with T1).
// No document with T1 is in the index after the second run, so z is kept.
func TestThreeRuns(t *testing.T) {
	dir := t.TempDir()
	t1, t2 := body(1, 40), body(2, 40)
	a := writeFile(t, dir, "a.jsonl", `{"id":"x","text":"`+t1+`"}`)
	b := writeFile(t, dir, "b.jsonl", `{"id":"x","text":"`+t2+`"}`)
	d := writeFile(t, dir, "d.jsonl", `{"id":"z","text":"`+t1+`"}`)
	for _, ins := range [][]string{{a, b, d}} {
		st, err := store.OpenPebble(filepath.Join(dir, "S"), nil)
		if err != nil {
			t.Fatal(err)
		}
		var last *Result
		for _, in := range ins {
			if last, err = Run(bg, read(in), Options{Store: st}); err != nil {
				t.Fatal(err)
			}
		}
		if s := last.Summary; s.Kept != 1 || s.Duplicates != 0 || len(last.Pairs) != 0 {
			t.Fatalf("third run: %+v, pairs %+v: z must be kept", s, last.Pairs)
		}
		x, err := index.Open(bg, st, index.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := x.Check(bg, false); err != nil || !r.OK() || r.Docs != 2 {
			t.Fatalf("Check: %+v %v", r, err)
		}
		st.Close()
	}
}

// A store's configuration is adopted by later runs, and a contradicting
// option is an *index.ConfigError.
func TestStoreConfigAdopted(t *testing.T) {
	st := store.NewMemory()
	first := Options{Store: st, Index: index.Config{Sketch: sample.Config{Algorithm: sketch.MinHash, K: 64}}}
	if _, err := Run(bg, docsOf(&corpus.Document{ID: "a", Body: []byte(body(1, 30))}), first); err != nil {
		t.Fatal(err)
	}
	res, err := Run(bg, docsOf(&corpus.Document{ID: "b", Body: []byte(body(1, 30) + " x")}), Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Config.Sampler != "minhash" || res.Summary.Config.K != 64 || len(res.Pairs) != 1 {
		t.Fatalf("second run: %+v %+v", res.Summary.Config, res.Pairs)
	}
	_, err = Run(bg, docsOf(), Options{Store: st, Index: index.Config{Sketch: sample.Config{K: 128}}})
	var ce *index.ConfigError
	if !errors.As(err, &ce) || ce.Field != "k" {
		t.Fatalf("contradicting k: %v", err)
	}
}

// shuffled returns the documents of the sample corpus in a random order.
func shuffled(t *testing.T, seed uint64) []*corpus.Document {
	var docs []*corpus.Document
	for d, err := range read(sampleCorpus) {
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d.Clone())
	}
	s := rng.New(seed)
	for i := len(docs) - 1; i > 0; i-- {
		j := int(s.Intn(uint64(i + 1)))
		docs[i], docs[j] = docs[j], docs[i]
	}
	return docs
}

// The result does not depend on the input order beyond the stated rules
// (an exact copy pairs with the first copy of its body; the keep policy):
// the same near pairs (as unordered pairs of bodies, with the same
// similarity) and the same clusters (as sets of members), whatever the
// order. The corpus gets exact copies of some documents, so that exact
// duplicates are covered.
func TestOrderIndependence(t *testing.T) {
	type pairKey struct{ a, b string }
	canon := func(res *Result) (map[pairKey]float64, []string) {
		rep := map[string]string{} // name -> the smallest name with its body
		byFP := map[identity.Fingerprint]string{}
		for _, d := range res.Docs {
			if r, ok := byFP[d.Fingerprint]; !ok || d.Name < r {
				byFP[d.Fingerprint] = d.Name
			}
		}
		for _, d := range res.Docs {
			rep[d.Name] = byFP[d.Fingerprint]
		}
		ps := map[pairKey]float64{}
		for _, p := range res.Pairs {
			if p.Identical {
				continue
			}
			a, b := min(rep[p.A], rep[p.B]), max(rep[p.A], rep[p.B])
			ps[pairKey{a, b}] = p.Similarity
		}
		var cs []string
		for _, c := range res.Clusters {
			var m []string
			for _, x := range c.Members {
				m = append(m, x.Name)
			}
			slices.Sort(m)
			cs = append(cs, strings.Join(m, ","))
		}
		slices.Sort(cs)
		return ps, cs
	}
	var wantP map[pairKey]float64
	var wantC []string
	for seed := uint64(0); seed < 3; seed++ {
		docs := shuffled(t, 1)
		for i := 0; i < 5; i++ {
			c := *docs[i*7]
			c.ID = c.ID + "/copy"
			docs = append(docs, &c)
		}
		s := rng.New(seed + 10)
		for i := len(docs) - 1; i > 0; i-- {
			j := int(s.Intn(uint64(i + 1)))
			docs[i], docs[j] = docs[j], docs[i]
		}
		res, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever})
		if err != nil {
			t.Fatal(err)
		}
		p, c := canon(res)
		if wantP == nil {
			wantP, wantC = p, c
			if res.Summary.Exact == 0 {
				t.Fatal("no exact duplicates in the test corpus")
			}
			continue
		}
		if len(p) != len(wantP) || !slices.Equal(c, wantC) {
			t.Fatalf("order %d: %d pairs, %d clusters; first order: %d pairs, %d clusters", seed, len(p), len(c), len(wantP), len(wantC))
		}
		for k, v := range wantP {
			if p[k] != v {
				t.Fatalf("order %d: pair %v similarity %v, first order %v", seed, k, p[k], v)
			}
		}
	}
}

// Errors from the iterator: a *corpus.RecordError is a rejected record,
// anything else stops the run.
func TestIteratorErrors(t *testing.T) {
	stop := errors.New("disk on fire")
	seq := func(yield func(*corpus.Document, error) bool) {
		if !yield(&corpus.Document{ID: "a", Body: []byte("text")}, nil) {
			return
		}
		yield(nil, stop)
	}
	if _, err := Run(bg, seq, Options{}); !errors.Is(err, stop) {
		t.Fatalf("fatal iterator error: %v", err)
	}
	var rejected []string
	res, err := Run(bg, readWith(corpus.Options{}, writeFile(t, t.TempDir(), "x.jsonl", `{"id":"a","text":"t"}`, `{bad`, `{"id":"b"}`)),
		Options{Events: EventListener{Rejected: func(e *corpus.RecordError) { rejected = append(rejected, e.Reason) }}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Read != 3 || s.Rejected != 2 || s.Kept != 1 || len(rejected) != 2 || s.RejectedBy[corpus.ReasonBadJSON] != 1 {
		t.Fatalf("summary %+v, rejected %v", s, rejected)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := Run(ctx, read(sampleCorpus), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Every stage reports its begin, progress and end, in order.
func TestEvents(t *testing.T) {
	var begun, ended []string
	progress := map[string]int64{}
	o := Options{Store: store.NewMemory(), Events: EventListener{
		StageBegin: func(s StageInfo) { begun = append(begun, s.Stage) },
		StageEnd:   func(s StageInfo) { ended = append(ended, s.Stage) },
		Progress:   func(p ProgressInfo) { progress[p.Stage] = max(progress[p.Stage], p.Done) },
	}}
	if _, err := Run(bg, read(sampleCorpus), o); err != nil {
		t.Fatal(err)
	}
	res, err := Run(bg, read(sampleCorpus), o) // against the first run's documents
	if err != nil {
		t.Fatal(err)
	}
	want := []string{StageSketch, StageIndex, StageVerify, StageClust, StageStore, StageSketch, StageQuery, StageIndex, StageVerify, StageClust, StageStore}
	if !slices.Equal(ended, want) {
		t.Fatalf("stage ends %v, want %v", ended, want)
	}
	if len(begun) != len(want)-2 { // the background store stage has no begin event
		t.Fatalf("stage begins %v", begun)
	}
	if progress[StageSketch] != 474 || progress[StageIndex] != 17 || progress[StageVerify] == 0 || progress[StageQuery] == 0 || progress[StageStore] == 0 {
		t.Fatalf("progress %v", progress)
	}
	var names []string
	for _, s := range res.Summary.Stages {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, want[5:]) {
		t.Fatalf("summary stages %v", names)
	}
}

// failingStore fails every Commit once armed.
type failingStore struct {
	store.Store
	fail bool
}

func (f *failingStore) NewBatch() store.Batch { return &failingBatch{f.Store.NewBatch(), f} }

type failingBatch struct {
	store.Batch
	f *failingStore
}

func (b *failingBatch) Commit(ctx context.Context) error {
	if b.f.fail {
		return errors.New("no space left on device")
	}
	return b.Batch.Commit(ctx)
}

// A store that fails to write ends the run with a one-line error.
func TestStoreWriteFails(t *testing.T) {
	st := &failingStore{Store: store.NewMemory()}
	if _, err := Run(bg, read(sampleCorpus), Options{Store: st}); err != nil {
		t.Fatal(err)
	}
	st.fail = true
	_, err := Run(bg, read(sampleCorpus), Options{Store: st})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
}

// A run cancelled while it adds its documents to the store (after the
// first batch, while the next ones are being loaded ahead) ends with the
// context's error and leaves none of its documents in the store.
func TestStoreAddsCancelled(t *testing.T) {
	docs := make([]*corpus.Document, 3*2048+100)
	for i := range docs {
		docs[i] = &corpus.Document{ID: fmt.Sprintf("d%05d", i), Body: []byte(body(i, 12))}
	}
	st := store.NewMemory()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	o := Options{Store: st, Events: EventListener{Progress: func(p ProgressInfo) {
		if p.Stage == StageStore && p.Done > 0 {
			cancel()
		}
	}}}
	if _, err := Run(ctx, docsOf(docs...), o); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during the adds: %v", err)
	}
	n := 0
	if err := st.ScanDocs(bg, func(uint64, []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d documents stored by the cancelled run (%v)", n, err)
	}
}

// WriteKept detects an input that changed between the two readings.
func TestWriteKeptChangedInput(t *testing.T) {
	a := []*corpus.Document{{ID: "a", Body: []byte("x y z")}, {ID: "b", Body: []byte("p q r")}}
	res, err := Run(bg, docsOf(a...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sink discard
	if n, err := WriteKept(bg, docsOf(a...), res, &sink); err != nil || n != 2 {
		t.Fatalf("WriteKept: %d %v", n, err)
	}
	for _, changed := range []iter.Seq2[*corpus.Document, error]{docsOf(a[1], a[0]), docsOf(a[0])} {
		if _, err := WriteKept(bg, changed, res, &sink); err == nil {
			t.Fatal("a changed input was written")
		}
	}
}

type discard struct{}

func (*discard) Write(*corpus.Document) error { return nil }
func (*discard) Close() error                 { return nil }
