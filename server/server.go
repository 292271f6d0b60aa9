// Package server provides neardup's HTTP API over a near-duplicate index:
// a crawler asks, per page, "have we seen this, or something close?" and
// adds it in the same call; a search engine collapses near-duplicates out
// of each ranked result list at query time (the Bing design of
// "Efficient determination of most near neighbors", ch. 6.1: a few 16-bit
// supershingles per document held in memory, "m of b must match"; here
// each pair the table proposes is also verified against the stored
// documents, unless IndexOptions.CollapseUnverified).
//
// The API is JSON over HTTP (net/http with Go 1.22 patterns), every route
// registered in Install and described by the OpenAPI 3 document
// openapi.json, served at /openapi.json:
//
//	POST   /v1/documents        add documents, reply with the near-duplicates found before adding (if_new: add only new ones)
//	POST   /v1/query            near-duplicates of documents, or of sketches made by the client
//	GET    /v1/documents/{id}   a stored document's sketch
//	DELETE /v1/documents/{id}   remove a document
//	POST   /v1/collapse         collapse a ranked list of ids
//	GET    /v1/stats            configuration and counters
//	GET    /healthz, /readyz    liveness, readiness (the store answers)
//	GET    /metrics             Prometheus metrics
//	GET    /openapi.json        the API description
//
// Every input is bounded (body size, documents per request, ids per
// collapse, request time, requests in flight); a malformed request gets a
// 400 whose message names the problem. The server listens on loopback by
// default; to listen on any other address it needs a bearer token (and TLS,
// unless Options.Insecure), compared in constant time.
//
// The server holds no index logic: every call goes through the Backend
// interface (backend.go), and adds are durable before they are
// acknowledged. This package is not a client; see package client.
package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/neardup/neardup/internal/listen"
)

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3 document of the API.
func OpenAPI() []byte { return openAPI }

// Options configure a Server. The zero value gives the defaults: loopback
// only, no token.
type Options struct {
	// Token is the bearer token every /v1 and /metrics request must carry
	// ("Authorization: Bearer <token>"). Required to listen on a
	// non-loopback address. The default is none.
	Token string
	// TLS serves HTTPS with this configuration (certificates loaded by the
	// caller). Without it a non-loopback listener needs Insecure.
	TLS *tls.Config
	// Insecure allows plain HTTP on a non-loopback address (behind a
	// TLS-terminating proxy). The token is still required.
	Insecure bool
	// MaxBodyBytes bounds a request body. The default is 16 MiB.
	MaxBodyBytes int64
	// MaxDocuments bounds documents (or sketches) per request. The default
	// is 1,000.
	MaxDocuments int
	// MaxIDs bounds the ids of one collapse. The default is 10,000.
	MaxIDs int
	// MaxIDBytes bounds a document id. The default is 1,024.
	MaxIDBytes int
	// MaxInFlight bounds the API requests served at once; others wait up to
	// QueueTimeout, then get 503. The default is 64.
	MaxInFlight int
	// QueueTimeout is how long a request waits for a slot. The default is
	// one second.
	QueueTimeout time.Duration
	// RequestTimeout bounds the work of one request (its context). The
	// default is 30 seconds.
	RequestTimeout time.Duration
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are the
	// http.Server's. Defaults: 10 s, 60 s, 60 s, 120 s.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests when Serve's
	// context ends. The default is 30 seconds.
	ShutdownTimeout time.Duration
	// Registerer receives the server's Prometheus metrics, and /metrics
	// serves Gatherer. The defaults are a new registry of the server's own
	// (plus the Go and process collectors).
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// ErrorLog receives server-side errors (500s, listener errors); nil
	// drops them (they are counted in metrics anyway).
	ErrorLog func(error)
}

func (o *Options) ensureDefaults() {
	def := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 16 << 20
	}
	if o.MaxDocuments <= 0 {
		o.MaxDocuments = 1000
	}
	if o.MaxIDs <= 0 {
		o.MaxIDs = 10_000
	}
	if o.MaxIDBytes <= 0 {
		o.MaxIDBytes = 1024
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 64
	}
	def(&o.QueueTimeout, time.Second)
	def(&o.RequestTimeout, 30*time.Second)
	def(&o.ReadHeaderTimeout, 10*time.Second)
	def(&o.ReadTimeout, 60*time.Second)
	def(&o.WriteTimeout, 60*time.Second)
	def(&o.IdleTimeout, 120*time.Second)
	def(&o.ShutdownTimeout, 30*time.Second)
}

// Errors of New and Serve.
var (
	// ErrInsecure is returned when a non-loopback address is asked for
	// without a token, or without TLS and without Insecure.
	ErrInsecure = errors.New("server: refusing to listen beyond loopback")
)

// Server serves the API over a Backend. Make one with New; the zero value
// is not usable. A Server is safe for concurrent use; serve it once.
type Server struct {
	b       Backend
	o       Options
	token   [32]byte // sha256 of the token, compared in constant time
	slots   chan struct{}
	m       *metrics
	started time.Time
	handler http.Handler
}

