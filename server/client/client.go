// Package client provides a Go client of neardup's HTTP API (package
// server): adds and queries split into batches the server accepts,
// requests retried with exponential backoff when the server is busy,
// unreachable or times out, and server errors returned as *Error values
// carrying the status and the offending field.
//
// Retrying an add is safe: adding an id again replaces the document with
// the same content, and the near-duplicates a document is checked against
// never include its own id. The client is not a cache and keeps no state
// beyond its connections.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/neardup/neardup/server/api"
)

// Options configure a Client. The zero value gives the defaults.
type Options struct {
	// Token is sent as "Authorization: Bearer <Token>" when not empty.
	Token string
	// HTTPClient makes the requests. The default is a client with a
	// 60-second timeout per attempt.
	HTTPClient *http.Client
	// MaxRetries is the number of retries after a failed attempt (network
	// error, 429, 502, 503, 504). The default is 4; negative means none.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the wait before a retry, which
	// doubles from MinBackoff (with jitter) up to MaxBackoff, or follows
	// the server's Retry-After. Defaults 50 ms and 2 s.
	MinBackoff, MaxBackoff time.Duration
	// BatchSize is the number of documents per request of Add and Query.
	// The default is 256 (the server accepts up to 1,000 by default).
	BatchSize int
}

// Client talks to one neardup server. It is safe for concurrent use.
type Client struct {
	base *url.URL
	o    Options
}

// ErrNotFound is returned (wrapped in *Error) for a 404.
var ErrNotFound = errors.New("client: not found")

// Error is a reply with an error status from the server.
type Error struct {
	StatusCode int
	// Message and Field are the server's api.Error.
	Message, Field string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("neardup server: %d: %s (field %s)", e.StatusCode, e.Message, e.Field)
	}
	return fmt.Sprintf("neardup server: %d: %s", e.StatusCode, e.Message)
}

// Is makes a 404 match ErrNotFound.
func (e *Error) Is(target error) bool {
	return target == ErrNotFound && e.StatusCode == http.StatusNotFound
}

// New returns a client of the server at baseURL ("http://127.0.0.1:8080").
// o may be nil.
func New(baseURL string, o *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q, want http(s)://host:port", baseURL)
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 4
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 50 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 2 * time.Second
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return &Client{base: u, o: opts}, nil
}

// retryable reports whether a status is worth another attempt.
func retryable(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// do sends a request with retries and decodes a 200 reply into out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = api.AppendJSON(nil, in); err != nil {
			return fmt.Errorf("client: %w", err)
		}
	}
	u := c.base.String() + path // path is escaped already
	var lastErr error
	for attempt := 0; ; attempt++ {
		wait, err := c.once(ctx, method, u, body, out)
		if err == nil {
			return nil
		}
		lastErr = err
		if wait < 0 || attempt >= c.o.MaxRetries || c.o.MaxRetries < 0 {
			return lastErr
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("client: %w (last error: %v)", ctx.Err(), lastErr)
		case <-t.C:
		}
	}
}

// backoff returns MinBackoff·2^attempt with ±50% jitter, at most
// MaxBackoff.
func (c *Client) backoff(attempt int) time.Duration {
	d := float64(c.o.MinBackoff) * math.Pow(2, float64(attempt))
	var b [8]byte
	rand.Read(b[:])
	jitter := 0.5 + float64(binary.LittleEndian.Uint64(b[:])>>11)/(1<<53)
	return time.Duration(min(d*jitter, float64(c.o.MaxBackoff)))
}

// once makes one attempt. It returns the wait before a retry: -1 for no
// retry, 0 for the default backoff, or the server's Retry-After.
func (c *Client) once(ctx context.Context, method, u string, body []byte, out any) (time.Duration, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return -1, fmt.Errorf("client: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.o.Token)
	}
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, fmt.Errorf("client: %w", err)
		}
		return 0, fmt.Errorf("client: %w", err) // network: retry
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return 0, fmt.Errorf("client: reading reply: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var ae api.Error
		if json.Unmarshal(data, &ae) != nil || ae.Error == "" {
			ae.Error = strings.TrimSpace(string(data))
		}
		e := &Error{StatusCode: resp.StatusCode, Message: ae.Error, Field: ae.Field}
		if !retryable(resp.StatusCode) {
			return -1, e
		}
		var wait time.Duration
		if s := resp.Header.Get("Retry-After"); s != "" {
			var secs int
			if _, err := fmt.Sscan(s, &secs); err == nil && secs > 0 {
				wait = min(time.Duration(secs)*time.Second, c.o.MaxBackoff)
			}
		}
		return wait, e
	}
	if out == nil {
		return 0, nil
	}
	if api.DecodeFast(data, out) {
		return 0, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return -1, fmt.Errorf("client: decoding reply of %s %s: %w", method, u, err)
	}
	return 0, nil
}

