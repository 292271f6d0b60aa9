package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/corpus/corpustest"
	"github.com/neardup/neardup/store/redis/redistest"
)

// syncBuffer is a bytes.Buffer safe for a server goroutine writing while
// the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// startServe runs "neardup serve args..." on a free loopback port and
// returns its URL and a function that stops it (as SIGINT does) and
// returns its exit code.
func startServe(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	url, stop, _ := startServeLog(t, args...)
	return url, stop
}

// startServeLog is startServe that also returns the server's stderr.
func startServeLog(t *testing.T, args ...string) (string, func() int, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var errb syncBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &errb}
	done := make(chan int, 1)
	go func() { done <- Main(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), env) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := listening.FindStringSubmatch(errb.String()); m != nil {
			stopped := false
			code := 0
			stop := func() int {
				if !stopped {
					cancel()
					code, stopped = <-done, true
				}
				return code
			}
			t.Cleanup(func() { stop() })
			return m[1], stop, &errb
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited with %d: %s", code, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s", errb.String())
		}
	}
}

// run runs neardup with args and stdin and returns exit code, stdout and
// stderr.
func runMainStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code := Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

// licenceIDs returns the ids of the shipped corpus, in order.
func licenceIDs(t *testing.T) []string {
	t.Helper()
	var ids []string
	for _, d := range corpustest.Docs(t, licensesDir) {
		ids = append(ids, d.ID)
	}
	return ids
}

