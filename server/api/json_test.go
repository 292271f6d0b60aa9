package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// jsonDecode is the slow path: encoding/json as decode runs it.
func jsonDecode(body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

// FuzzDecodeFast: whatever the fast decoder accepts, encoding/json
// accepts too and decodes to the same value — a request as the server
// decodes it (unknown fields refused, jsonDecode), a reply as the client
// does (json.Unmarshal). kind picks the type.
func FuzzDecodeFast(f *testing.F) {
	types := []func() any{
		func() any { return new(AddRequest) }, func() any { return new(QueryRequest) }, func() any { return new(CollapseRequest) },
		func() any { return new(AddResponse) }, func() any { return new(QueryResponse) }, func() any { return new(CollapseResponse) },
	}
	for _, v := range []any{
		QueryResponse{Results: []QueryResult{{ID: "q<1>", Matches: []Match{{ID: "a", Similarity: 0.93, Estimate: 0.9, StdErr: 1.2e-7, Exact: true}}}, {ID: "q2", Matches: []Match{}}}},
		AddResponse{Results: []AddResult{{ID: "x\u2028", Added: true, Matches: []Match{{ID: "é", Similarity: 1, Estimate: 0.5, StdErr: 0.01}}}}, Added: 3},
		CollapseRequest{IDs: []string{"a", "b<>", "é\u2028"}},
		CollapseResponse{Kept: []string{"a"}, Collapsed: []Collapsed{{ID: "b", Into: "a"}}, Unknown: []string{}},
	} {
		b, _ := json.Marshal(v)
		for k := range types {
			f.Add(uint8(k), b)
		}
	}
	for _, s := range []string{
		`{"documents": [{"id": "a", "text": "one two three"}]}`,
		`{"documents":[{"id":"a","text":"x","html":true},{"text":"y\u00e9\ud83d\ude00\ud800z","id":"b\\\"c"}],"if_new":false}`,
		`{"documents": [], "if_new": true}`, ` { } `, `{"documents": [{"ID": "a"}]}`,
		`{"documents": [{"id": "a", "id": "b"}]}`, `{"documents": null}`, `{"documents": [{"id": "\ud83d\u0041"}]}`,
		"{\"documents\": [{\"id\": \"\xff\"}]}", `{"documents": [{"id": "a\/b\b\f\n\r\t"}]} x`,
		`{"results":[],"added":-0}`, `{"results":null}`, `{"added":1e2}`, `{"results":[{"matches":[{"similarity":-0.0e+1}]}]}`,
		`{"results":[{"matches":[{"similarity":01}]}]}`, `{"results":[{"matches":[{"similarity":1.}]}]}`, `{"added":99999999999999999999}`,
		`{"results":[{"matches":[{"estimate":1e400}]}]}`, `{"Results":[]}`,
		`{"ids":[]}`, `{"ids":null}`, `{"ids":["a","a"],"ids":[]}`, `{"kept":[],"collapsed":[{"into":"x","id":"y"}]}`, `{"IDs":["a"]}`,
		"{\"ids\":[\"\xa9\\b0000\"]}", // a high byte before the first escape
	} {
		for k := range types {
			f.Add(uint8(k), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		k := int(kind) % len(types)
		fast, slow := types[k](), types[k]()
		if !DecodeFast(body, fast) {
			return
		}
		var err error
		if k < 3 {
			if !jsonDecode(body, slow) {
				err = errors.New("refused")
			}
		} else {
			err = json.Unmarshal(body, slow)
		}
		if err != nil {
			t.Fatalf("%q: fast path accepted what encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, slow)
		}
	})
}

// TestDecodeFastTakesWhatIsSent: the bodies the Go client sends and the
// replies the server writes (json.Marshal's bytes, as AppendJSON writes
// them) take the fast path and decode to what was sent.
func TestDecodeFastTakesWhatIsSent(t *testing.T) {
	docs := []Document{{ID: "a<b>&", Text: "plain \"text\"\n\u2028 é 😀"}, {ID: "b", Text: "<html>x</html>", HTML: true}}
	for _, v := range []any{
		AddRequest{Documents: docs, IfNew: true}, QueryRequest{Documents: docs}, CollapseRequest{IDs: []string{"a", "b"}},
		QueryResponse{Results: []QueryResult{{ID: "q", Matches: []Match{{ID: "a", Similarity: 0.93, Estimate: 0.9, StdErr: 1e-9, Exact: true}}}, {ID: "q2", Matches: []Match{}}}},
		AddResponse{Results: []AddResult{{ID: "x", Added: true, Matches: []Match{}}}, Added: 1},
		CollapseResponse{Kept: []string{"a"}, Collapsed: []Collapsed{{ID: "b", Into: "a"}}, Unknown: []string{}},
	} {
		b, err := AppendJSON(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(v))
		if !DecodeFast(b, got.Interface()) {
			t.Fatalf("%s: not on the fast path", b)
		}
		if !reflect.DeepEqual(got.Elem().Interface(), v) {
			t.Fatalf("%s: decoded %+v", b, got.Elem().Interface())
		}
	}
}

// checkAppendJSON checks that AppendJSON(v) writes json.Marshal(v).
func checkAppendJSON(t *testing.T, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := AppendJSON(nil, v)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%+v:\n got %s, %v\nwant %s", v, got, err, want)
	}
}

// TestAppendJSON: the hand-written encoders write json.Marshal's bytes,
// for ids that need escaping and numbers in every format.
func TestAppendJSON(t *testing.T) {
	r := rng.New(3)
	ids := []string{"a", "", "doc-17", "<&>", "quote\"back\\slash", "ctl\x01\n", "é😀", "\u2028", "bad\xffutf8"}
	floats := []float64{0, 1, 0.5, 1e-7, 3.2e-9, 1e-6, 0.123456789, 1e21, 1e20, -0.0, math.SmallestNonzeroFloat64}
	for range 300 {
		var ms []Match
		if r.Intn(4) > 0 {
			ms = []Match{}
			for range r.Intn(4) {
				f := func() float64 {
					if r.Intn(2) == 0 {
						return floats[r.Intn(uint64(len(floats)))]
					}
					return r.Float64()
				}
				ms = append(ms, Match{ID: ids[r.Intn(uint64(len(ids)))], Similarity: f(), Estimate: f(), StdErr: f(), Exact: r.Intn(2) == 0})
			}
		}
		id := ids[r.Intn(uint64(len(ids)))]
		for _, v := range []any{
			QueryResponse{Results: []QueryResult{{ID: id, Matches: ms}, {ID: "x", Matches: []Match{}}}},
			QueryResponse{},
			AddResponse{Results: []AddResult{{ID: id, Added: r.Intn(2) == 0, Matches: ms}}, Added: int(r.Intn(5))},
			AddResponse{},
		} {
			checkAppendJSON(t, v)
		}
	}
	if _, err := AppendJSON(nil, QueryResponse{Results: []QueryResult{{Matches: []Match{{Similarity: math.NaN()}}}}}); err == nil {
		t.Fatal("NaN encoded")
	}
}

// FuzzAppendString: a string is written as json.Marshal writes it, bytes
// for bytes (escapes, invalid UTF-8, U+2028, the eight-byte fast path at
// every alignment).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text of some length", "a<b>&c\"d\\e", "ctl\x01\x1f\b\f\n\r\t",
		"é😀\u2028\u2029", "bad\xff\xfe utf8 \xe2\x82", "0123456789abcdef<", "\x7f\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), s); !bytes.Equal(got[1:], want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got[1:], want)
		}
	})
}

