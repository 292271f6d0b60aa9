package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/sketch"
)

// handlerFunc is an endpoint: it writes a successful reply itself and
// returns an error for everything else, which adapt turns into a JSON
// error reply in one place.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// httpError is an error with the status code and request field it maps
// to.
type httpError struct {
	code  int
	field string
	msg   string
}

func (e *httpError) Error() string { return e.msg }

func errorf(code int, field, format string, args ...any) error {
	return &httpError{code: code, field: field, msg: fmt.Sprintf(format, args...)}
}

// statusRecorder remembers the status code written, for metrics.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// adapt wraps an endpoint with what every request goes through: latency
// metrics, the token check, the in-flight limit, the request timeout, the
// body size limit, and the mapping of errors to replies.
func (s *Server) adapt(rt route) http.Handler {
	label := rt.method + " " + rt.path
	if rt.method == "" {
		label = "unmatched"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if rec.code == 0 {
				rec.code = http.StatusOK
			}
			s.m.latency.WithLabelValues(label, strconv.Itoa(rec.code)).Observe(time.Since(start).Seconds())
		}()
		if rt.auth && !s.authorized(r) {
			s.m.rejected.WithLabelValues("unauthorized").Inc()
			rec.Header().Set("WWW-Authenticate", `Bearer realm="neardup"`)
			s.writeError(rec, errorf(http.StatusUnauthorized, "", "missing or wrong bearer token"))
			return
		}
		if rt.raw != nil {
			rt.raw.ServeHTTP(rec, r)
			return
		}
		if rt.limit {
			if !s.acquire(r.Context()) {
				s.m.rejected.WithLabelValues("busy").Inc()
				rec.Header().Set("Retry-After", "1")
				s.writeError(rec, errorf(http.StatusServiceUnavailable, "", "server busy: %d requests in flight", s.o.MaxInFlight))
				return
			}
			s.m.inFlight.Inc()
			defer func() { <-s.slots; s.m.inFlight.Dec() }()
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		if r.Body != nil {
			r.Body = http.MaxBytesReader(rec, r.Body, s.o.MaxBodyBytes)
		}
		if err := rt.h(rec, r); err != nil {
			s.writeError(rec, err)
		}
	})
}

// acquire takes an in-flight slot, waiting up to QueueTimeout.
func (s *Server) acquire(ctx context.Context) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(s.o.QueueTimeout)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// writeError maps err to a status and writes it as api.Error.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	var he *httpError
	switch {
	case errors.As(err, &he):
	case errors.Is(err, ErrInput):
		he = &httpError{code: http.StatusBadRequest, msg: strings.TrimPrefix(err.Error(), ErrInput.Error()+": ")}
	case errors.Is(err, context.DeadlineExceeded):
		he = &httpError{code: http.StatusGatewayTimeout, msg: fmt.Sprintf("request not done within %v", s.o.RequestTimeout)}
	case errors.Is(err, context.Canceled):
		he = &httpError{code: http.StatusServiceUnavailable, msg: "request canceled"}
	default:
		s.m.storeErrors.Inc()
		if s.o.ErrorLog != nil {
			s.o.ErrorLog(err)
		}
		he = &httpError{code: http.StatusInternalServerError, msg: "index failure: " + err.Error()}
	}
	writeJSON(w, he.code, api.Error{Error: he.msg, Field: he.field})
}

// bufs holds the buffers request bodies are read into and replies
// encoded in.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooled bounds the buffers kept for reuse.
const maxPooled = 1 << 20

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		bufs.Put(b)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) error {
	bp := bufs.Get().(*[]byte)
	defer putBuf(bp)
	b, err := api.AppendJSON((*bp)[:0], v)
	*bp = b
	if err != nil {
		return err
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = nosniff
	w.WriteHeader(code)
	*bp = append(b, '\n')
	_, err = w.Write(*bp)
	return err
}

var (
	jsonContentType = []string{"application/json"}
	nosniff         = []string{"nosniff"}
)

// decode reads one JSON object from the body into v, refusing unknown
// fields and trailing data, and names the problem of a bad body.
func (s *Server) decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return errorf(http.StatusUnsupportedMediaType, "", "Content-Type %q, want application/json", ct)
		}
	}
	bp := bufs.Get().(*[]byte)
	defer putBuf(bp)
	body, err := readAll((*bp)[:0], r.Body)
	*bp = body
	if err != nil {
		return s.jsonError(err)
	}
	if api.DecodeFast(body, v) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return s.jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return s.jsonError(err)
		}
		return errorf(http.StatusBadRequest, "", "invalid JSON: data after the top-level object")
	}
	return nil
}

// readAll appends everything r holds to dst.
func readAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

