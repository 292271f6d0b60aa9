package api

import (
	"bytes"
	"encoding/json"
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
// accepts too and decodes to the same value.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{
		`{"documents": [{"id": "a", "text": "one two three"}]}`,
		`{"documents":[{"id":"a","text":"x","html":true},{"text":"y\u00e9\ud83d\ude00\ud800z","id":"b\\\"c"}],"if_new":false}`,
		`{"documents": [], "if_new": true}`, ` { } `, `{"documents": [{"ID": "a"}]}`,
		`{"documents": [{"id": "a", "id": "b"}]}`, `{"documents": null}`, `{"documents": [{"id": "\ud83d\u0041"}]}`,
		"{\"documents\": [{\"id\": \"\xff\"}]}", `{"documents": [{"id": "a\/b\b\f\n\r\t"}]} x`,
	} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, add bool, body []byte) {
		var fast, slow any
		if add {
			fast, slow = new(AddRequest), new(AddRequest)
		} else {
			fast, slow = new(QueryRequest), new(QueryRequest)
		}
		if !DecodeFast(body, fast) {
			return
		}
		if !jsonDecode(body, slow) {
			t.Fatalf("%q: fast path accepted what encoding/json refuses", body)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, slow)
		}
	})
}

// TestDecodeFastTakesPlainBodies: the bodies the Go client sends take the
// fast path.
func TestDecodeFastTakesPlainBodies(t *testing.T) {
	docs := []Document{{ID: "a<b>&", Text: "plain \"text\"\n\u2028 é 😀"}, {ID: "b", Text: "<html>x</html>", HTML: true}}
	for _, v := range []any{AddRequest{Documents: docs, IfNew: true}, QueryRequest{Documents: docs}} {
		b, err := json.Marshal(v)
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
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := AppendJSON(nil, v)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%+v:\n got %s, %v\nwant %s", v, got, err, want)
			}
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
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendJSON(nil, v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n got %s, %v\nwant %s", v, got, err, want)
		}
	}
}

// FuzzDecodeFastReplies: whatever the fast decoder accepts as a reply,
// json.Unmarshal (as the client decodes) accepts and decodes to the same.
func FuzzDecodeFastReplies(f *testing.F) {
	for _, v := range []any{
		QueryResponse{Results: []QueryResult{{ID: "q<1>", Matches: []Match{{ID: "a", Similarity: 0.93, Estimate: 0.9, StdErr: 1.2e-7, Exact: true}}}, {ID: "q2", Matches: []Match{}}}},
		AddResponse{Results: []AddResult{{ID: "x\u2028", Added: true, Matches: []Match{{ID: "é", Similarity: 1, Estimate: 0.5, StdErr: 0.01}}}}, Added: 3},
	} {
		b, _ := json.Marshal(v)
		f.Add(false, b)
		f.Add(true, b)
	}
	for _, s := range []string{`{"results":[],"added":-0}`, `{"results":null}`, `{"added":1e2}`, `{"results":[{"matches":[{"similarity":-0.0e+1}]}]}`,
		`{"results":[{"matches":[{"similarity":01}]}]}`, `{"results":[{"matches":[{"similarity":1.}]}]}`, `{"added":99999999999999999999}`,
		`{"results":[{"matches":[{"estimate":1e400}]}]}`, `{"Results":[]}`} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, add bool, body []byte) {
		var fast, slow any
		if add {
			fast, slow = new(AddResponse), new(AddResponse)
		} else {
			fast, slow = new(QueryResponse), new(QueryResponse)
		}
		if !DecodeFast(body, fast) {
			return
		}
		if err := json.Unmarshal(body, slow); err != nil {
			t.Fatalf("%q: fast path accepted what encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, slow)
		}
	})
}

// The replies the server writes take the fast path in the client.
func TestDecodeFastTakesReplies(t *testing.T) {
	for _, v := range []any{
		QueryResponse{Results: []QueryResult{{ID: "q", Matches: []Match{{ID: "a", Similarity: 0.93, Estimate: 0.9, StdErr: 1e-9, Exact: true}}}, {ID: "q2", Matches: []Match{}}}},
		AddResponse{Results: []AddResult{{ID: "x", Added: true, Matches: []Match{}}}, Added: 1},
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

// FuzzDecodeFastCollapse: a collapse request (as the server decodes it,
// unknown fields refused) and a collapse reply (as the client decodes it)
// that the fast path accepts decode as with encoding/json.
func FuzzDecodeFastCollapse(f *testing.F) {
	for _, v := range []any{
		CollapseRequest{IDs: []string{"a", "b<>", "é\u2028"}},
		CollapseResponse{Kept: []string{"a"}, Collapsed: []Collapsed{{ID: "b", Into: "a"}}, Unknown: []string{}},
	} {
		b, _ := json.Marshal(v)
		f.Add(false, b)
		f.Add(true, b)
	}
	for _, s := range []string{`{"ids":[]}`, `{"ids":null}`, `{"ids":["a","a"],"ids":[]}`, `{"kept":[],"collapsed":[{"into":"x","id":"y"}]}`, `{"IDs":["a"]}`} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, reply bool, body []byte) {
		if !reply {
			var fast, slow CollapseRequest
			if !DecodeFast(body, &fast) {
				return
			}
			if !jsonDecode(body, &slow) || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, slow)
			}
			return
		}
		var fast, slow CollapseResponse
		if !DecodeFast(body, &fast) {
			return
		}
		if err := json.Unmarshal(body, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v (%v)", body, fast, slow, err)
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
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendJSON(nil, v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n got %s, %v\nwant %s", v, got, err, want)
		}
		back := reflect.New(reflect.TypeOf(v))
		if reflect.TypeOf(v).Kind() == reflect.Pointer {
			back = reflect.New(reflect.TypeOf(v).Elem())
		}
		if v, ok := v.(CollapseResponse); ok && v.Kept != nil && !DecodeFast(got, back.Interface()) {
			t.Fatalf("%s: not on the fast path", got)
		}
	}
}
