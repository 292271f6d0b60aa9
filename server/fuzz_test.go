package server_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/neardup/neardup/server"
)

// FuzzRequests sends arbitrary bodies to every JSON endpoint: the server
// must answer 200 or a 4xx with a JSON body, never panic or 5xx.
func FuzzRequests(f *testing.F) {
	for _, s := range []string{
		`{"documents": [{"id": "a", "text": "one two three four five six"}]}`,
		`{"documents": [{"id": "a", "text": "x"}], "if_new": true}`,
		`{"sketches": [{"id": "s", "sketch": "AQID"}]}`,
		`{"ids": ["a", "b", "a"]}`,
		`{"documents": [{"id": "", "text": 5}]}`,
		`[]`, `null`, `{"ids": null}`, "\x00", `{"documents": [{"id": "a\u0000", "text": "\ud800"}]}`,
	} {
		for p := range 3 {
			f.Add(uint8(p), []byte(s))
		}
	}
	srv := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, path uint8, body []byte) {
		target := []string{"/v1/documents", "/v1/query", "/v1/collapse"}[int(path)%3]
		req := httptest.NewRequest("POST", target, bytes.NewReader(body))
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		if w.Code >= 500 || w.Code != 200 && w.Code < 400 {
			t.Fatalf("POST %s %q: status %d %s", target, body, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("POST %s %q: reply is not JSON: %s", target, body, w.Body)
		}
	})
}

func newFuzzServer(t testing.TB) *server.Server {
	st := openStore(t, "pebble", "")
	b, err := server.OpenIndex(st, server.IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(b, server.Options{MaxDocuments: 8, MaxBodyBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
