package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// appendV2 is the record encoding of the previous release (delta-coded
// feature ids), kept here to check that such records still decode and
// verify.
func appendV2(dst []byte, d *Doc) []byte {
	dst = append(dst, recordV2)
	dst = appendUvarint(dst, uint64(len(d.Name)))
	dst = append(dst, d.Name...)
	var flags byte
	if d.HasFingerprint {
		flags |= recFingerprint
	}
	if d.Features != nil {
		flags |= recFeatures
	}
	if d.Weighted != nil {
		flags |= recWeighted
	}
	dst = append(dst, flags)
	if d.HasFingerprint {
		dst = binary.LittleEndian.AppendUint64(dst, d.Fingerprint.Lo) // a 64-bit fingerprint then
	}
	enc, _ := d.Sketch.AppendBinary(nil)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(enc)))
	dst = append(dst, enc...)
	if d.Features != nil {
		dst = appendUvarint(dst, uint64(len(d.Features)))
		prev := uint64(0)
		for _, f := range d.Features {
			dst = appendUvarint(dst, f-prev)
			prev = f
		}
	}
	if d.Weighted != nil {
		dst = appendUvarint(dst, uint64(len(d.Weighted)))
		prev := uint64(0)
		for _, f := range d.Weighted {
			dst = appendUvarint(dst, f.ID-prev)
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f.Weight))
			prev = f.ID
		}
	}
	return dst
}

func TestRecordV2(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(16, 3, lsh.Banding(2, 8), 0))
	_, sets := corpus(1, nil, 4)
	d := mkDoc(t, x, "v2", sets[0], true)
	w := &Doc{Name: "weighted", Sketch: d.Sketch, Weighted: []feature.Feature{{ID: 3, Weight: 0.5}, {ID: 1 << 60, Weight: 2}}}
	for _, d := range []*Doc{d, w} {
		rec := appendV2(nil, d)
		got, err := DecodeDoc(rec)
		// A 64-bit fingerprint of then is kept, and identifies nothing.
		if err != nil || got.Name != d.Name || got.HasFingerprint || got.hasLegacy != d.HasFingerprint || (d.HasFingerprint && got.legacy != d.Fingerprint.Lo) ||
			!slices.Equal(got.Features, d.Features) || !slices.Equal(got.Weighted, d.Weighted) || !slices.Equal(got.Sketch.Values, d.Sketch.Values) {
			t.Fatalf("v2 record: %+v %v", got, err)
		}
		if again, err := AppendDoc(nil, got); err != nil || !bytes.Equal(again[2+len(d.Name):][:9], rec[2+len(d.Name):][:9]) {
			t.Fatalf("v2 record rewritten: the legacy fingerprint is not kept: %x %v", again, err)
		}
		for n := 0; n < len(rec); n++ {
			if _, err := DecodeDoc(rec[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("truncated v2 record of %d/%d bytes: %v", n, len(rec), err)
			}
		}
	}
}

// verifyStored, which reads a version 3 record's feature ids in place,
// gives exactly Verify's result for every kind of record: versions 1, 2
// and 3, with and without features, with repeated ids, at similarities
// across the threshold.
func TestVerifyStored(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(64, 3, lsh.Banding(4, 16), 0.7))
	_, sets := corpus(4, []float64{0.95, 0.8, 0.7, 0.6, 0.3}, 9)
	var docs []*Doc
	for i, s := range sets {
		docs = append(docs, mkDoc(t, x, string(rune('a'+i%26))+"doc", s, i%7 != 3))
	}
	// A set with repeated ids (Overlap ignores repeats) and an empty one.
	rep := slices.Clone(sets[0])
	rep = append(rep, rep[:10]...)
	slices.Sort(rep)
	docs = append(docs, &Doc{Name: "repeats", Sketch: docs[0].Sketch, Features: rep},
		&Doc{Name: "empty", Sketch: docs[0].Sketch, Features: []uint64{}})
	encoders := map[string]func(*Doc) []byte{
		"v1": func(d *Doc) []byte { return appendV1(nil, d) },
		"v2": func(d *Doc) []byte { return appendV2(nil, d) },
		"v3": func(d *Doc) []byte { rec, _ := AppendDoc(nil, d); return rec },
	}
	var s stored
	for name, enc := range encoders {
		for _, b := range docs {
			rec := enc(b)
			if err := s.load(rec); err != nil {
				t.Fatal(err)
			}
			if got := s.name(); got != b.Name {
				t.Fatalf("%s: name %q, want %q", name, got, b.Name)
			}
			if s.fast != (name == "v3") {
				t.Fatalf("%s: fast path %v", name, s.fast)
			}
			for _, a := range docs {
				want, wok, werr := x.Verify(a, b)
				got, gok, gerr := x.verifyStored(a, &s)
				if got != want || gok != wok || (gerr == nil) != (werr == nil) {
					t.Fatalf("%s: %s against %s: verifyStored %+v %v %v, Verify %+v %v %v", name, a.Name, b.Name, got, gok, gerr, want, wok, werr)
				}
			}
		}
	}
}

// A version 3 record whose ids are out of order is corrupt, both to
// DecodeDoc and to the query path's in-place verification.
func TestRecordV3OutOfOrder(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(16, 3, lsh.Banding(2, 8), 0))
	_, sets := corpus(1, nil, 4)
	d := mkDoc(t, x, "x", sets[0], true)
	rec, err := AppendDoc(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	// Swap the last two ids.
	n := len(rec)
	last, prev := slices.Clone(rec[n-8:]), slices.Clone(rec[n-16:n-8])
	copy(rec[n-16:], last)
	copy(rec[n-8:], prev)
	if _, err := DecodeDoc(rec); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("DecodeDoc: %v, want ErrCorrupt", err)
	}
	var s stored
	if err := s.load(rec); err != nil {
		t.Fatal(err) // parse does not read the ids
	}
	if _, _, err := x.verifyStored(d, &s); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("verifyStored: %v, want ErrCorrupt", err)
	}
}