// Add adds docs in batches of BatchSize, in order, and returns one result
// per document. With ifNew a document is added only when no near-duplicate
// is found, also among the earlier documents (batches are committed in
// turn). On an error, the results of the batches already committed are
// returned with it.
func (c *Client) Add(ctx context.Context, docs []api.Document, ifNew bool) ([]api.AddResult, error) {
	return inBatches(ctx, c, "/v1/documents", docs, func(batch []api.Document) any {
		return api.AddRequest{Documents: batch, IfNew: ifNew}
	}, func(r *api.AddResponse) []api.AddResult { return r.Results })
}

// Query returns the near-duplicates of each document, in batches of
// BatchSize.
func (c *Client) Query(ctx context.Context, docs []api.Document) ([]api.QueryResult, error) {
	return inBatches(ctx, c, "/v1/query", docs, func(batch []api.Document) any {
		return api.QueryRequest{Documents: batch}
	}, func(r *api.QueryResponse) []api.QueryResult { return r.Results })
}

// QuerySketches returns the near-duplicates of sketches made by the
// caller (sketch.Sketch.MarshalBinary, with the index's header), in
// batches of BatchSize.
func (c *Client) QuerySketches(ctx context.Context, sks []api.Sketch) ([]api.QueryResult, error) {
	return inBatches(ctx, c, "/v1/query", sks, func(batch []api.Sketch) any {
		return api.QueryRequest{Sketches: batch}
	}, func(r *api.QueryResponse) []api.QueryResult { return r.Results })
}

// inBatches posts items to path in turn, BatchSize at a time, each batch
// in the request body made by body, and collects the results of every
// reply (results picks them out), one per item. On an error the results
// of the batches already answered are returned with it.
func inBatches[T, Resp, R any](ctx context.Context, c *Client, path string, items []T, body func([]T) any, results func(*Resp) []R) ([]R, error) {
	res := make([]R, 0, len(items))
	for len(items) > 0 {
		n := min(len(items), c.o.BatchSize)
		var out Resp
		if err := c.do(ctx, "POST", path, body(items[:n]), &out); err != nil {
			return res, err
		}
		got := results(&out)
		if len(got) != n {
			return res, fmt.Errorf("client: %d results for %d items", len(got), n)
		}
		res = append(res, got...)
		items = items[n:]
	}
	return res, nil
}

// Get returns a stored document's information; a missing one gives an
// error matching ErrNotFound.
func (c *Client) Get(ctx context.Context, id string) (*api.DocumentInfo, error) {
	var out api.DocumentInfo
	if err := c.do(ctx, "GET", "/v1/documents/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Remove deletes a document; a missing one gives an error matching
// ErrNotFound.
func (c *Client) Remove(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", "/v1/documents/"+url.PathEscape(id), nil, nil)
}

// Collapse collapses a ranked list of ids (best first).
func (c *Client) Collapse(ctx context.Context, ids []string) (*api.CollapseResponse, error) {
	var out api.CollapseResponse
	if err := c.do(ctx, "POST", "/v1/collapse", api.CollapseRequest{IDs: ids}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Backup asks the server to write a consistent copy of its index into
// dir, an absolute path on the server's machine that must not exist
// (POST /v1/admin/backup; the server needs a token).
func (c *Client) Backup(ctx context.Context, dir string) (*api.BackupResponse, error) {
	var out api.BackupResponse
	if err := c.do(ctx, "POST", "/v1/admin/backup", api.BackupRequest{Dir: dir}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Stats returns the server's statistics.
func (c *Client) Stats(ctx context.Context) (*api.Stats, error) {
	var out api.Stats
	if err := c.do(ctx, "GET", "/v1/stats", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Ready returns nil when the server reports itself ready (without
// retrying).
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.once(ctx, "GET", c.base.String()+"/readyz", nil, nil)
	return err
}
