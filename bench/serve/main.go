// Command serve is a bounded load generator for neardup's HTTP server
// (package server) on loopback: it starts one or two servers over an
// embedded Pebble store or a Redis it starts itself (standalone or a
// 3-master cluster), preloads N generated documents through the Go client,
// then runs a mixed stream of single-document queries and adds from C
// concurrent clients for a fixed time, then collapses of 100-id lists, and
// prints throughput and p50/p99/p99.9 latencies per operation.
//
// Everything listens on 127.0.0.1 only, lives in a temporary directory
// removed at the end, and stops by itself: the run is bounded by -n,
// -duration and -collapse-duration. Documents are -words words drawn
// uniformly from a generated vocabulary of 20,000 words; a query is an
// edited copy (-edits substituted words) of a random preloaded document,
// so most queries find a near-duplicate. Latencies are wall-clock times of
// whole HTTP requests as the client sees them, with the load generator on
// the same machine (it competes for the same cores).
//
// Usage:
//
//	go run ./serve -n 100000 -store pebble
//	go run ./serve -n 100000 -store redis -servers 2
//	go run ./serve -n 100000 -store cluster -servers 2
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/pprof/profile"

	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redis"
	"github.com/neardup/neardup/store/redis/redistest"
)

type flags struct {
	n          int
	words      int
	edits      int
	storeKind  string
	servers    int
	conc       int
	duration   time.Duration
	collapseD  time.Duration
	queryShare float64
	batch      int
	seed       uint64
	cpuprofile string
	colProfile string
	compact    bool
	metrics    bool
	collapseC  int
	qbatch     int
	pool       int
	load       bool
	dir        string
	block      int
	cache      int64
}

func main() {
	var f flags
	flag.IntVar(&f.n, "n", 100_000, "documents to preload")
	flag.IntVar(&f.words, "words", 300, "words per document")
	flag.IntVar(&f.edits, "edits", 6, "words substituted in a query's copy of a preloaded document")
	flag.StringVar(&f.storeKind, "store", "pebble", "pebble, redis or cluster (a redis-server or 3-master cluster started for the run)")
	flag.IntVar(&f.servers, "servers", 1, "servers sharing the store (2 needs redis or cluster)")
	flag.IntVar(&f.conc, "c", 16, "concurrent clients in the mixed phase")
	flag.DurationVar(&f.duration, "duration", 20*time.Second, "length of the mixed phase")
	flag.DurationVar(&f.collapseD, "collapse-duration", 5*time.Second, "length of the collapse phase")
	flag.Float64Var(&f.queryShare, "queries", 0.9, "share of queries in the mixed phase (the rest are adds)")
	flag.IntVar(&f.batch, "batch", 256, "documents per add request while preloading")
	flag.Uint64Var(&f.seed, "seed", 1, "generator seed")
	flag.IntVar(&f.collapseC, "collapse-c", 1, "concurrent clients in the collapse phase")
	flag.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the mixed phase (server and load generator; the generator's samples carry the label side=loadgen) to this file")
	flag.BoolVar(&f.compact, "compact", false, "with -dir holding a store: compact it before serving, as neardup index add leaves an index it builds (every record in the last level)")
	flag.BoolVar(&f.metrics, "store-metrics", false, "print Pebble's metrics (levels, files, cache and filter hits) of each server's store after the mixed phase")
	flag.StringVar(&f.colProfile, "collapse-cpuprofile", "", "write a CPU profile of the collapse phase to this file")
	flag.IntVar(&f.qbatch, "qbatch", 1, "documents per query request in the mixed phase (a client batching its queries)")
	flag.IntVar(&f.pool, "pool", 200_000, "query documents generated before the mixed phase (the clients draw from them, so generating text is not timed; 0 generates each query in the phase)")
	flag.BoolVar(&f.load, "load-collapse", true, "fill each server's collapse table from the store before the mixed phase, as neardup serve does at start (it also warms the block cache)")
	flag.IntVar(&f.block, "block", 0, "Pebble data block size in bytes for the tables the run writes (store.PebbleOptions.BlockBytes; 0 the store's default)")
	flag.Int64Var(&f.cache, "cache", 0, "Pebble block cache in bytes (store.PebbleOptions.CacheBytes; 0 the store's default)")
	flag.StringVar(&f.dir, "dir", "", "keep the Pebble store in this directory and, when it already holds one, reuse it without preloading (the default is a temporary directory)")
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "bench/serve:", err)
		os.Exit(1)
	}
}

// corpus generates documents as pure functions of (seed, index).
type corpus struct {
	vocab []string
	f     flags
}

