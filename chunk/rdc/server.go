package rdc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/internal/listen"
)

// ServerOptions configure a Server. The zero value gives the defaults:
// loopback only, no token.
type ServerOptions struct {
	// Token is the bearer token every /v1 request must carry. Required to
	// listen beyond loopback. The default is none.
	Token string
	// TLS serves HTTPS with this configuration. Without it a listener
	// beyond loopback needs Insecure.
	TLS *tls.Config
	// Insecure allows plain HTTP beyond loopback (behind a TLS proxy).
	Insecure bool
	// MaxInFlight bounds the requests served at once; others get 503. The
	// default is 16.
	MaxInFlight int
	// RequestTimeout bounds one request. The default is 60 seconds.
	RequestTimeout time.Duration
	// Level is the zstd level of replies: 1 (fastest) to 4 (best, about
	// 4 times the CPU of 3 for 7% fewer bytes on source code). The
	// default is 3 (klauspost/compress's SpeedBetterCompression).
	Level int
	// ErrorLog receives server-side errors; nil drops them.
	ErrorLog func(error)
}

// ErrInsecure is returned when a listener beyond loopback is asked for
// without a token, or without TLS and without Insecure.
var ErrInsecure = errors.New("rdc: refusing to listen beyond loopback")

// Server serves a Tree read-only over HTTP:
//
//	GET  /v1/manifest   the manifest, zstd-compressed
//	POST /v1/nodes      children of signature nodes (NodeReq list)
//	POST /v1/chunks     chunk bytes (RangeReq list), zstd-compressed
//	GET  /healthz       liveness
//
// Make one with NewServer; safe for concurrent use.
type Server struct {
	t        *Tree
	o        ServerOptions
	token    [32]byte
	slots    chan struct{}
	manifest []byte // zstd-compressed
	root     *os.Root
	encs     sync.Pool
}

// NewServer returns a server of t.
func NewServer(t *Tree, o ServerOptions) (*Server, error) {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 16
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 60 * time.Second
	}
	if o.Level == 0 {
		o.Level = int(zstd.SpeedBetterCompression)
	}
	if o.Level < int(zstd.SpeedFastest) || o.Level > int(zstd.SpeedBestCompression) {
		return nil, fmt.Errorf("rdc: compression level %d not in [1, 4]", o.Level)
	}
	root, err := os.OpenRoot(t.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{t: t, o: o, slots: make(chan struct{}, o.MaxInFlight), root: root}
	if o.Token != "" {
		s.token = sha256.Sum256([]byte(o.Token))
	}
	var raw, z bytes.Buffer
	if err := t.Manifest.Encode(&raw); err != nil {
		return nil, err
	}
	enc := s.encoder(&z)
	enc.Write(raw.Bytes())
	if err := enc.Close(); err != nil {
		return nil, err
	}
	s.encs.Put(enc)
	s.manifest = z.Bytes()
	return s, nil
}

// Close releases the tree's directory.
func (s *Server) Close() error { return s.root.Close() }

func (s *Server) encoder(w io.Writer) *zstd.Encoder {
	if e, ok := s.encs.Get().(*zstd.Encoder); ok {
		e.Reset(w)
		return e
	}
	e, _ := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevel(s.o.Level)), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(8<<20))
	return e
}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.Handle("GET /v1/manifest", s.guard(s.serveManifest))
	mux.Handle("POST /v1/nodes", s.guard(s.serveNodes))
	mux.Handle("POST /v1/chunks", s.guard(s.serveChunks))
	return mux
}

// httpError is an error with a status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func (s *Server) guard(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		default:
			http.Error(w, "too many requests in flight", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxReqBytes)
		}
		if err := h(w, r); err != nil {
			var he *httpError
			code := http.StatusInternalServerError
			switch {
			case errors.As(err, &he):
				code = he.code
			case errors.Is(err, ErrFormat):
				code = http.StatusBadRequest
			case errors.Is(err, errChanged):
				code = http.StatusConflict
			case errors.Is(err, errDictSum):
				code = http.StatusPreconditionFailed
			}
			if code >= 500 && s.o.ErrorLog != nil {
				s.o.ErrorLog(err)
			}
			http.Error(w, err.Error(), code)
		}
	})
}

func (s *Server) authorized(r *http.Request) bool {
	if s.o.Token == "" {
		return true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], s.token[:]) == 1
}

func (s *Server) serveManifest(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/zstd")
	_, err := w.Write(s.manifest)
	return err
}

