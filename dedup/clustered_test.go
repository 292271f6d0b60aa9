package dedup

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/store"
)

// gatedStore is a store whose commits, once armed, wait for the gate to
// open (or fail after a while, or once their context is done).
type gatedStore struct {
	store.Store
	gate  chan struct{}
	armed bool
	fail  error // returned instead of committing once the gate opens
}

// armAtSketch returns listeners that arm (after index.Open has recorded
// the configuration) as the sketch stage begins.
func armAtSketch(arm func()) EventListener {
	return EventListener{StageBegin: func(s StageInfo) {
		if s.Stage == StageSketch {
			arm()
		}
	}}
}

func (g *gatedStore) NewBatch() store.Batch { return &gatedBatch{g.Store.NewBatch(), g} }

type gatedBatch struct {
	store.Batch
	g *gatedStore
}

func (b *gatedBatch) Commit(ctx context.Context) error {
	if !b.g.armed {
		return b.Batch.Commit(ctx)
	}
	select {
	case <-b.g.gate:
		if b.g.fail != nil {
			return b.g.fail
		}
		return b.Batch.Commit(ctx)
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Second):
		return errors.New("the gate stayed shut")
	}
}

// Clustered gets the final clusters while the adds are still running:
// the store's commits wait until Clustered is called (they would wait for
// good if it were called after them), and its Result is the one Run
// returns, with the same pairs, clusters and counts as a run without it.
func TestClusteredBesideAdds(t *testing.T) {
	ref, err := Run(bg, read(sampleCorpus), Options{Store: store.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	st := &gatedStore{Store: store.NewMemory(), gate: make(chan struct{})}
	var got *Result
	var sum Summary
	o := Options{Store: st, Events: armAtSketch(func() { st.armed = true }), Clustered: func(ctx context.Context, res *Result) error {
		got, sum = res, res.Summary
		for _, s := range res.Summary.Stages {
			if s.Name == StageStore {
				t.Errorf("the store stage ended before Clustered")
			}
		}
		close(st.gate)
		return nil
	}}
	res, err := Run(bg, read(sampleCorpus), o)
	if err != nil {
		t.Fatal(err)
	}
	if got != res {
		t.Fatalf("Clustered got %p, Run returned %p", got, res)
	}
	if sum.Kept != ref.Summary.Kept || sum.Duplicates != ref.Summary.Duplicates || sum.Near != ref.Summary.Near || sum.Largest != ref.Summary.Largest || sum.Kept == 0 || sum.Duplicates == 0 {
		t.Fatalf("Clustered saw kept %d, duplicates %d (%d near), largest %d; want %d, %d (%d), %d",
			sum.Kept, sum.Duplicates, sum.Near, sum.Largest, ref.Summary.Kept, ref.Summary.Duplicates, ref.Summary.Near, ref.Summary.Largest)
	}
	if !reflect.DeepEqual(res.Pairs, ref.Pairs) || !reflect.DeepEqual(res.Clusters, ref.Clusters) {
		t.Fatalf("pairs or clusters differ from a run without Clustered")
	}
	n := 0
	if err := st.ScanDocs(bg, func(uint64, []byte) error { n++; return nil }); err != nil || int64(n) != ref.Summary.Kept+ref.Summary.Near {
		t.Fatalf("%d documents stored (%v), want %d", n, err, ref.Summary.Kept+ref.Summary.Near)
	}
}

// An error of Clustered stops the adds (their commit waits until it is
// cancelled) and is what Run returns; nothing of the run is stored.
func TestClusteredError(t *testing.T) {
	st := &gatedStore{Store: store.NewMemory(), gate: make(chan struct{})}
	boom := errors.New("boom")
	o := Options{Store: st, Events: armAtSketch(func() { st.armed = true }), Clustered: func(context.Context, *Result) error { return boom }}
	_, err := Run(bg, read(sampleCorpus), o)
	if !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want boom", err)
	}
	n := 0
	if err := st.ScanDocs(bg, func(uint64, []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d documents stored by the failed run (%v)", n, err)
	}
}

// A failure of the adds cancels Clustered's context, and Run returns the
// adds' error, not the cancellation it caused. (The adds' commit fails
// once Clustered has begun.)
func TestClusteredAddsFail(t *testing.T) {
	st := &gatedStore{Store: store.NewMemory(), gate: make(chan struct{}), fail: errors.New("no space left on device")}
	cancelled := false
	o := Options{Store: st, Events: armAtSketch(func() { st.armed = true }), Clustered: func(ctx context.Context, _ *Result) error {
		close(st.gate)
		select {
		case <-ctx.Done():
			cancelled = true
			return ctx.Err()
		case <-time.After(20 * time.Second):
			return errors.New("not cancelled")
		}
	}}
	_, err := Run(bg, read(sampleCorpus), o)
	if !cancelled || err == nil || !strings.Contains(err.Error(), "no space left on device") || errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled %v, Run returned %v", cancelled, err)
	}
}