func newCorpus(f flags) *corpus {
	r := rand.New(rand.NewPCG(f.seed, 0))
	v := make([]string, 20_000)
	for i := range v {
		b := make([]byte, 3+r.IntN(7))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		v[i] = string(b)
	}
	return &corpus{vocab: v, f: f}
}

func (c *corpus) words(i int) []string {
	r := rand.New(rand.NewPCG(c.f.seed, uint64(i)+1))
	w := make([]string, c.f.words)
	for j := range w {
		w[j] = c.vocab[r.IntN(len(c.vocab))]
	}
	return w
}

func (c *corpus) doc(i int) api.Document {
	return api.Document{ID: fmt.Sprint("doc-", i), Text: strings.Join(c.words(i), " ")}
}

// variant is document i with edits words substituted (seeded by salt).
func (c *corpus) variant(i int, salt uint64) api.Document {
	w := c.words(i)
	r := rand.New(rand.NewPCG(c.f.seed^salt, uint64(i)+7))
	for range c.f.edits {
		w[r.IntN(len(w))] = c.vocab[r.IntN(len(c.vocab))] + "q"
	}
	return api.Document{ID: fmt.Sprintf("q-%d-%d", i, salt), Text: strings.Join(w, " ")}
}

type instance struct {
	url  string
	stop func() error
	st   store.Store
}