func badReq(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

func (s *Server) serveNodes(w http.ResponseWriter, r *http.Request) error {
	reqs, err := DecodeNodeReqs(r.Body)
	if err != nil {
		return err
	}
	resps := make([]NodeResp, len(reqs))
	leaf := make([]bool, len(reqs))
	for i, q := range reqs {
		sig, err := s.sig(q.File)
		if err != nil {
			return err
		}
		if q.Level >= len(sig.Levels) || q.Index >= len(sig.Levels[q.Level]) {
			return badReq("node %d of level %d of entry %d does not exist", q.Index, q.Level, q.File)
		}
		n := sig.Levels[q.Level][q.Index]
		resps[i].Lo = n.Lo
		leaf[i] = q.Level == 0
		for c := n.Lo; c < n.Hi; c++ {
			if q.Level == 0 {
				resps[i].Children = append(resps[i].Children, Child{Sum: ShortOf(sig.Chunks[c].Sum), Chunks: 1})
				continue
			}
			lo, hi := leafRange(sig, q.Level-1, c)
			resps[i].Children = append(resps[i].Children, Child{Sum: ShortOf(sig.Levels[q.Level-1][c].Sum), Chunks: hi - lo})
		}
	}
	var raw bytes.Buffer
	if err := EncodeNodeResps(&raw, resps, leaf); err != nil {
		return err
	}
	return s.writeZ(w, raw.Bytes())
}

func (s *Server) writeZ(w http.ResponseWriter, b []byte) error {
	w.Header().Set("Content-Type", "application/zstd")
	enc := s.encoder(w)
	defer s.encs.Put(enc)
	if _, err := enc.Write(b); err != nil {
		return err
	}
	return enc.Close()
}

func (s *Server) sig(file int) (*chunk.Signature, error) {
	if file < 0 || file >= len(s.t.Sigs) || s.t.Sigs[file] == nil {
		return nil, badReq("entry %d is not a file", file)
	}
	return s.t.Sigs[file], nil
}

var errDictSum = errors.New("rdc: the dictionary's checksum does not match its ranges")

// checkRanges checks ranges against the tree and returns their bytes.
func (s *Server) checkRanges(reqs []RangeReq) (int64, error) {
	var total int64
	for _, q := range reqs {
		sig, err := s.sig(q.File)
		if err != nil {
			return 0, err
		}
		if q.Hi > len(sig.Chunks) || q.Lo >= q.Hi {
			return 0, badReq("chunks %d-%d of entry %d do not exist", q.Lo, q.Hi, q.File)
		}
		last := sig.Chunks[q.Hi-1]
		total += last.Offset + int64(last.Length) - sig.Chunks[q.Lo].Offset
	}
	return total, nil
}

// readRanges calls each with every chunk of reqs (checked against its
// hash), in order.
func (s *Server) readRanges(ctx context.Context, reqs []RangeReq, each func([]byte)) error {
	var buf []byte
	for _, q := range reqs {
		if err := ctx.Err(); err != nil {
			return err
		}
		sig := s.t.Sigs[q.File]
		name := s.t.Manifest.Entries[q.File].Path
		off := sig.Chunks[q.Lo].Offset
		last := sig.Chunks[q.Hi-1]
		buf = append(buf[:0], make([]byte, last.Offset+int64(last.Length)-off)...)
		if err := s.readAt(name, buf, off); err != nil {
			return err
		}
		for c := q.Lo; c < q.Hi; c++ {
			ref := sig.Chunks[c]
			data := buf[ref.Offset-off : ref.Offset-off+int64(ref.Length)]
			if chunk.SumChunk(data) != ref.Sum {
				return fmt.Errorf("%w: %s", errChanged, name)
			}
			each(data)
		}
	}
	return nil
}

func (s *Server) serveChunks(w http.ResponseWriter, r *http.Request) error {
	q, err := DecodeChunksReq(r.Body)
	if err != nil {
		return err
	}
	total, err := s.checkRanges(q.Ranges)
	if err != nil {
		return err
	}
	if total > MaxRangeBytes {
		return badReq("%d bytes asked, over the limit %d", total, MaxRangeBytes)
	}
	var dict []byte
	if len(q.Dict) > 0 {
		dtotal, err := s.checkRanges(q.Dict)
		if err != nil {
			return err
		}
		if dtotal > MaxDictBytes {
			return badReq("a dictionary of %d bytes, over the limit %d", dtotal, MaxDictBytes)
		}
		dict = make([]byte, 0, dtotal)
		if err := s.readRanges(r.Context(), q.Dict, func(b []byte) { dict = append(dict, b...) }); err != nil {
			return err
		}
		if DictSumOf(dict) != q.DictSum {
			return errDictSum
		}
	}
	// Read and check everything before the reply starts, so that an
	// error is a status, not a cut stream.
	raw := bytes.NewBuffer(make([]byte, 0, total+int64(len(q.Ranges))*8+16))
	raw.WriteString(chunksMagic)
	var tmp [binary.MaxVarintLen64]byte
	if err := s.readRanges(r.Context(), q.Ranges, func(b []byte) {
		raw.Write(tmp[:binary.PutUvarint(tmp[:], uint64(len(b)))])
		raw.Write(b)
	}); err != nil {
		return err
	}
	if dict == nil {
		return s.writeZ(w, raw.Bytes())
	}
	w.Header().Set("Content-Type", "application/zstd")
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevel(s.o.Level)), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(16<<20), zstd.WithEncoderDictRaw(dictID, dict))
	if err != nil {
		return err
	}
	if _, err := enc.Write(raw.Bytes()); err != nil {
		enc.Close()
		return err
	}
	return enc.Close()
}

func (s *Server) readAt(name string, buf []byte, off int64) error {
	f, err := s.root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: %s", errChanged, name)
		}
		return err
	}
	return nil
}

// CheckAddr reports whether Serve would refuse to listen on addr.
func (s *Server) CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("rdc: address %q: %w", addr, err)
	}
	return s.checkHost(host)
}

func (s *Server) checkHost(host string) error { return listen.CheckHost(host, s.policy(), ErrInsecure) }

func (s *Server) policy() listen.Policy {
	return listen.Policy{Token: s.o.Token != "", TLS: s.o.TLS != nil, Insecure: s.o.Insecure}
}

// Serve serves on l until ctx ends, then shuts down (waiting up to ten
// seconds for requests in flight). A listener beyond loopback is refused
// as CheckAddr says.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if err := listen.CheckListener(l.Addr(), s.policy(), ErrInsecure); err != nil {
		l.Close()
		return err
	}
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      s.o.RequestTimeout + 10*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	if s.o.TLS != nil {
		hs.TLSConfig = s.o.TLS.Clone()
		l = tls.NewListener(l, hs.TLSConfig)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("rdc: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	<-errc
	return nil
}