// checkServedCorpus adds the shipped corpus through addURL with index add
// --server, then queries it through queryURL with query --server: every
// document finds itself.
func checkServedCorpus(t *testing.T, addURL, queryURL string) {
	t.Helper()
	code, out, errs := runMainStdin(t, "", "index", "add", "--server", addURL, "--quiet", sampleCorpus)
	if code != 0 || !strings.HasPrefix(out, "added 474 documents through "+addURL) {
		t.Fatalf("index add --server: exit %d, %q, %s", code, out, errs)
	}
	code, out, errs = runMainStdin(t, "", "query", "--server", queryURL, sampleCorpus)
	if code != 0 {
		t.Fatalf("query --server: exit %d, %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	ids := licenceIDs(t)
	if len(lines) != len(ids) {
		t.Fatalf("query --server: %d lines for %d documents", len(lines), len(ids))
	}
	withOthers := 0
	for i, l := range lines {
		var q queryJSON
		if err := json.Unmarshal([]byte(l), &q); err != nil {
			t.Fatal(err)
		}
		self := false
		for _, m := range q.Matches {
			self = self || (m.ID == ids[i] && m.Similarity == 1 && m.Exact)
		}
		if q.ID != ids[i] || !self {
			t.Fatalf("query line %d: %s", i, l)
		}
		if len(q.Matches) > 1 {
			withOthers++
		}
	}
	if withOthers == 0 {
		t.Error("no document has a near-duplicate besides itself")
	}
}

// checkCollapse runs collapse on the first 100 ids of the corpus and
// checks every collapsed pair against the corpus's exact pairs at 0.8.
func checkCollapse(t *testing.T, storeArgs ...string) {
	t.Helper()
	ids := licenceIDs(t)[:100]
	code, out, errs := runMainStdin(t, strings.Join(ids, "\n")+"\n", append([]string{"collapse", "--json"}, storeArgs...)...)
	if code != 0 {
		t.Fatalf("collapse: exit %d, %s", code, errs)
	}
	var res struct {
		Kept      []string
		Collapsed []struct{ ID, Into string }
		Unknown   []string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Kept)+len(res.Collapsed) != len(ids) || len(res.Unknown) != 0 || len(res.Collapsed) == 0 {
		t.Fatalf("collapse: %d kept, %d collapsed, unknown %v", len(res.Kept), len(res.Collapsed), res.Unknown)
	}
	jac := licenceJaccard(t)
	for _, c := range res.Collapsed {
		if jac[[2]string{c.ID, c.Into}] < 0.8-1e-9 {
			t.Errorf("collapsed %s into %s at J = %v", c.ID, c.Into, jac[[2]string{c.ID, c.Into}])
		}
	}
	// Plain output: the kept ids, one per line.
	code, out, _ = runMainStdin(t, strings.Join(ids, "\n"), append([]string{"collapse"}, storeArgs...)...)
	if code != 0 || strings.Join(res.Kept, "\n")+"\n" != out {
		t.Errorf("collapse (text): exit %d, %q", code, out)
	}
}

// TestServePebble: serve over a Pebble directory, add and query through
// it, stop it (the store is flushed and unlocked), reopen the index with
// no flags for collapse, and serve it again.
func TestServePebble(t *testing.T) {
	dir := t.TempDir() + "/idx"
	url, stop := startServe(t, "--store", dir)
	checkServedCorpus(t, url, url)
	if code := stop(); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
	checkCollapse(t, "--store", dir)
	// Reopened with its recorded configuration: the documents are there,
	// and the collapse table is filled from the store in the background.
	url, _, log := startServeLog(t, "--store", dir, "--cache", "32MiB")
	code, out, errs := runMainStdin(t, "", "query", "--server", url, sampleCorpus)
	if code != 0 || strings.Count(out, `"similarity":1,`) < 474 {
		t.Fatalf("query after restart: exit %d, %s", code, errs)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "collapse table filled: 474 documents"); {
		if time.Now().After(deadline) {
			t.Fatalf("the collapse table was not filled at start: %s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeRedis: two serve processes on one Redis see each other's
// documents at once; collapse reads the same Redis.
func TestServeRedis(t *testing.T) {
	srv := redistest.Start(t)
	u := srv.URL() + "?prefix=cmdtest"
	a, _ := startServe(t, "--redis", u)
	b, _ := startServe(t, "--redis", u)
	checkServedCorpus(t, a, b)
	checkCollapse(t, "--redis", u)
}

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "exactly one of --store DIR and --redis URL"},
		{[]string{"serve", "--store", dir, "--redis", "redis://127.0.0.1:1"}, "exactly one"},
		{[]string{"serve", "--store", dir + "/a", "--addr", "0.0.0.0:0"}, "needs a bearer token"},
		{[]string{"serve", "--store", dir + "/b", "--addr", "0.0.0.0:0", "--token", "s3cret"}, "needs TLS"},
		{[]string{"serve", "--store", dir + "/c", "--tls-cert", "x.pem"}, "go together"},
		{[]string{"serve", "--redis", "redis://127.0.0.1:1", "--cache", "1GiB"}, "--cache sizes the block cache of a --store"},
		{[]string{"collapse"}, "exactly one"},
		{[]string{"collapse", "--store", dir + "/none"}, "no index there"},
		{[]string{"query", "x.jsonl"}, "--server is required"},
		{[]string{"index", "add", "--server", "http://127.0.0.1:1", "--k", "64", "x.jsonl"}, "--k does not go with --server"},
		{[]string{"index", "add", "x.jsonl"}, "--store is required"},
	} {
		code, _, errs := runMainStdin(t, "", c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") > 2 {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", c.args, code, errs, c.want)
		}
	}
	// An unreachable server is a one-line failure, not a usage error.
	code, _, errs := runMainStdin(t, "", "query", "--server", "http://127.0.0.1:1", sampleCorpus)
	if code != ExitFailure || strings.Count(errs, "\n") != 1 {
		t.Errorf("unreachable server: exit %d, %q", code, errs)
	}
}

// licenceJaccard returns the exact Jaccard of every pair of the corpus at
// 0.5 or more (testdata/licenses/pairs.jsonl.gz), both ways round.
func licenceJaccard(t *testing.T) map[[2]string]float64 {
	t.Helper()
	jac := map[[2]string]float64{}
	for _, p := range corpustest.Pairs(t, licensesDir) {
		jac[[2]string{p.A, p.B}], jac[[2]string{p.B, p.A}] = p.Jaccard, p.Jaccard
	}
	return jac
}

// TestServeRedisCluster: the same over a 3-master Redis Cluster.
func TestServeRedisCluster(t *testing.T) {
	u := redistest.StartCluster(t, 3).URL() + "?prefix=cmdtest"
	a, _ := startServe(t, "--redis", u)
	b, _ := startServe(t, "--redis", u)
	checkServedCorpus(t, a, b)
	checkCollapse(t, "--redis", u)
}