func (s *Server) jsonError(err error) error {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, "", "request body larger than %d bytes", mbe.Limit)
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "", "empty request body, want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, "", "invalid JSON: body ends in the middle of a value")
	case errors.As(err, &se):
		return errorf(http.StatusBadRequest, "", "invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(body)"
		}
		return errorf(http.StatusBadRequest, te.Field, "field %s: JSON %s where %s is wanted", field, te.Value, jsonType(te.Type.Kind().String()))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return errorf(http.StatusBadRequest, f, "unknown field %q", f)
	}
	return errorf(http.StatusBadRequest, "", "invalid JSON: %v", err)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a number"
}

// checkID validates a document id.
func (s *Server) checkID(field, id string) error {
	switch {
	case id == "":
		return errorf(http.StatusBadRequest, field, "%s: empty id", field)
	case len(id) > s.o.MaxIDBytes:
		return errorf(http.StatusBadRequest, field, "%s: id of %d bytes, limit %d", field, len(id), s.o.MaxIDBytes)
	case !utf8.ValidString(id):
		return errorf(http.StatusBadRequest, field, "%s: id is not valid UTF-8", field)
	}
	return nil
}

func (s *Server) checkDocuments(docs []api.Document) error {
	if len(docs) == 0 {
		return errorf(http.StatusBadRequest, "documents", "documents: empty, want 1 to %d documents", s.o.MaxDocuments)
	}
	if len(docs) > s.o.MaxDocuments {
		return errorf(http.StatusRequestEntityTooLarge, "documents", "documents: %d in one request, limit %d", len(docs), s.o.MaxDocuments)
	}
	for i, d := range docs {
		if err := s.checkID(fmt.Sprintf("documents[%d].id", i), d.ID); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) addDocuments(w http.ResponseWriter, r *http.Request) error {
	var req api.AddRequest
	if err := s.decode(r, &req); err != nil {
		return err
	}
	if v := r.URL.Query().Get("if_new"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errorf(http.StatusBadRequest, "if_new", "query parameter if_new=%q, want true or false", v)
		}
		req.IfNew = req.IfNew || b
	}
	if err := s.checkDocuments(req.Documents); err != nil {
		return err
	}
	res, err := s.b.Add(r.Context(), req.Documents, req.IfNew)
	if err != nil {
		return err
	}
	out := api.AddResponse{Results: res}
	for _, x := range res {
		if x.Added {
			out.Added++
		}
	}
	s.m.documents.WithLabelValues("added").Add(float64(out.Added))
	s.m.documents.WithLabelValues("skipped").Add(float64(len(res) - out.Added))
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) query(w http.ResponseWriter, r *http.Request) error {
	var req api.QueryRequest
	if err := s.decode(r, &req); err != nil {
		return err
	}
	switch {
	case len(req.Documents) > 0 && len(req.Sketches) > 0:
		return errorf(http.StatusBadRequest, "sketches", "documents and sketches in one request: send one or the other")
	case len(req.Sketches) > 0:
		return s.querySketches(w, r, req.Sketches)
	}
	if err := s.checkDocuments(req.Documents); err != nil {
		return err
	}
	res, err := s.b.Query(r.Context(), req.Documents)
	if err != nil {
		return err
	}
	s.m.documents.WithLabelValues("queried").Add(float64(len(res)))
	return writeJSON(w, http.StatusOK, api.QueryResponse{Results: res})
}

func (s *Server) querySketches(w http.ResponseWriter, r *http.Request, sks []api.Sketch) error {
	if len(sks) > s.o.MaxDocuments {
		return errorf(http.StatusRequestEntityTooLarge, "sketches", "sketches: %d in one request, limit %d", len(sks), s.o.MaxDocuments)
	}
	want := s.b.Header()
	res := make([]api.QueryResult, len(sks))
	var sk sketch.Sketch
	for i, q := range sks {
		field := fmt.Sprintf("sketches[%d].sketch", i)
		if err := sk.UnmarshalBinary(q.Sketch); err != nil {
			return errorf(http.StatusBadRequest, field, "%s: %v", field, err)
		}
		if f, msg := headerDiff(want, sk.Header); f != "" {
			return errorf(http.StatusBadRequest, field+"."+f, "%s.%s: %s", field, f, msg)
		}
		ms, err := s.b.QuerySketch(r.Context(), &sk)
		if err != nil {
			return err
		}
		res[i] = api.QueryResult{ID: q.ID, Matches: ms}
	}
	s.m.documents.WithLabelValues("queried").Add(float64(len(res)))
	return writeJSON(w, http.StatusOK, api.QueryResponse{Results: res})
}

