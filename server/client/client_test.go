package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/store"
)

func start(t *testing.T, o server.Options) string {
	t.Helper()
	st, err := store.OpenPebble(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := server.OpenIndex(st, server.IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); <-done; st.Close() })
	return "http://" + l.Addr().String()
}

func page(i int) string {
	var b strings.Builder
	for j := range 40 {
		fmt.Fprintf(&b, "w%d_%d ", i, j)
	}
	return b.String()
}

// TestBatching: a list longer than the server's limit goes in batches,
// results in order, and if_new sees the earlier batches.
func TestBatching(t *testing.T) {
	url := start(t, server.Options{MaxDocuments: 3})
	c, err := client.New(url+"/", &client.Options{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	var docs []api.Document
	for i := range 8 {
		docs = append(docs, api.Document{ID: fmt.Sprint("d", i), Text: page(i % 5)}) // d5..d7 repeat d0..d2
	}
	res, err := c.Add(context.Background(), docs, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.ID != docs[i].ID || r.Added != (i < 5) {
			t.Errorf("result %d: %+v", i, r)
		}
		if i >= 5 && (len(r.Matches) != 1 || r.Matches[0].ID != fmt.Sprint("d", i-5)) {
			t.Errorf("result %d matches %+v", i, r.Matches)
		}
	}
	q, err := c.Query(context.Background(), docs)
	if err != nil || len(q) != 8 {
		t.Fatalf("query: %d %v", len(q), err)
	}
	// Without batching the server refuses: an *Error naming the field.
	c1, _ := client.New(url, &client.Options{BatchSize: 10})
	_, err = c1.Add(context.Background(), docs, false)
	var se *client.Error
	if !errors.As(err, &se) || se.StatusCode != 413 || se.Field != "documents" {
		t.Errorf("oversized batch: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://x", "http://"} {
		if _, err := client.New(u, nil); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
	// Nothing listening: the error comes after the retries, naming the cause.
	c, _ := client.New("http://127.0.0.1:1", &client.Options{MaxRetries: 1})
	if _, err := c.Stats(context.Background()); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("no server: %v", err)
	}
}

// TestBatcher: 60 goroutines add one page each; the batcher sends them in
// a few requests, every caller gets its own result, duplicates are found.
func TestBatcher(t *testing.T) {
	url := start(t, server.Options{})
	c, _ := client.New(url, &client.Options{BatchSize: 16})
	b := c.NewBatcher(true, 50*time.Millisecond)
	var wg sync.WaitGroup
	var mu sync.Mutex
	added, dup := 0, 0
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.Add(context.Background(), api.Document{ID: fmt.Sprint("p", i), Text: page(i % 30)})
			if err != nil || r.ID != fmt.Sprint("p", i) {
				t.Errorf("Add p%d: %+v %v", i, r, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if r.Added {
				added++
			} else if len(r.Matches) == 1 {
				dup++
			}
		}()
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if added != 30 || dup != 30 {
		t.Errorf("%d added, %d duplicates, want 30 and 30", added, dup)
	}
	if _, err := b.Add(context.Background(), api.Document{ID: "late"}); !errors.Is(err, client.ErrBatcherClosed) {
		t.Errorf("Add after Close: %v", err)
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var n int
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, `neardup_http_request_duration_seconds_count{code="200",route="POST /v1/documents"} `); ok {
			fmt.Sscan(rest, &n)
		}
	}
	if n < 4 || n > 20 {
		t.Errorf("%d add requests for 60 documents in batches of 16", n)
	}
}
