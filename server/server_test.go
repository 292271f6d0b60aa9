package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store/redis/redistest"
)

// TestEndpoints exercises every endpoint's successful replies against a
// real server on each store: Pebble, redis-server, Redis Cluster.
func TestEndpoints(t *testing.T) {
	for _, kind := range backendKinds {
		t.Run(kind, func(t *testing.T) {
			if kind == "cluster" && testing.Short() {
				t.Skip("starts a cluster")
			}
			testEndpoints(t, serve(t, openStore(t, kind, ""), server.Options{}, nil))
		})
	}
}

func testEndpoints(t *testing.T, r *running) {
	ctx := context.Background()
	a, b, c := text(1, 300), text(2, 300), text(3, 300)
	a1, a2, c1 := edit(a, 1, 1), edit(a, 2, 3), edit(c, 3, 3)

	// Two unrelated documents: nothing found, both added.
	res, err := r.C.Add(ctx, []api.Document{doc("a", a), doc("b", b)}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if !x.Added || len(x.Matches) != 0 {
			t.Errorf("add %s: %+v", x.ID, x)
		}
	}
	// A near-duplicate: found before adding, added anyway without if_new.
	res, err = r.C.Add(ctx, []api.Document{doc("a1", a1)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Added || !slices.Equal(ids(res[0].Matches), []string{"a"}) || res[0].Matches[0].Similarity < 0.8 || !res[0].Matches[0].Exact {
		t.Errorf("add a1: %+v", res[0])
	}
	// if_new: a2 matches a and a1 and is not added; in one batch, c is
	// added and its near-duplicate c1 after it is not.
	res, err = r.C.Add(ctx, []api.Document{doc("a2", a2), doc("c", c), doc("c1", c1)}, true)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Added || len(res[0].Matches) != 2 || !res[1].Added || res[2].Added || !slices.Equal(ids(res[2].Matches), []string{"c"}) {
		t.Errorf("add if_new: %+v", res)
	}
	if _, err := r.C.Get(ctx, "a2"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a2 stored despite if_new: %v", err)
	}
	// Re-adding a document with its own id finds no match with itself.
	res, err = r.C.Add(ctx, []api.Document{doc("b", b)}, true)
	if err != nil || !res[0].Added || len(res[0].Matches) != 0 {
		t.Errorf("re-add b: %+v %v", res, err)
	}

	// Query by text.
	qr, err := r.C.Query(ctx, []api.Document{doc("q", a2), doc("q2", text(4, 300))})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(qr[0].Matches); len(got) != 2 || !slices.Contains(got, "a") || !slices.Contains(got, "a1") || len(qr[1].Matches) != 0 {
		t.Errorf("query: %+v", qr)
	}

	// Get, and query by the returned sketch.
	info, err := r.C.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != "a" || info.Samples != 128 || info.Features <= 0 {
		t.Errorf("get a: %+v", info)
	}
	qr, err = r.C.QuerySketches(ctx, []api.Sketch{{ID: "s", Sketch: info.Sketch}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(qr[0].Matches); qr[0].ID != "s" || len(got) == 0 || got[0] != "a" || qr[0].Matches[0].Similarity != 1 {
		t.Errorf("query by sketch: %+v", qr)
	}
	// A sketch made with another k: 400 naming the field.
	var sk sketch.Sketch
	if err := sk.UnmarshalBinary(info.Sketch); err != nil {
		t.Fatal(err)
	}
	sk.Header.K, sk.Values = 64, sk.Values[:64]
	bad, _ := sk.MarshalBinary()
	_, err = r.C.QuerySketches(ctx, []api.Sketch{{Sketch: info.Sketch}, {Sketch: bad}})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 400 || ce.Field != "sketches[1].sketch.k" || !strings.Contains(ce.Message, "64") {
		t.Errorf("query by mismatched sketch: %v", err)
	}

	// Collapse a ranked list: a1 collapses into a, c1 was never added
	// (unknown), b and c are kept.
	cr, err := r.C.Collapse(ctx, []string{"a", "b", "a1", "c", "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cr.Kept, []string{"a", "b", "c", "c1"}) || !slices.Equal(cr.Unknown, []string{"c1"}) ||
		len(cr.Collapsed) != 1 || cr.Collapsed[0] != (api.Collapsed{ID: "a1", Into: "a"}) {
		t.Errorf("collapse: %+v", cr)
	}

	// Delete, then 404 on get and on a second delete.
	if err := r.C.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.C.Get(ctx, "a"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if err := r.C.Remove(ctx, "a"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	qr, _ = r.C.Query(ctx, []api.Document{doc("q", a)})
	if got := ids(qr[0].Matches); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("query after delete: %v", got)
	}
	cr, _ = r.C.Collapse(ctx, []string{"a", "a1"})
	if !slices.Equal(cr.Kept, []string{"a", "a1"}) || !slices.Equal(cr.Unknown, []string{"a"}) {
		t.Errorf("collapse after delete: %+v", cr)
	}

	// Ids with slashes, spaces and percent signs travel escaped in paths.
	odd := "debian-copyright/a b%2F?#é"
	if _, err := r.C.Add(ctx, []api.Document{doc(odd, text(5, 50))}, false); err != nil {
		t.Fatal(err)
	}
	if info, err := r.C.Get(ctx, odd); err != nil || info.ID != odd {
		t.Errorf("get %q: %+v %v", odd, info, err)
	}
	if err := r.C.Remove(ctx, odd); err != nil {
		t.Errorf("remove %q: %v", odd, err)
	}

	st, err := r.C.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 6 || st.Removed != 2 || st.Threshold != 0.8 || !st.Durable || st.CollapseDocuments != 3 {
		t.Errorf("stats: %+v", st)
	}
	if err := r.C.Ready(ctx); err != nil {
		t.Errorf("ready: %v", err)
	}
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json", "/metrics"} {
		code, body := get(t, r.URL+path, "")
		if code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		if path == "/metrics" {
			for _, want := range []string{
				`neardup_http_request_duration_seconds_bucket{code="200",route="POST /v1/documents"`,
				`neardup_documents_total{op="added"} 6`,
				`neardup_documents_total{op="skipped"} 2`,
				`neardup_store_errors_total 0`,
				`neardup_http_request_duration_seconds_count{code="400",route="POST /v1/query"} 1`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		}
	}
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// raw sends a request as is and returns the status and the decoded error.
func raw(t *testing.T, method, url, contentType, token string, body io.Reader) (int, api.Error, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &e)
	return resp.StatusCode, e, resp.Header
}

// TestErrors checks every error reply (status, message and field) on each
// store, including a store failing under the server.
func TestErrors(t *testing.T) {
	for _, kind := range backendKinds {
		t.Run(kind, func(t *testing.T) {
			if kind == "cluster" && testing.Short() {
				t.Skip("starts a cluster")
			}
			testErrors(t, kind)
		})
	}
	// A request that outlives its timeout: 504.
	slow := serve(t, openStore(t, "pebble", ""), server.Options{RequestTimeout: 1}, &client.Options{MaxRetries: -1})
	_, err := slow.C.Add(context.Background(), []api.Document{doc("a", text(1, 50))}, false)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 504 {
		t.Errorf("timeout: %v", err)
	}
}

func testErrors(t *testing.T, kind string) {
	st := openStore(t, kind, "")
	r := serve(t, st, server.Options{MaxDocuments: 3, MaxIDs: 4, MaxBodyBytes: 4096, MaxIDBytes: 16}, nil)
	long := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name, method, path, ctype, body string
		code                            int
		msg, field                      string
	}{
		{"syntax", "POST", "/v1/documents", "application/json", `{"documents": [}`, 400, "invalid JSON at byte 16", ""},
		{"truncated", "POST", "/v1/documents", "", `{"documents": [`, 400, "ends in the middle", ""},
		{"empty body", "POST", "/v1/query", "", ``, 400, "empty request body", ""},
		{"type", "POST", "/v1/documents", "", `{"documents": [{"id": 5, "text": "x"}]}`, 400, "JSON number where a string is wanted", "documents.id"},
		{"unknown field", "POST", "/v1/documents", "", `{"docs": []}`, 400, `unknown field "docs"`, "docs"},
		{"trailing", "POST", "/v1/collapse", "", `{"ids": ["a"]} {}`, 400, "data after the top-level object", ""},
		{"no documents", "POST", "/v1/documents", "", `{"documents": []}`, 400, "documents: empty", "documents"},
		{"empty id", "POST", "/v1/documents", "", `{"documents": [{"id": "a", "text": ""}, {"id": "", "text": "x"}]}`, 400, "empty id", "documents[1].id"},
		{"long id", "POST", "/v1/query", "", `{"documents": [{"id": "` + strings.Repeat("i", 17) + `", "text": ""}]}`, 400, "id of 17 bytes, limit 16", "documents[0].id"},
		{"bad utf-8", "GET", "/v1/documents/a%FF", "", ``, 400, "id: id is not valid UTF-8", "id"},
		{"too many documents", "POST", "/v1/documents", "", `{"documents": [{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"}]}`, 413, "4 in one request, limit 3", "documents"},
		{"too many ids", "POST", "/v1/collapse", "", `{"ids": ["a","b","c","d","e"]}`, 413, "5 in one request, limit 4", "ids"},
		{"no ids", "POST", "/v1/collapse", "", `{"ids": []}`, 400, "ids: empty", "ids"},
		{"body too large", "POST", "/v1/documents", "", `{"documents": [{"id": "a", "text": "` + long + `"}]}`, 413, "larger than 4096 bytes", ""},
		{"content type", "POST", "/v1/query", "text/plain", `{}`, 415, `Content-Type "text/plain"`, ""},
		{"if_new", "POST", "/v1/documents?if_new=maybe", "", `{"documents": [{"id": "a", "text": "x"}]}`, 400, `if_new="maybe"`, "if_new"},
		{"both kinds", "POST", "/v1/query", "", `{"documents": [{"id": "a", "text": "x"}], "sketches": [{"sketch": ""}]}`, 400, "one or the other", "sketches"},
		{"bad sketch", "POST", "/v1/query", "", `{"sketches": [{"sketch": "AAAA"}]}`, 400, "sketches[0].sketch", "sketches[0].sketch"},
		{"bad base64", "POST", "/v1/query", "", `{"sketches": [{"sketch": "!!"}]}`, 400, "invalid JSON", ""},
		{"missing", "GET", "/v1/documents/nope", "", ``, 404, `no document with id "nope"`, "id"},
		{"delete missing", "DELETE", "/v1/documents/nope", "", ``, 404, `no document with id "nope"`, "id"},
		{"no endpoint", "GET", "/v2/x", "", ``, 404, "no endpoint /v2/x", ""},
		{"method", "PUT", "/v1/query", "", `{}`, 405, "method PUT not allowed on /v1/query (allowed: POST)", ""},
		{"method with id", "POST", "/v1/documents/x", "", `{}`, 405, "allowed: GET, DELETE", ""},
	} {
		code, e, _ := raw(t, c.method, r.URL+c.path, c.ctype, "", strings.NewReader(c.body))
		if code != c.code || !strings.Contains(e.Error, c.msg) || e.Field != c.field {
			t.Errorf("%s: %d %q field %q, want %d %q field %q", c.name, code, e.Error, e.Field, c.code, c.msg, c.field)
		}
	}

	// A failing store: 500, counted in metrics; /readyz says 503.
	st.Close()
	code, e, _ := raw(t, "POST", r.URL+"/v1/documents", "", "", strings.NewReader(`{"documents": [{"id": "a", "text": "x y z"}]}`))
	if code != 500 || !strings.Contains(e.Error, "closed") {
		t.Errorf("closed store: %d %q", code, e.Error)
	}
	if code, body := get(t, r.URL+"/readyz", ""); code != 503 || !strings.Contains(body, "not ready") {
		t.Errorf("readyz on a closed store: %d %s", code, body)
	}
	if _, body := get(t, r.URL+"/metrics", ""); !strings.Contains(body, "neardup_store_errors_total 1") {
		t.Error("store error not counted")
	}
}

// TestAuth: with a token every /v1 route and /metrics need it; health and
// the API description do not.
func TestAuth(t *testing.T) {
	const token = "s3cret-token"
	r := serve(t, openStore(t, "pebble", ""), server.Options{Token: token}, &client.Options{Token: token})
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/documents"}, {"POST", "/v1/query"}, {"GET", "/v1/documents/x"}, {"DELETE", "/v1/documents/x"},
		{"POST", "/v1/collapse"}, {"GET", "/v1/stats"}, {"GET", "/metrics"},
	} {
		for _, tok := range []string{"", "wrong", token + "x", strings.ToUpper(token)} {
			code, e, h := raw(t, c.method, r.URL+c.path, "", tok, strings.NewReader("{}"))
			if code != 401 || !strings.Contains(e.Error, "bearer token") || h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with token %q: %d %q", c.method, c.path, tok, code, e.Error)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json"} {
		if code, _ := get(t, r.URL+path, ""); code != 200 {
			t.Errorf("GET %s without token: %d", path, code)
		}
	}
	if code, _ := get(t, r.URL+"/metrics", token); code != 200 {
		t.Errorf("metrics with token: %d", code)
	}
	if _, err := r.C.Add(context.Background(), []api.Document{doc("a", text(1, 20))}, false); err != nil {
		t.Errorf("add with token: %v", err)
	}
}

// TestTwoServersOneRedis: two servers on one Redis (and on one cluster)
// see each other's documents at once and agree on every query and
// collapse.
func TestTwoServersOneRedis(t *testing.T) {
	for _, kind := range []string{"redis", "cluster"} {
		t.Run(kind, func(t *testing.T) {
			if kind == "cluster" && testing.Short() {
				t.Skip("starts a cluster")
			}
			var url string
			if kind == "redis" {
				url = redistest.Start(t).URL()
			} else {
				url = redistest.StartCluster(t, 3).URL()
			}
			st1 := openStore(t, kind, url)
			prefix := st1.(interface{ Prefix() string }).Prefix()
			r1 := serve(t, st1, server.Options{}, nil)
			r2 := serve(t, openStore2(t, url, prefix), server.Options{}, nil)
			ctx := context.Background()
			var docs, queries []api.Document
			for i := range uint64(40) {
				base := text(100+i, 200)
				docs = append(docs, doc(fmtID("d", i), base))
				queries = append(queries, doc(fmtID("q", i), edit(base, i, 2)))
			}
			// Alternate adds between the servers; each sees the other's at once.
			for i, d := range docs {
				w, o := r1, r2
				if i%2 == 1 {
					w, o = r2, r1
				}
				if _, err := w.C.Add(ctx, []api.Document{d}, false); err != nil {
					t.Fatal(err)
				}
				if _, err := o.C.Get(ctx, d.ID); err != nil {
					t.Fatalf("%s added on one server, not seen on the other: %v", d.ID, err)
				}
			}
			q1, err := r1.C.Query(ctx, queries)
			if err != nil {
				t.Fatal(err)
			}
			q2, err := r2.C.Query(ctx, queries)
			if err != nil {
				t.Fatal(err)
			}
			for i := range queries {
				if !slices.Equal(ids(q1[i].Matches), ids(q2[i].Matches)) || len(q1[i].Matches) == 0 {
					t.Errorf("query %d: %v vs %v", i, ids(q1[i].Matches), ids(q2[i].Matches))
				}
			}
			// Collapse on both (each fills its table from the store for the
			// other's documents).
			if _, err := r1.C.Add(ctx, []api.Document{doc("d0-dup", edit(text(100, 200), 99, 1))}, false); err != nil {
				t.Fatal(err)
			}
			list := []string{"d0", "d1", "d0-dup", "d2"}
			c1, err := r1.C.Collapse(ctx, list)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := r2.C.Collapse(ctx, list)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c1.Kept, c2.Kept) || !slices.Equal(c1.Kept, []string{"d0", "d1", "d2"}) || len(c2.Unknown) != 0 {
				t.Errorf("collapse: %+v vs %+v", c1, c2)
			}
		})
	}
}

func fmtID(p string, i uint64) string { return fmt.Sprintf("%s%d", p, i) }

// TestTLS serves HTTPS on loopback with a certificate made for the test.
func TestTLS(t *testing.T) {
	cfg, pool := testCert(t)
	tr := &http.Transport{TLSClientConfig: cfg.Clone()}
	tr.TLSClientConfig.Certificates, tr.TLSClientConfig.RootCAs = nil, pool
	r := serve(t, openStore(t, "pebble", ""), server.Options{TLS: cfg, Token: "t"}, &client.Options{Token: "t", HTTPClient: &http.Client{Transport: tr}})
	if !strings.HasPrefix(r.URL, "https://") {
		t.Fatal(r.URL)
	}
	if _, err := r.C.Add(context.Background(), []api.Document{doc("a", text(1, 20))}, false); err != nil {
		t.Fatal(err)
	}
	// Plain HTTP on a TLS port fails.
	resp, err := http.Get(strings.Replace(r.URL, "https", "http", 1) + "/healthz")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && bytes.Contains(b, []byte("ok")) {
			t.Error("plain HTTP served on the TLS port")
		}
	}
}

// TestIfNewConcurrent: many clients add near-duplicates of one page with
// if_new at once; exactly one is added and every other reply names a
// near-duplicate (find-then-add is atomic within a server).
func TestIfNewConcurrent(t *testing.T) {
	r := serve(t, openStore(t, "pebble", ""), server.Options{}, nil)
	base := text(7, 300)
	var wg sync.WaitGroup
	var mu sync.Mutex
	added := 0
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.C.Add(context.Background(), []api.Document{doc(fmtID("v", uint64(i)), edit(base, uint64(i), 1))}, true)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if res[0].Added {
				added++
			} else if len(res[0].Matches) == 0 {
				t.Errorf("%s not added and no match named", res[0].ID)
			}
		}()
	}
	wg.Wait()
	if added != 1 {
		t.Errorf("%d of 12 near-duplicates added with if_new", added)
	}
}

// TestNoFeatures: without stored feature sets matches and collapse pairs
// are verified by the sketch estimate.
func TestNoFeatures(t *testing.T) {
	st := openStore(t, "pebble", "")
	b, err := server.OpenIndex(st, server.IndexOptions{NoFeatures: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := text(21, 300)
	res, err := b.Add(ctx, []api.Document{doc("a", a), doc("a1", edit(a, 1, 1)), doc("z", text(22, 300))}, false)
	if err != nil {
		t.Fatal(err)
	}
	if m := res[1].Matches; len(m) != 1 || m[0].ID != "a" || m[0].Exact || m[0].Similarity != m[0].Estimate || m[0].StdErr <= 0 {
		t.Errorf("matches without features: %+v", m)
	}
	if info, _, _ := b.Get(ctx, "a"); info.Features != -1 {
		t.Errorf("features stored: %+v", info)
	}
	cr, err := b.Collapse(ctx, []string{"z", "a1", "a"})
	if err != nil || !slices.Equal(cr.Kept, []string{"z", "a1"}) || len(cr.Collapsed) != 1 || cr.Collapsed[0].Into != "a1" {
		t.Errorf("collapse without features: %+v %v", cr, err)
	}
}

// TestHTMLFlag: a document sent with html true is sketched as HTML (its
// visible text), so it matches the plain text of that page; without the
// flag, text that does not begin with a tag is sketched as it stands,
// tags and all.
func TestHTMLFlag(t *testing.T) {
	ctx := context.Background()
	r := serve(t, openStore(t, "pebble", ""), server.Options{}, nil)
	words := text(7, 200)
	var page strings.Builder
	page.WriteString("Welcome.")
	for i, w := range words {
		if i%3 == 0 {
			fmt.Fprintf(&page, " <b class=\"k%d\">%s</b>", i, w)
		} else {
			page.WriteString(" " + w)
		}
	}
	plain := "Welcome. " + join(words)
	if _, err := r.C.Add(ctx, []api.Document{{ID: "plain", Text: plain}}, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		html bool
		want bool
	}{{true, true}, {false, false}} {
		res, err := r.C.Query(ctx, []api.Document{{ID: "page", Text: page.String(), HTML: c.html}})
		if err != nil {
			t.Fatal(err)
		}
		if found := slices.Equal(ids(res[0].Matches), []string{"plain"}); found != c.want {
			t.Errorf("html %v: matches %+v, want the plain text found: %v", c.html, res[0].Matches, c.want)
		}
	}
}

// TestAddGroupCommit: concurrent adds are committed in groups, with the
// results of running them one after the other: of two near-duplicates
// added at once by different requests, exactly one reply names the other
// (the later one's), and every acknowledged document is stored.
func TestAddGroupCommit(t *testing.T) {
	r := serve(t, openStore(t, "pebble", ""), server.Options{}, nil)
	const pairs = 24
	var wg sync.WaitGroup
	var mu sync.Mutex
	named := map[string]string{} // id -> the id its reply named
	for i := range 2 * pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := text(uint64(100+i/2), 300)
			id := fmtID("p", uint64(i))
			res, err := r.C.Add(context.Background(), []api.Document{doc(id, edit(base, uint64(i), 1))}, false)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if !res[0].Added {
				t.Errorf("%s not added", id)
			}
			for _, m := range res[0].Matches {
				named[id] = m.ID
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 2*pairs; i += 2 {
		a, b := fmtID("p", uint64(i)), fmtID("p", uint64(i+1))
		if (named[a] == b) == (named[b] == a) {
			t.Errorf("pair %s, %s: replies name %q and %q; exactly one should name the other", a, b, named[a], named[b])
		}
		for _, id := range []string{a, b} {
			if _, err := r.C.Get(context.Background(), id); err != nil {
				t.Errorf("acknowledged %s: %v", id, err)
			}
		}
	}
}