// The requests the client sends are written as json.Marshal writes them.
func TestAppendJSONRequests(t *testing.T) {
	docs := []Document{{ID: "a<b>&", Text: "plain \"text\"\n\u2028 é 😀 \xff"}, {ID: "b", Text: "<html>x</html>", HTML: true}, {}}
	for _, v := range []any{
		AddRequest{Documents: docs, IfNew: true}, AddRequest{Documents: docs}, AddRequest{}, &AddRequest{Documents: docs[:1]},
		QueryRequest{Documents: docs}, QueryRequest{}, QueryRequest{Documents: []Document{}}, &QueryRequest{Documents: docs},
		QueryRequest{Sketches: []Sketch{{ID: "s", Sketch: []byte{1, 2}}}}, (*QueryRequest)(nil),
	} {
		checkAppendJSON(t, v)
	}
}

// BenchmarkClientJSON: a client's side of a query request of 16 documents
// of 300 words (encoding the request, decoding the reply), by hand and by
// encoding/json.
func BenchmarkClientJSON(b *testing.B) {
	r := rng.New(1)
	words := []string{"the", "near", "duplicate", "crawler", "index", "sketch", "of", "pages", "shingle", "minhash"}
	var docs []Document
	var res []QueryResult
	for i := range 16 {
		text := make([]byte, 0, 2400)
		for w := range 300 {
			if w > 0 {
				text = append(text, ' ')
			}
			text = append(text, words[r.Intn(uint64(len(words)))]...)
		}
		docs = append(docs, Document{ID: "doc-" + string(rune('a'+i)), Text: string(text)})
		res = append(res, QueryResult{ID: docs[i].ID, Matches: []Match{{ID: "stored-1", Similarity: 0.9123, Estimate: 0.9, StdErr: 0.0265, Exact: true}}})
	}
	req := QueryRequest{Documents: docs}
	reply, _ := json.Marshal(QueryResponse{Results: res})
	b.Run("fast", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = AppendJSON(buf[:0], req)
			var out QueryResponse
			if !DecodeFast(reply, &out) {
				b.Fatal("not on the fast path")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(req); err != nil {
				b.Fatal(err)
			}
			var out QueryResponse
			if err := json.Unmarshal(reply, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Collapse bodies are written as json.Marshal writes them.
func TestAppendJSONCollapse(t *testing.T) {
	for _, v := range []any{
		CollapseRequest{IDs: []string{"a", "<b>", "\xff"}}, CollapseRequest{}, &CollapseRequest{IDs: []string{}},
		CollapseResponse{Kept: []string{"a"}, Collapsed: []Collapsed{{ID: "b&", Into: "a"}, {}}, Unknown: []string{"z"}},
		CollapseResponse{}, &CollapseResponse{Kept: []string{}, Collapsed: []Collapsed{}, Unknown: []string{}},
	} {
		checkAppendJSON(t, v)
	}
}
