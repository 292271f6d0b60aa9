package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redis/redistest"
)

// holdSlot sends a request whose body stays open, so it occupies an
// in-flight slot until the returned function is called.
func holdSlot(t *testing.T, url string) (release func() (int, error)) {
	t.Helper()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", url+"/v1/query", pr)
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{0, err}
			return
		}
		resp.Body.Close()
		done <- result{resp.StatusCode, nil}
	}()
	io.WriteString(pw, `{"documents": [{"id": "held", "text": "a b c"}`)
	time.Sleep(100 * time.Millisecond) // the handler is now reading the body
	return func() (int, error) {
		io.WriteString(pw, `]}`)
		pw.Close()
		r := <-done
		return r.code, r.err
	}
}

// TestBusy: beyond MaxInFlight a request waits QueueTimeout and gets 503
// with Retry-After; the client retries until a slot frees.
func TestBusy(t *testing.T) {
	r := serve(t, openStore(t, "pebble", ""), server.Options{MaxInFlight: 1, QueueTimeout: 50 * time.Millisecond},
		&client.Options{MaxRetries: 20, MinBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	release := holdSlot(t, r.URL)
	code, e, h := raw(t, "GET", r.URL+"/v1/stats", "", "", nil)
	if code != 503 || h.Get("Retry-After") != "1" || !strings.Contains(e.Error, "busy") {
		t.Errorf("busy: %d %q %v", code, e.Error, h)
	}
	// Health checks are not limited.
	if code, _ := get(t, r.URL+"/healthz", ""); code != 200 {
		t.Errorf("healthz while busy: %d", code)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		if code, err := release(); code != 200 || err != nil {
			t.Errorf("held request: %d %v", code, err)
		}
	}()
	if _, err := r.C.Stats(context.Background()); err != nil {
		t.Errorf("client did not retry through 503: %v", err)
	}
	if _, body := get(t, r.URL+"/metrics", ""); !strings.Contains(body, `neardup_http_requests_rejected_total{reason="busy"}`) {
		t.Error("busy rejections not counted")
	}
}

// TestGracefulShutdown: when Serve's context ends, a request in flight
// completes, new connections are refused, and Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	st := openStore(t, "pebble", "")
	b, err := server.OpenIndex(st, server.IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(b, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	release := holdSlot(t, url)
	cancel()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Serve returned with a request in flight: %v", err)
	default:
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("new request served after shutdown began")
	}
	if code, err := release(); code != 200 || err != nil {
		t.Errorf("in-flight request: %d %v", code, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the last request")
	}
}

// The child process of TestKill9: a server over a Pebble directory that
// prints its address and serves until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("NEARDUP_SERVER_CHILD"); dir != "" {
		os.Exit(child(dir))
	}
	os.Exit(m.Run())
}

func child(dir string) int {
	st, err := store.OpenPebble(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, err := server.OpenIndex(st, server.IndexOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := server.New(b, server.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("ADDR %s\n", l.Addr())
	if err := s.Serve(context.Background(), l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startChild runs this test binary as a server child over dir and returns
// its client and process.
func startChild(t *testing.T, dir string) (*client.Client, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "NEARDUP_SERVER_CHILD="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok {
		t.Fatalf("child: %q %v", line, err)
	}
	c, err := client.New("http://"+addr, &client.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c, cmd
}

// addStream adds small batches from several goroutines until stop is
// closed or a request fails, and returns the ids of every acknowledged
// add.
func addStream(c *client.Client, workers int, stop <-chan struct{}, acked chan<- string) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var docs []api.Document
				for j := range 4 {
					id := fmt.Sprintf("w%d-%d-%d", w, i, j)
					docs = append(docs, doc(id, text(uint64(w<<32|i<<4|j), 60)))
				}
				if _, err := c.Add(context.Background(), docs, false); err != nil {
					return // the server died: this batch was not acknowledged
				}
				for _, d := range docs {
					acked <- d.ID
				}
			}
		}()
	}
	wg.Wait()
	close(acked)
}

// TestKill9 kills the server process with SIGKILL in the middle of a
// stream of adds, restarts it on the same Pebble directory, and checks
// that every acknowledged add is there and found by a query.
func TestKill9(t *testing.T) {
	dir := t.TempDir()
	c, cmd := startChild(t, dir)
	stop := make(chan struct{})
	acked := make(chan string, 1<<16)
	go addStream(c, 4, stop, acked)
	var got []string
	deadline := time.After(20 * time.Second)
	for len(got) < 400 {
		select {
		case id := <-acked:
			got = append(got, id)
		case <-deadline:
			t.Fatalf("only %d adds acknowledged", len(got))
		}
	}
	cmd.Process.Kill() // SIGKILL, adds in flight
	cmd.Wait()
	close(stop)
	for id := range acked {
		got = append(got, id)
	}
	c2, _ := startChild(t, dir)
	ctx := context.Background()
	for _, id := range got {
		if _, err := c2.Get(ctx, id); err != nil {
			t.Fatalf("acknowledged %s lost after kill -9: %v", id, err)
		}
	}
	// The postings survived too: a sample of documents finds itself.
	var w, i, j int
	for _, id := range got[:20] {
		fmt.Sscanf(id, "w%d-%d-%d", &w, &i, &j)
		res, err := c2.Query(ctx, []api.Document{doc("q", text(uint64(w<<32|i<<4|j), 60))})
		if err != nil || len(res[0].Matches) == 0 || res[0].Matches[0].ID != id {
			t.Fatalf("query for %s after kill -9: %+v %v", id, res, err)
		}
	}
	t.Logf("%d acknowledged adds survived kill -9", len(got))
}

// TestRedisKill9 kills redis-server with SIGKILL under a stream of adds
// through a server, restarts it, and checks every acknowledged add.
func TestRedisKill9(t *testing.T) {
	srv := redistest.Start(t)
	st := openStore(t, "redis", srv.URL())
	r := serve(t, st, server.Options{}, &client.Options{MaxRetries: -1})
	stop := make(chan struct{})
	acked := make(chan string, 1<<16)
	go addStream(r.C, 4, stop, acked)
	var got []string
	for len(got) < 200 {
		got = append(got, <-acked)
	}
	srv.Kill()
	close(stop)
	for id := range acked {
		got = append(got, id)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range got {
		if _, err := r.C.Get(ctx, id); err != nil {
			t.Fatalf("acknowledged %s lost after redis-server kill -9: %v", id, err)
		}
	}
	var ce *client.Error
	if _, err := r.C.Get(ctx, "never-added"); !errors.As(err, &ce) || ce.StatusCode != 404 {
		t.Errorf("server after redis restart: %v", err)
	}
}
