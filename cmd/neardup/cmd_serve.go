package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redis"
)

// serveOptions are the flags of neardup serve.
type serveOptions struct {
	listenFlags
	Store      string
	Redis      string
	Threshold  float64
	Unverified bool
	LSH        string
	Memory     string
	Cache      int64
	NoLoad     bool
}

func newServeCmd(env *Env) *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve (--store DIR | --redis URL)",
		Short: "Serve the index over HTTP (JSON API, OpenAPI at /openapi.json, metrics at /metrics)",
		Long: `serve answers "have we seen this, or something close?" over HTTP: add
documents (POST /v1/documents, the reply lists the near-duplicates found
before adding), query (POST /v1/query), get and delete by id, collapse a
ranked list of ids (POST /v1/collapse), stats, health and Prometheus
metrics. The index is reopened with the configuration recorded in it; an
empty store gets a new index (OPH, k = 128, threshold 0.8).

--redis takes redis://[user:pass@]host:port[/db][?prefix=P] for one server
or redis+cluster://host:port,host:port[?prefix=P] for Redis Cluster; several
serve processes on one Redis see each other's documents at once.

It listens on loopback only unless --token is given, and beyond loopback
only with TLS (--tls-cert, --tls-key) or --insecure (behind a TLS proxy).
The token may also come from the environment, NEARDUP_TOKEN. It runs until
interrupted, then finishes the requests in flight and flushes the store.`,
		Example: `  neardup serve --store idx/
  neardup serve --redis redis://127.0.0.1:6379?prefix=crawl --addr 127.0.0.1:8081`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.tokenFromEnv()
			return runServe(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Store, "store", "", "the index: a Pebble directory")
	fl.StringVar(&opts.Redis, "redis", "", "the index: a Redis or Redis Cluster URL (instead of --store)")
	opts.bind(fl, "127.0.0.1:8080")
	fl.Float64VarP(&opts.Threshold, "threshold", "t", 0, "similarity threshold in (0, 1] (default: the index's recorded one)")
	fl.BoolVar(&opts.Unverified, "collapse-unverified", false, "collapse from the in-memory table alone (Bing's design), without verifying pairs against the store")
	fl.StringVar(&opts.LSH, "lsh", "auto", collapseLSHUsage)
	fl.StringVar(&opts.Memory, "memory", "", memoryFlagUsage)
	fl.Var((*byteSize)(&opts.Cache), "cache", "Pebble block cache (e.g. 4GiB; default 256MiB, or an eighth of --memory): a query reads its candidates' records, so a cache that holds them all spares a block read per candidate")
	fl.BoolVar(&opts.NoLoad, "no-collapse-load", false, "do not fill the collapse table from the store at start (a collapse then reads the records of ids it has not met yet)")
	return cmd
}

// openServeStore opens the store serve and collapse name with --store or
// --redis (exactly one), and its name for stats.
func openServeStore(ctx context.Context, dir, url string, budget, cache int64) (store.Store, string, error) {
	switch {
	case (dir == "") == (url == ""):
		return nil, "", usagef("give exactly one of --store DIR and --redis URL")
	case url != "":
		st, err := redis.Open(ctx, url, nil)
		if err != nil {
			return nil, "", err
		}
		return st, "redis", nil
	}
	po := pebbleBudget(nil, budget)
	if cache > 0 {
		if po == nil {
			po = &store.PebbleOptions{}
		}
		po.CacheBytes = cache
	}
	st, err := store.OpenPebble(dir, po)
	if errors.Is(err, store.ErrNotStore) {
		return nil, "", usagef("--store %s: %v", dir, err)
	}
	if err != nil {
		return nil, "", err
	}
	return st, "pebble", nil
}

func runServe(ctx context.Context, env *Env, opts serveOptions) error {
	if opts.Threshold != 0 {
		if err := checkThreshold("--threshold", opts.Threshold); err != nil {
			return err
		}
	}
	tc, err := opts.tlsConfig()
	if err != nil {
		return err
	}
	so := server.Options{Token: opts.Token, Insecure: opts.Insecure, TLS: tc, ErrorLog: func(err error) {
		fmt.Fprintf(env.Stderr, "neardup serve: %v\n", err)
	}}
	budget, err := memoryBudget(opts.Memory)
	if err != nil {
		return err
	}
	defer withMemoryLimit(budget)()
	if opts.Cache != 0 && opts.Store == "" {
		return usagef("--cache sizes the block cache of a --store")
	}
	st, name, err := openServeStore(ctx, opts.Store, opts.Redis, budget, opts.Cache)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	cl, err := parseCollapseLSH(opts.LSH)
	if err != nil {
		return err
	}
	b, err := server.OpenIndex(st, server.IndexOptions{Threshold: opts.Threshold, StoreName: name, CollapseUnverified: opts.Unverified, CollapseLSH: cl})
	if cl != nil && errors.Is(err, lsh.ErrParams) {
		return usagef("--lsh %s: %v", opts.LSH, err)
	}
	if errors.Is(err, index.ErrConfig) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	srv, err := server.New(b, so)
	if err != nil {
		return usagef("%v", err)
	}
	if err := srv.CheckAddr(opts.Addr); err != nil {
		return usagef("--addr %s: %v", opts.Addr, err)
	}
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return err
	}
	scheme := "http"
	if so.TLS != nil {
		scheme = "https"
	}
	fmt.Fprintf(env.Stderr, "neardup serve: listening on %s://%s (%s store)\n", scheme, l.Addr(), name)
	loadCtx, stopLoad := context.WithCancel(ctx)
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		if opts.NoLoad {
			return
		}
		start := time.Now()
		n, err := b.LoadCollapse(loadCtx)
		switch {
		case err != nil && loadCtx.Err() == nil:
			fmt.Fprintf(env.Stderr, "neardup serve: the collapse table was not filled at start (collapses read what it lacks): %v\n", err)
		case err == nil:
			fmt.Fprintf(env.Stderr, "neardup serve: collapse table filled: %d documents in %.1f s\n", n, time.Since(start).Seconds())
		}
	}()
	defer func() { stopLoad(); <-loaded }()
	// A server on a shared store reads the journal's tail before each
	// lookup; when idle it still does so every two seconds, to keep its
	// place (and the journal trimmed).
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		b.Follow(loadCtx, 2*time.Second, func(err error) { fmt.Fprintf(env.Stderr, "neardup serve: %v\n", err) })
	}()
	defer func() { stopLoad(); <-followed }()
	if err := srv.Serve(ctx, l); err != nil {
		if errors.Is(err, server.ErrInsecure) {
			return usagef("%v", err)
		}
		return err
	}
	if err := b.Flush(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	closed = true
	return st.Close()
}
