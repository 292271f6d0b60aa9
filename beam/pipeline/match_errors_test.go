package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The error paths of exact verification. A runner retries a failing
// bundle and then fails the job with the DoFn's error, which neardup-beam
// prints as one line (TestRunFails in cmd/neardup-beam); these tests call
// the DoFns directly, since the faults (an input that changes between the
// two readings, a candidate without its sketch or features) cannot be
// staged through a whole pipeline run.

// values returns an iterator over xs in the shape Beam gives a DoFn's
// grouped inputs.
func values[T any](xs ...T) func(*T) bool {
	return func(p *T) bool {
		if len(xs) == 0 {
			return false
		}
		*p = xs[0]
		xs = xs[1:]
		return true
	}
}

// writeInput writes a JSONL input of the given texts, with ids d0, d1, ….
func writeInput(t *testing.T, texts ...string) string {
	t.Helper()
	var b strings.Builder
	for i, s := range texts {
		b.WriteString(`{"id":"d` + string(rune('0'+i)) + `","text":"` + s + `"}` + "\n")
	}
	p := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func newFeaturesFn(t *testing.T) *featuresFn {
	t.Helper()
	f := &featuresFn{Cfg: Config{IdentityKey: strings.Repeat("ab", 32)}}
	if err := f.Setup(); err != nil {
		t.Fatal(err)
	}
	return f
}

const text1 = "the quick brown fox jumps over the lazy dog and keeps on running far away"

// TestFeaturesReadAgain: the documents asked for come back with their
// sorted feature sets and orders; an input nobody asks for is not opened.
func TestFeaturesReadAgain(t *testing.T) {
	f := newFeaturesFn(t)
	path := writeInput(t, text1, "another document entirely, with words of its own here", text1+" too")
	var got []docRec
	err := f.ProcessElement(context.Background(), 3, values(fileRef{Index: 3, Path: path}), values[int64](2, 0),
		func(o uint64, d docRec) { got = append(got, d) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "d0" || got[1].ID != "d2" || got[0].Order != order(3, 0) || got[1].Order != order(3, 2) {
		t.Fatalf("got %+v", got)
	}
	for _, d := range got {
		if len(d.Features) == 0 || !slices.IsSorted(d.Features) || len(d.Sketch) == 0 {
			t.Errorf("%s: features %d (sorted %v), sketch %d", d.ID, len(d.Features), slices.IsSorted(d.Features), len(d.Sketch))
		}
	}
	missing := filepath.Join(t.TempDir(), "never-opened.jsonl")
	if err := f.ProcessElement(context.Background(), 4, values(fileRef{Index: 4, Path: missing}), values[int64](),
		func(uint64, docRec) { t.Error("emitted for an input without candidates") }); err != nil {
		t.Errorf("input without candidates: %v", err)
	}
}

// TestFeaturesInputChanged: an input that lost records between the first
// reading and the verification's fails the job, naming the input and the
// count, instead of verifying fewer pairs in silence.
func TestFeaturesInputChanged(t *testing.T) {
	f := newFeaturesFn(t)
	path := writeInput(t, text1, text1+" again")
	err := f.ProcessElement(context.Background(), 0, values(fileRef{Path: path}), values[int64](1, 7),
		func(uint64, docRec) {})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1 of 2 candidate documents not found") {
		t.Errorf("error %v", err)
	}
}

// TestFeaturesInputGone: an input removed before the verification reads
// it again fails with the path and the cause; an input the job does not
// know fails too.
func TestFeaturesInputGone(t *testing.T) {
	f := newFeaturesFn(t)
	path := filepath.Join(t.TempDir(), "gone.jsonl")
	err := f.ProcessElement(context.Background(), 0, values(fileRef{Path: path}), values[int64](0),
		func(uint64, docRec) {})
	if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
		t.Errorf("removed input: error %v", err)
	}
	err = f.ProcessElement(context.Background(), 9, values[fileRef](), values[int64](0), func(uint64, docRec) {})
	if err == nil || !strings.Contains(err.Error(), "unknown input 9") {
		t.Errorf("unknown input: error %v", err)
	}
}

// TestVerifyNeedsFeatures: under exact verification a pair whose feature
// sets did not arrive is an error, never a fallback to the estimate; a
// pair without B's sketch is an error in both joins.
func TestVerifyNeedsFeatures(t *testing.T) {
	f := &verifyFn{Cfg: Config{IdentityKey: strings.Repeat("ab", 32)}}
	if err := f.Setup(); err != nil {
		t.Fatal(err)
	}
	sk := make([]uint64, 128)
	err := f.ProcessElement(context.Background(), 2, values(half{A: 1, AID: "a", Sketch: sk, Features: []uint64{1, 2}}),
		values(docRec{Order: 2, ID: "b", Sketch: sk}), func(pairRec) { t.Error("emitted a pair") }, func(line) {})
	if err == nil || !strings.Contains(err.Error(), `"a" and "b" without their feature sets`) {
		t.Errorf("missing features: error %v", err)
	}
	err = f.ProcessElement(context.Background(), 2, values(half{A: 1, AID: "a", Sketch: sk}), values[docRec](),
		func(pairRec) {}, func(line) {})
	if err == nil || !strings.Contains(err.Error(), "has no sketch") {
		t.Errorf("missing sketch (verify): error %v", err)
	}
	j := &joinAFn{}
	err = j.ProcessElement(context.Background(), 1, values[uint64](2, 3), values[docRec](), func(uint64, half) {})
	if err == nil || !strings.Contains(err.Error(), "has no sketch") {
		t.Errorf("missing sketch (join): error %v", err)
	}
}
