package server

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/server/api"
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

// FuzzFastDecode: whatever the fast decoder accepts, encoding/json
// accepts too and decodes to the same value.
func FuzzFastDecode(f *testing.F) {
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
			fast, slow = new(api.AddRequest), new(api.AddRequest)
		} else {
			fast, slow = new(api.QueryRequest), new(api.QueryRequest)
		}
		if !fastDecode(body, fast) {
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

// TestFastDecodeTakesPlainBodies: the bodies the Go client sends take the
// fast path.
func TestFastDecodeTakesPlainBodies(t *testing.T) {
	docs := []api.Document{{ID: "a<b>&", Text: "plain \"text\"\n\u2028 é 😀"}, {ID: "b", Text: "<html>x</html>", HTML: true}}
	for _, v := range []any{api.AddRequest{Documents: docs, IfNew: true}, api.QueryRequest{Documents: docs}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(v))
		if !fastDecode(b, got.Interface()) {
			t.Fatalf("%s: not on the fast path", b)
		}
		if !reflect.DeepEqual(got.Elem().Interface(), v) {
			t.Fatalf("%s: decoded %+v", b, got.Elem().Interface())
		}
	}
}

// TestFastEncode: the hand-written encoders write json.Marshal's bytes,
// for ids that need escaping and numbers in every format.
func TestFastEncode(t *testing.T) {
	r := rng.New(3)
	ids := []string{"a", "", "doc-17", "<&>", "quote\"back\\slash", "ctl\x01\n", "é😀", "\u2028", "bad\xffutf8"}
	floats := []float64{0, 1, 0.5, 1e-7, 3.2e-9, 1e-6, 0.123456789, 1e21, 1e20, -0.0, math.SmallestNonzeroFloat64}
	for range 300 {
		var ms []api.Match
		if r.Intn(4) > 0 {
			ms = []api.Match{}
			for range r.Intn(4) {
				f := func() float64 {
					if r.Intn(2) == 0 {
						return floats[r.Intn(uint64(len(floats)))]
					}
					return r.Float64()
				}
				ms = append(ms, api.Match{ID: ids[r.Intn(uint64(len(ids)))], Similarity: f(), Estimate: f(), StdErr: f(), Exact: r.Intn(2) == 0})
			}
		}
		id := ids[r.Intn(uint64(len(ids)))]
		for _, v := range []any{
			api.QueryResponse{Results: []api.QueryResult{{ID: id, Matches: ms}, {ID: "x", Matches: []api.Match{}}}},
			api.QueryResponse{},
			api.AddResponse{Results: []api.AddResult{{ID: id, Added: r.Intn(2) == 0, Matches: ms}}, Added: int(r.Intn(5))},
			api.AddResponse{},
		} {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshal(nil, v)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%+v:\n got %s, %v\nwant %s", v, got, err, want)
			}
		}
	}
	if _, err := marshal(nil, api.QueryResponse{Results: []api.QueryResult{{Matches: []api.Match{{Similarity: math.NaN()}}}}}); err == nil {
		t.Fatal("NaN encoded")
	}
}
