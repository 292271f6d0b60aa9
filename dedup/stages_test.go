package dedup

import (
	"bufio"
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/sketch"
)

// streamOf encodes documents and marks as a stage file's stream.
func streamOf(t testing.TB, docs []Doc, xs []streamDoc, marks []streamMark) ([]byte, int64) {
	var buf bytes.Buffer
	st := &stages{sw: bufio.NewWriter(&buf)}
	k := 0
	for _, m := range marks {
		for ; k < len(docs) && docs[k].Seq < m.at; k++ {
			st.writeDoc(&docs[k], &xs[k])
		}
		st.writeMark(m)
	}
	for ; k < len(docs); k++ {
		st.writeDoc(&docs[k], &xs[k])
	}
	if err := st.sw.Flush(); err != nil {
		t.Fatal(err)
	}
	if st.soff != int64(buf.Len()) {
		t.Fatalf("stream offset %d, %d bytes", st.soff, buf.Len())
	}
	return buf.Bytes(), st.items
}

// The stream decodes to what was encoded: documents (with and without
// feature sets, weighted or not) in their places among rejected records
// and input ends.
func TestStreamRoundTrip(t *testing.T) {
	hdr := sketch.Header{Algorithm: sketch.OPH, K: 4, Bits: 64}
	var xs []streamDoc
	doc := func(seq int, name string, f []uint64, w []feature.Feature) Doc {
		p := recordPlace{path: "in/a.jsonl", line: int64(seq + 1), offset: int64(100 * seq)}
		xs = append(xs, streamDoc{nvals: 4, size: float64(len(f)), place: p, feats: featureSet{features: f, weighted: w}})
		return Doc{Seq: seq, Name: name, Bytes: 10 * seq, Key: "k" + name, Fingerprint: identity.Fingerprint{Hi: uint64(seq) << 40, Lo: ^uint64(seq), Len: uint64(10 * seq)}, ExactOf: -1, Shingles: len(f) + len(w)}
	}
	docs := []Doc{doc(0, "a", []uint64{3, 9, 1 << 60}, nil), doc(1, "b", nil, nil), doc(3, "c", nil, []feature.Feature{{ID: 7, Weight: 0.5}}), doc(4, "d", []uint64{}, nil)}
	marks := []streamMark{
		{at: 1, rej: &corpus.RecordError{Path: "in/a.jsonl", Line: 2, Offset: -1, Reason: corpus.ReasonBadJSON, Err: errors.New("bad"), Count: 3, Fields: []string{"x"}}},
		{at: 2, rej: &corpus.RecordError{ID: "a", Path: "in/a.jsonl", Line: 3, Offset: 200, Reason: ReasonDuplicateID, Err: errors.New("id \"a\" already used by in/a.jsonl:1")}},
		{at: 3, end: &InputEnd{Input: 0, Warnings: 2, Skipped: 1}},
		{at: 5, end: &InputEnd{Input: 1}},
	}
	b, n := streamOf(t, docs, xs, marks)
	var got []Doc
	var gotXs []streamDoc
	var gotMarks []streamMark
	err := readStream(bytes.NewReader(b), n, hdr, func(it *streamItem) error {
		switch {
		case it.doc != nil:
			got = append(got, *it.doc)
			gotXs = append(gotXs, it.x)
		case it.rej != nil:
			gotMarks = append(gotMarks, streamMark{at: it.at, rej: it.rej})
		default:
			gotMarks = append(gotMarks, streamMark{at: -1, end: it.end})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, docs) || !reflect.DeepEqual(gotXs, xs) {
		t.Fatalf("documents:\n got %+v %+v\nwant %+v %+v", got, gotXs, docs, xs)
	}
	if len(gotMarks) != len(marks) {
		t.Fatalf("%d marks, want %d", len(gotMarks), len(marks))
	}
	for i, m := range marks {
		g := gotMarks[i]
		if m.rej != nil && (g.rej == nil || g.at != m.at || g.rej.Error() != m.rej.Error() || g.rej.Records() != m.rej.Records() || !reflect.DeepEqual(g.rej.Fields, m.rej.Fields)) {
			t.Errorf("mark %d: got %+v, want %+v", i, g.rej, m.rej)
		}
		if m.end != nil && (g.end == nil || *g.end != *m.end) {
			t.Errorf("mark %d: got %+v, want %+v", i, g.end, m.end)
		}
	}
	// Every truncation is an error, never a panic.
	for l := range len(b) {
		if err := readStream(bytes.NewReader(b[:l]), n, hdr, func(*streamItem) error { return nil }); err == nil {
			t.Fatalf("stream cut at %d of %d bytes read without error", l, len(b))
		}
	}
}

// A damaged stage file is an error, never a panic or a huge allocation.
func FuzzReadStream(f *testing.F) {
	hdr := sketch.Header{Algorithm: sketch.OPH, K: 4, Bits: 64}
	d := Doc{Seq: 0, Name: "a", Bytes: 3, ExactOf: -1, Shingles: 2}
	x := streamDoc{nvals: 4, feats: featureSet{features: []uint64{1, 5}}}
	b, _ := streamOf(f, []Doc{d}, []streamDoc{x}, []streamMark{{at: 1, end: &InputEnd{Input: 0}}, {at: 1, rej: &corpus.RecordError{Reason: "bad-json", Offset: -1}}})
	f.Add(b)
	f.Add([]byte("D\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		readStream(bytes.NewReader(b), 8, hdr, func(*streamItem) error { return nil })
	})
}
