package index

import (
	"errors"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// compactOf returns d with its feature set in short form, as NewDoc keeps
// a short document's.
func compactOf(d *Doc) *Doc {
	c := *d
	c.Compact = true
	c.Features = slices.Clone(d.Features)
	for i := range c.Features {
		c.Features[i] &= topHalf
	}
	return &c
}

// A compact record decodes to the masked ids, re-encodes to the same
// bytes, is 4 bytes per id, and any truncation of it is corrupt.
func TestRecordCompact(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(16, 3, lsh.Banding(2, 8), 0))
	_, sets := corpus(1, nil, 4)
	full := mkDoc(t, x, "c", sets[0], true)
	d := compactOf(full)
	rec, err := AppendDoc(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	frec, _ := AppendDoc(nil, full)
	if len(frec)-len(rec) != 4*len(d.Features) {
		t.Fatalf("compact record %d bytes, full %d: want %d fewer", len(rec), len(frec), 4*len(d.Features))
	}
	got, err := DecodeDoc(rec)
	if err != nil || !got.Compact || !slices.Equal(got.Features, d.Features) || got.Name != "c" {
		t.Fatalf("decoded %+v %v", got, err)
	}
	again, _ := AppendDoc(nil, got)
	if !slices.Equal(again, rec) {
		t.Fatal("re-encoding a compact record changed it")
	}
	for n := 0; n < len(rec); n++ {
		if _, err := DecodeDoc(rec[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated compact record of %d/%d bytes: %v", n, len(rec), err)
		}
	}
	// The compact flag without features, or on a version 2 record, is
	// corrupt.
	bad := slices.Clone(frec)
	flagAt := 1 + 1 + len("c")
	bad[flagAt] = recFingerprint | recCompact
	if _, err := DecodeDoc(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("compact flag without features: %v", err)
	}
	v2 := appendV2(nil, full)
	v2[flagAt] |= recCompact
	if _, err := DecodeDoc(v2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("compact flag on a version 2 record: %v", err)
	}
}

// The compact encoding is pinned: a record written now must read the same
// in every later release.
func TestRecordCompactGolden(t *testing.T) {
	d := &Doc{Name: "g", Sketch: sketch.Sketch{Header: sketch.Header{Algorithm: sketch.MinHash, Version: 1, K: 2, Bits: 64},
		Values: []uint64{1, 2}, Size: 3}, Features: []uint64{0x0102030400000000, 0xa0b0c0d000000000}, Compact: true}
	rec, err := AppendDoc(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	// The tail after the sketch: the count 2, then the top halves LE.
	tail := []byte{2, 0x04, 0x03, 0x02, 0x01, 0xd0, 0xc0, 0xb0, 0xa0}
	if !slices.Equal(rec[len(rec)-len(tail):], tail) || rec[0] != recordV3 || rec[3] != recFeatures|recCompact {
		t.Fatalf("compact record % x", rec)
	}
}

// Verification of a compact record, in place (verifyStored) and decoded
// (Verify), gives the same result both ways, against full and compact
// queries; and it equals the exact Jaccard of the full sets on these
// corpora: two of the 2×200 distinct random ids share a top half with
// probability at most C(400,2)·2^-32 < 2·10^-5 per pair of documents, so
// over the 36 pairs compared here a difference has probability < 10^-3
// (and the fixed seed makes the test deterministic).
func TestVerifyCompact(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(64, 3, lsh.Banding(4, 16), 0.7))
	_, sets := corpus(1, []float64{0.95, 0.85, 0.8, 0.75, 0.7, 0.5}, 11)
	var full, short []*Doc
	for i, s := range sets {
		d := mkDoc(t, x, string(rune('a'+i)), s, true)
		full = append(full, d)
		short = append(short, compactOf(d))
	}
	var s stored
	for bi, b := range short {
		rec, _ := AppendDoc(nil, b)
		if err := s.load(rec); err != nil {
			t.Fatal(err)
		}
		if !s.fast {
			t.Fatal("a compact record is not verified in place")
		}
		for ai := range full {
			for _, a := range []*Doc{full[ai], short[ai]} {
				want, wok, _ := x.Verify(a, b)
				got, gok, err := x.verifyStored(a, &s)
				if err != nil || got != want || gok != wok {
					t.Fatalf("%s against %s: verifyStored %+v %v %v, Verify %+v %v", a.Name, b.Name, got, gok, err, want, wok)
				}
				exact := sketch.ExactJaccard(full[ai].Features, full[bi].Features)
				if got.Exact != exact {
					t.Fatalf("%s against %s: compact Jaccard %v, exact %v", a.Name, b.Name, got.Exact, exact)
				}
			}
			// Compact against full in memory, either order.
			if c, _, _ := x.Verify(full[bi], short[ai]); c.Exact != sketch.ExactJaccard(full[ai].Features, full[bi].Features) {
				t.Fatalf("Verify(full %s, compact %s) = %v", full[bi].Name, short[ai].Name, c.Exact)
			}
		}
	}
}

// NewDoc keeps the ids of a short document in short form when features
// are not asked for, and drops those of a long one; TrimFeatures agrees.
func TestNewDocKeepsShortFeatures(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), Config{Sketch: sample.Config{K: 16}, LSH: lsh.Banding(2, 8)})
	s := rng.New(5)
	mk := func(n int) *sample.Sketched {
		sk := &sample.Sketched{Values: make([]uint64, 16), Size: float64(n)}
		for i := range sk.Values {
			sk.Values[i] = s.Uint64()
		}
		for range n {
			sk.Features = append(sk.Features, feature.Feature{ID: s.Uint64(), Weight: 1})
		}
		return sk
	}
	// 16 samples of 8 bytes: up to 32 ids of 4 bytes.
	short, long := x.NewDoc("s", mk(32), false), x.NewDoc("l", mk(33), false)
	if !short.Compact || len(short.Features) != 32 || !slices.IsSorted(short.Features) {
		t.Fatalf("short document: compact %v, %d ids", short.Compact, len(short.Features))
	}
	for _, f := range short.Features {
		if f&^topHalf != 0 {
			t.Fatalf("compact id %#x keeps its low half", f)
		}
	}
	if long.Features != nil || long.Compact {
		t.Fatalf("long document keeps %d ids", len(long.Features))
	}
	if all := x.NewDoc("a", mk(33), true); all.Compact || len(all.Features) != 33 {
		t.Fatalf("features asked for: compact %v, %d ids", all.Compact, len(all.Features))
	}
	d := x.NewDoc("t", mk(32), true)
	d.TrimFeatures()
	if !d.Compact || len(d.Features) != 32 {
		t.Fatal("TrimFeatures dropped a short set")
	}
	d = x.NewDoc("u", mk(40), true)
	if d.TrimFeatures(); d.Features != nil || d.Compact {
		t.Fatal("TrimFeatures kept a long set")
	}
}