// headerDiff names the first field in which a client's sketch header
// differs from the index's, and says how.
func headerDiff(want, got sketch.Header) (field, msg string) {
	d := func(f string, g, w any) (string, string) {
		return f, fmt.Sprintf("sketch has %v, the index %v", g, w)
	}
	switch {
	case want.Algorithm != got.Algorithm:
		return d("algorithm", got.Algorithm, want.Algorithm)
	case want.Version != got.Version:
		return d("version", got.Version, want.Version)
	case want.Seed != got.Seed:
		return d("seed", fmt.Sprintf("%#x", got.Seed), fmt.Sprintf("%#x", want.Seed))
	case want.K != got.K:
		return d("k", got.K, want.K)
	case want.Bits != got.Bits:
		return d("bits", got.Bits, want.Bits)
	case want.Features != got.Features:
		return d("features", fmt.Sprintf("%#x", got.Features), fmt.Sprintf("%#x", want.Features))
	case want.Params != got.Params:
		return d("params", fmt.Sprintf("%#x", got.Params), fmt.Sprintf("%#x", want.Params))
	}
	return "", ""
}

func (s *Server) getDocument(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := s.checkID("id", id); err != nil {
		return err
	}
	info, ok, err := s.b.Get(r.Context(), id)
	if err != nil {
		return err
	}
	if !ok {
		return errorf(http.StatusNotFound, "id", "no document with id %q", id)
	}
	return writeJSON(w, http.StatusOK, info)
}

func (s *Server) deleteDocument(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := s.checkID("id", id); err != nil {
		return err
	}
	ok, err := s.b.Remove(r.Context(), id)
	if err != nil {
		return err
	}
	if !ok {
		return errorf(http.StatusNotFound, "id", "no document with id %q", id)
	}
	s.m.documents.WithLabelValues("removed").Inc()
	return writeJSON(w, http.StatusOK, api.DeleteResponse{ID: id, Removed: true})
}

func (s *Server) collapse(w http.ResponseWriter, r *http.Request) error {
	var req api.CollapseRequest
	if err := s.decode(r, &req); err != nil {
		return err
	}
	if len(req.IDs) == 0 {
		return errorf(http.StatusBadRequest, "ids", "ids: empty, want 1 to %d ids", s.o.MaxIDs)
	}
	if len(req.IDs) > s.o.MaxIDs {
		return errorf(http.StatusRequestEntityTooLarge, "ids", "ids: %d in one request, limit %d", len(req.IDs), s.o.MaxIDs)
	}
	for i, id := range req.IDs {
		if err := s.checkID(fmt.Sprintf("ids[%d]", i), id); err != nil {
			return err
		}
	}
	res, err := s.b.Collapse(r.Context(), req.IDs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// backup writes a checkpoint of the index (Backend.Backup). It needs a
// token: without one any local process could make the server write
// where it likes.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	if s.o.Token == "" {
		return errorf(http.StatusForbidden, "", "backups need a server started with a token")
	}
	var req api.BackupRequest
	if err := s.decode(r, &req); err != nil {
		return err
	}
	if !filepath.IsAbs(req.Dir) {
		return errorf(http.StatusBadRequest, "dir", "dir %q: want an absolute path on the server's machine", req.Dir)
	}
	start := time.Now()
	if err := s.b.Backup(r.Context(), filepath.Clean(req.Dir)); err != nil {
		if errors.Is(err, ErrUnsupported) {
			return errorf(http.StatusNotImplemented, "", "%v", err)
		}
		if errors.Is(err, ErrInput) {
			return errorf(http.StatusBadRequest, "dir", "%v", err)
		}
		if errors.Is(err, ErrBackup) {
			code := http.StatusInternalServerError
			if errors.Is(err, syscall.ENOSPC) {
				code = http.StatusInsufficientStorage
			}
			return errorf(code, "dir", "%v", err)
		}
		return err
	}
	return writeJSON(w, http.StatusOK, api.BackupResponse{Dir: req.Dir, Seconds: time.Since(start).Seconds()})
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.b.Stats(r.Context())
	if err != nil {
		return err
	}
	st.UptimeSeconds = time.Since(s.started).Seconds()
	return writeJSON(w, http.StatusOK, st)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.b.Ready(ctx); err != nil {
		return errorf(http.StatusServiceUnavailable, "", "not ready: %v", err)
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPI)
	return err
}

// unmatched answers requests no route matches: 405 with Allow when the
// path exists with other methods, else 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, rt := range s.routes() {
		if pathMatches(rt.path, r.URL.Path) {
			allow = append(allow, rt.method)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return errorf(http.StatusMethodNotAllowed, "", "method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", "))
	}
	return errorf(http.StatusNotFound, "", "no endpoint %s", r.URL.Path)
}

// pathMatches matches a path against a route pattern whose wildcards are
// whole segments ("{id}").
func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if p != xs[i] {
			return false
		}
	}
	return true
}