// New returns a server over b.
func New(b Backend, o Options) (*Server, error) {
	o.ensureDefaults()
	s := &Server{b: b, o: o, slots: make(chan struct{}, o.MaxInFlight), started: time.Now()}
	if o.Token != "" {
		s.token = sha256.Sum256([]byte(o.Token))
	}
	if o.Registerer == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
		o.Registerer, o.Gatherer = reg, reg
		s.o = o
	}
	if s.o.Gatherer == nil {
		s.o.Gatherer = prometheus.DefaultGatherer
	}
	m, err := newMetrics(s.o.Registerer, b)
	if err != nil {
		return nil, err
	}
	s.m = m
	mux := http.NewServeMux()
	s.Install(mux)
	s.handler = mux
	return s, nil
}

// Handler returns the server's routes as one handler (for tests and for
// embedding under another server).
func (s *Server) Handler() http.Handler { return s.handler }

// route is one registered endpoint.
type route struct {
	method, path string
	auth         bool // needs the token (when one is set)
	limit        bool // counts against MaxInFlight
	h            handlerFunc
	raw          http.Handler // served as is (metrics)
}

// routes lists every endpoint of the API; Install registers exactly these
// and the OpenAPI test compares them with openapi.json.
func (s *Server) routes() []route {
	return []route{
		{method: "POST", path: "/v1/documents", auth: true, limit: true, h: s.addDocuments},
		{method: "POST", path: "/v1/query", auth: true, limit: true, h: s.query},
		{method: "GET", path: "/v1/documents/{id}", auth: true, limit: true, h: s.getDocument},
		{method: "DELETE", path: "/v1/documents/{id}", auth: true, limit: true, h: s.deleteDocument},
		{method: "POST", path: "/v1/collapse", auth: true, limit: true, h: s.collapse},
		{method: "GET", path: "/v1/stats", auth: true, limit: true, h: s.stats},
		{method: "POST", path: "/v1/admin/backup", auth: true, h: s.backup},
		{method: "GET", path: "/healthz", h: s.healthz},
		{method: "GET", path: "/readyz", h: s.readyz},
		{method: "GET", path: "/metrics", auth: true, raw: promhttp.HandlerFor(s.o.Gatherer, promhttp.HandlerOpts{})},
		{method: "GET", path: "/openapi.json", h: s.openapi},
	}
}

// Install registers every route of the API on mux.
func (s *Server) Install(mux *http.ServeMux) {
	for _, r := range s.routes() {
		mux.Handle(r.method+" "+r.path, s.adapt(r))
	}
	// Other methods and paths get JSON 405 and 404 replies rather than
	// the mux's text ones.
	mux.Handle("/", s.adapt(route{path: "/", h: s.unmatched}))
}

// Serve serves on l until ctx ends, then shuts down gracefully: it stops
// accepting, waits for in-flight requests (up to ShutdownTimeout) and
// returns nil. A non-loopback listener is refused (ErrInsecure) without a
// token, or without TLS unless Insecure. The caller closes the backend's
// store afterwards.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if err := s.checkListener(l.Addr()); err != nil {
		l.Close()
		return err
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.o.ReadHeaderTimeout,
		ReadTimeout:       s.o.ReadTimeout,
		WriteTimeout:      s.o.WriteTimeout,
		IdleTimeout:       s.o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          log.New(errorWriter(s.o.ErrorLog), "", 0),
	}
	if s.o.TLS != nil {
		hs.TLSConfig = s.o.TLS.Clone()
		l = tls.NewListener(l, hs.TLSConfig)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return fmt.Errorf("server: shutdown: %w", err)
	}
	<-errc
	return nil
}

// errorWriter forwards the http.Server's log lines (TLS handshake
// failures, accept errors) to Options.ErrorLog, or drops them.
type errorWriter func(error)

func (f errorWriter) Write(p []byte) (int, error) {
	if f != nil {
		f(errors.New(strings.TrimSpace(string(p))))
	}
	return len(p), nil
}

// ListenAndServe listens on addr (default "127.0.0.1:8080") and calls
// Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server: address %q: %w", addr, err)
	}
	if err := s.checkHost(host); err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return s.Serve(ctx, l)
}

// CheckAddr reports whether Serve would refuse to listen on addr
// (host:port): ErrInsecure beyond loopback without a token, or without TLS
// unless Insecure. It lets a caller refuse before it opens a listener.
func (s *Server) CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server: address %q: %w", addr, err)
	}
	return s.checkHost(host)
}

func (s *Server) checkListener(a net.Addr) error {
	return listen.CheckListener(a, s.policy(), ErrInsecure)
}

// checkHost refuses a host beyond loopback without a token, or without
// TLS unless Insecure.
func (s *Server) checkHost(host string) error { return listen.CheckHost(host, s.policy(), ErrInsecure) }

func (s *Server) policy() listen.Policy {
	return listen.Policy{Token: s.o.Token != "", TLS: s.o.TLS != nil, Insecure: s.o.Insecure}
}

// authorized compares the request's bearer token with ours in constant
// time (both hashed first, so the comparison's length is fixed too).
func (s *Server) authorized(r *http.Request) bool {
	if s.o.Token == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return false
	}
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], s.token[:]) == 1
}