func run(f flags) error {
	if f.servers < 1 || f.servers > 1 && f.storeKind == "pebble" {
		return fmt.Errorf("-servers %d with -store %s: two servers need a shared store (redis or cluster)", f.servers, f.storeKind)
	}
	tmp, err := os.MkdirTemp("", "neardup-bench-serve")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx := context.Background()

	// The store(s) and the redis-server processes.
	var redisURL string
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	switch f.storeKind {
	case "pebble":
	case "redis":
		if err := os.Mkdir(tmp+"/redis", 0o755); err != nil {
			return err
		}
		s, err := redistest.New("", tmp+"/redis", false)
		if err != nil {
			return err
		}
		cleanups = append(cleanups, s.Kill)
		redisURL = s.URL()
	case "cluster":
		var nodes []*redistest.Server
		for i := range 3 {
			dir := fmt.Sprintf("%s/node%d", tmp, i)
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			s, err := redistest.New("", dir, true)
			if err != nil {
				return err
			}
			cleanups = append(cleanups, s.Kill)
			nodes = append(nodes, s)
		}
		c, err := redistest.FormCluster(nodes)
		if err != nil {
			return err
		}
		redisURL = c.URL()
	default:
		return fmt.Errorf("-store %q: want pebble, redis or cluster", f.storeKind)
	}

	pebbleDir, reuse := tmp+"/pebble", false
	if f.dir != "" {
		if f.storeKind != "pebble" {
			return fmt.Errorf("-dir needs -store pebble")
		}
		pebbleDir = f.dir
		if ents, err := os.ReadDir(f.dir); err == nil && len(ents) > 0 {
			reuse = true
		}
	}
	var insts []instance
	for range f.servers {
		var st store.Store
		var err error
		t0 := time.Now()
		if f.storeKind == "pebble" {
			st, err = store.OpenPebble(pebbleDir, &store.PebbleOptions{BlockBytes: f.block, CacheBytes: f.cache})
		} else {
			st, err = redis.Open(ctx, redisURL, &redis.Options{Prefix: "bench"})
		}
		if err != nil {
			return err
		}
		if f.compact && reuse {
			t1 := time.Now()
			if err := store.Compact(ctx, st); err != nil {
				return err
			}
			fmt.Printf("store compacted in %.1f s\n", time.Since(t1).Seconds())
		}
		b, err := server.OpenIndex(st, server.IndexOptions{StoreName: f.storeKind})
		if err != nil {
			return err
		}
		fmt.Printf("server opened its index in %.1f s\n", time.Since(t0).Seconds())
		if f.load && reuse {
			t1 := time.Now()
			n, err := b.LoadCollapse(ctx)
			if err != nil {
				return err
			}
			fmt.Printf("server filled its collapse table in %.1f s (%d documents)\n", time.Since(t1).Seconds(), n)
		}
		s, err := server.New(b, server.Options{MaxInFlight: 4 * f.conc})
		if err != nil {
			return err
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Serve(sctx, l) }()
		insts = append(insts, instance{url: "http://" + l.Addr().String(), st: st, stop: func() error {
			cancel()
			err := <-done
			if ferr := b.Flush(ctx); err == nil {
				err = ferr // as neardup serve does at shutdown
			}
			if cerr := st.Close(); err == nil {
				err = cerr
			}
			return err
		}})
	}
	defer func() {
		for _, in := range insts {
			in.stop()
		}
	}()
	tr := &http.Transport{MaxIdleConns: 4 * f.conc, MaxIdleConnsPerHost: 4 * f.conc, IdleConnTimeout: time.Minute}
	clients := make([]*client.Client, len(insts))
	for i, in := range insts {
		c, err := client.New(in.url, &client.Options{HTTPClient: &http.Client{Transport: tr, Timeout: time.Minute}, BatchSize: f.batch})
		if err != nil {
			return err
		}
		clients[i] = c
	}
	cp := newCorpus(f)
	printLoad("start")
	defer printLoad("end")
	fmt.Printf("# neardup bench/serve: store %s, %d server(s), %d documents of %d words, GOMAXPROCS %d, %s\n",
		f.storeKind, f.servers, f.n, f.words, runtime.GOMAXPROCS(0), runtime.Version())

	// Preload, 4 loaders spread over the servers.
	start := time.Now()
	var next atomic.Int64
	if reuse {
		next.Store(int64(f.n))
		fmt.Printf("preload: reusing the store in %s\n", f.dir)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%len(clients)]
			for {
				lo := int(next.Add(int64(f.batch))) - f.batch
				if lo >= f.n {
					return
				}
				hi := min(lo+f.batch, f.n)
				docs := make([]api.Document, 0, hi-lo)
				for i := lo; i < hi; i++ {
					docs = append(docs, cp.doc(i))
				}
				if _, err := c.Add(ctx, docs, false); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errc:
		return fmt.Errorf("preload: %w", err)
	default:
	}
	el := time.Since(start)
	if !reuse {
		fmt.Printf("preload: %d documents in %.1f s (%.0f documents/s, batches of %d)\n", f.n, el.Seconds(), float64(f.n)/el.Seconds(), f.batch)
	}

	// The query documents, made before the phase.
	var pool []api.Document
	if f.pool > 0 {
		t1 := time.Now()
		pool = make([]api.Document, f.pool)
		var pw sync.WaitGroup
		for g := range runtime.GOMAXPROCS(0) {
			pw.Add(1)
			go func() {
				defer pw.Done()
				r := rand.New(rand.NewPCG(f.seed, uint64(g)+5000))
				for i := g; i < len(pool); i += runtime.GOMAXPROCS(0) {
					pool[i] = cp.variant(r.IntN(f.n), uint64(i))
				}
			}()
		}
		pw.Wait()
		fmt.Printf("query pool: %d documents made in %.1f s\n", len(pool), time.Since(t1).Seconds())
	}

	// Mixed queries and adds.
	type sample struct {
		add   bool
		d     time.Duration
		found bool
	}
	results := make([][]sample, f.conc)
	// The mixed phase is always profiled, to tell the load generator's
	// share of the CPU from the server's (its goroutines, and the client
	// connections they start, carry the label side=loadgen).
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return err
	}
	cpu0 := processCPU()
	t0 := time.Now()
	deadline := time.Now().Add(f.duration)
	var failures atomic.Int64
	var addSeq atomic.Int64
	for w := range f.conc {
		wg.Add(1)
		go pprof.Do(ctx, pprof.Labels("side", "loadgen"), func(ctx context.Context) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(f.seed, uint64(w)+1000))
			c := clients[w%len(clients)]
			qs := make([]api.Document, f.qbatch)
			for salt := uint64(0); time.Now().Before(deadline); salt++ {
				t0 := time.Now()
				if r.Float64() < f.queryShare {
					for j := range qs {
						if pool != nil {
							qs[j] = pool[r.IntN(len(pool))]
						} else {
							qs[j] = cp.variant(r.IntN(f.n), salt<<16|uint64(j)<<8|uint64(w))
						}
					}
					t0 = time.Now()
					res, err := c.Query(ctx, qs)
					if err != nil {
						failures.Add(1)
						continue
					}
					d := time.Since(t0)
					for _, x := range res {
						results[w] = append(results[w], sample{d: d, found: len(x.Matches) > 0})
					}
				} else {
					d := cp.doc(f.n + int(addSeq.Add(1)))
					t0 = time.Now()
					if _, err := c.Add(ctx, []api.Document{d}, false); err != nil {
						failures.Add(1)
						continue
					}
					results[w] = append(results[w], sample{add: true, d: time.Since(t0)})
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	cpu := processCPU() - cpu0
	pprof.StopCPUProfile()
	if f.cpuprofile != "" {
		if err := os.WriteFile(f.cpuprofile, prof.Bytes(), 0o644); err != nil {
			return err
		}
	}
	share, err := labelShare(prof.Bytes(), "side", "loadgen")
	if err != nil {
		return err
	}
	var q, a []time.Duration
	found := 0
	for _, rs := range results {
		for _, s := range rs {
			if s.add {
				a = append(a, s.d)
			} else {
				q = append(q, s.d)
				if s.found {
					found++
				}
			}
		}
	}
	secs := f.duration.Seconds()
	fmt.Printf("mixed (%d clients, %.0f%% queries, %v): %.0f requests/s, %d failed\n", f.conc, 100*f.queryShare, f.duration, float64(len(q)+len(a))/secs, failures.Load())
	fmt.Printf("CPU in the mixed phase: %.1f s over %.1f s of wall time (%.2f of %d cores); the load generator took %.0f%% of it (profile samples labelled side=loadgen), the server(s) and the rest %.0f%%\n",
		cpu.Seconds(), wall.Seconds(), cpu.Seconds()/wall.Seconds(), runtime.NumCPU(), 100*share, 100*(1-share))
	report("query", q, secs, fmt.Sprintf("%.1f%% found a near-duplicate; %d per request, latency per request", 100*float64(found)/float64(max(len(q), 1)), f.qbatch))
	report("add", a, secs, "")
	if f.metrics {
		for i, in := range insts {
			if p, ok := in.st.(*store.Pebble); ok {
				fmt.Printf("server %d: Pebble metrics after the mixed phase:\n%s", i, p.Metrics())
			}
		}
	}

	// Collapse of 100 known ids.
	var cl []time.Duration
	var cmu sync.Mutex
	var colProf bytes.Buffer
	if f.colProfile != "" {
		if err := pprof.StartCPUProfile(&colProf); err != nil {
			return err
		}
	}
	deadline = time.Now().Add(f.collapseD)
	for w := range f.collapseC {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(f.seed, uint64(w)+2000))
			c := clients[w%len(clients)]
			ids := make([]string, 100)
			var local []time.Duration
			for time.Now().Before(deadline) {
				for j := range ids {
					ids[j] = fmt.Sprint("doc-", r.IntN(f.n))
				}
				t0 := time.Now()
				if _, err := c.Collapse(ctx, ids); err != nil {
					failures.Add(1)
					continue
				}
				local = append(local, time.Since(t0))
			}
			cmu.Lock()
			cl = append(cl, local...)
			cmu.Unlock()
		}()
	}
	wg.Wait()
	if f.colProfile != "" {
		pprof.StopCPUProfile()
		if err := os.WriteFile(f.colProfile, colProf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	report("collapse100", cl, f.collapseD.Seconds(), fmt.Sprintf("%d client(s)", f.collapseC))
	for i, c := range clients {
		st, err := c.Stats(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("server %d: collapse table %s: %d documents, %d bytes (%.1f bytes per document, id included)\n",
			i, st.Collapse, st.CollapseDocuments, st.CollapseBytes, float64(st.CollapseBytes)/float64(max(st.CollapseDocuments, 1)))
	}
	for _, in := range insts {
		if err := in.stop(); err != nil {
			return err
		}
	}
	insts = nil
	return nil
}

func report(name string, d []time.Duration, secs float64, note string) {
	if len(d) == 0 {
		fmt.Printf("%-12s no samples\n", name)
		return
	}
	slices.Sort(d)
	pct := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	fmt.Printf("%-12s %8d  %8.0f/s  p50 %8v  p99 %8v  p99.9 %8v  max %8v  %s\n", name, len(d), float64(len(d))/secs,
		pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(0.999).Round(time.Microsecond), d[len(d)-1].Round(time.Microsecond), note)
}

// processCPU returns the CPU time (user and system) the process used so
// far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// labelShare returns the share of a CPU profile's samples that carry the
// label key=value.
func labelShare(raw []byte, key, value string) (float64, error) {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU profile: %w", err)
	}
	var all, with int64
	for _, s := range p.Sample {
		v := s.Value[len(s.Value)-1]
		all += v
		if slices.Contains(s.Label[key], value) {
			with += v
		}
	}
	if all == 0 {
		return 0, nil
	}
	return float64(with) / float64(all), nil
}

// printLoad prints the machine's load average (the run shares its cores).
func printLoad(when string) {
	b, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		fmt.Printf("load average at %s: %s", when, b)
	}
}
