package rdc

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Client talks to a Server. Make one with NewClient; safe for concurrent
// use. It counts the bytes it sends and receives on the wire (TCP payload,
// headers and TLS included) and the requests it makes.
type Client struct {
	base  string
	token string
	hc    *http.Client
	sent  atomic.Int64
	recv  atomic.Int64
	trips atomic.Int64
}

// ClientOptions configure a Client. The zero value: no token, the system's
// TLS roots.
type ClientOptions struct {
	// Token is sent as a bearer token.
	Token string
	// TLS configures HTTPS connections (for a private CA, say).
	TLS *tls.Config
	// Timeout bounds one request. The default is two minutes.
	Timeout time.Duration
}

// ErrServer reports an error reply from the server.
var ErrServer = errors.New("rdc: server error")

// ErrDict reports a chunks request whose dictionary the server refused:
// its checksum does not match the bytes of the ranges it names (the
// receiver's copy of them is not what the server holds).
var ErrDict = errors.New("rdc: dictionary does not match the server's")

// NewClient returns a client of the server at base (http://host:port or
// https://host:port).
func NewClient(base string, o ClientOptions) (*Client, error) {
	base = strings.TrimRight(base, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("rdc: URL %q: want http:// or https://", base)
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	c := &Client{base: base, token: o.Token}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: conn, c: c}, nil
		},
		TLSClientConfig:     o.TLS,
		MaxIdleConnsPerHost: 8,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	c.hc = &http.Client{Transport: tr, Timeout: o.Timeout}
	return c, nil
}

// Counts returns the bytes sent and received and the requests made so far.
func (c *Client) Counts() (sent, received, requests int64) {
	return c.sent.Load(), c.recv.Load(), c.trips.Load()
}

// CloseIdle closes idle connections.
func (c *Client) CloseIdle() { c.hc.CloseIdleConnections() }

type countingConn struct {
	net.Conn
	c *Client
}

func (cc *countingConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.recv.Add(int64(n))
	return n, err
}

func (cc *countingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.sent.Add(int64(n))
	return n, err
}

// do makes one request and returns the decompressed reply body.
// A non-nil dict is the raw zstd dictionary of the reply.
func (c *Client) do(ctx context.Context, method, path string, body []byte, limit int64, dict []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	c.trips.Add(1)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		kind := ErrServer
		if resp.StatusCode == http.StatusPreconditionFailed {
			kind = ErrDict
		}
		return nil, fmt.Errorf("%w: %s %s: %s: %s", kind, method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	dopts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1 << 30), zstd.WithDecoderMaxWindow(64 << 20)}
	if dict != nil {
		dopts = append(dopts, zstd.WithDecoderDictRaw(dictID, dict))
	}
	dec, err := zstd.NewReader(resp.Body, dopts...)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	out, err := io.ReadAll(io.LimitReader(dec, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s reply: %v", ErrFormat, path, err)
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("%w: %s reply over %d bytes", ErrFormat, path, limit)
	}
	return out, nil
}

// Manifest fetches the server's manifest.
func (c *Client) Manifest(ctx context.Context) (*Manifest, error) {
	b, err := c.do(ctx, "GET", "/v1/manifest", nil, 4<<30, nil)
	if err != nil {
		return nil, err
	}
	return DecodeManifest(bytes.NewReader(b))
}

// Nodes fetches the children of signature nodes; leaf[i] says whether
// reqs[i] is a level-0 node.
func (c *Client) Nodes(ctx context.Context, reqs []NodeReq) ([]NodeResp, error) {
	var body bytes.Buffer
	if err := EncodeNodeReqs(&body, reqs); err != nil {
		return nil, err
	}
	b, err := c.do(ctx, "POST", "/v1/nodes", body.Bytes(), int64(len(reqs))*200+1024, nil)
	if err != nil {
		return nil, err
	}
	leaf := make([]bool, len(reqs))
	for i, q := range reqs {
		leaf[i] = q.Level == 0
	}
	return DecodeNodeResps(bytes.NewReader(b), leaf)
}

// Chunks fetches chunk ranges; the reply is read with NewChunkReader.
// When q names a dictionary, dict holds its bytes (whose checksum is
// q.DictSum); a dictionary the server does not hold alike is refused
// with ErrDict.
func (c *Client) Chunks(ctx context.Context, q *ChunksReq, dict []byte) ([]byte, error) {
	var body bytes.Buffer
	if err := EncodeChunksReq(&body, q); err != nil {
		return nil, err
	}
	if len(q.Dict) == 0 {
		dict = nil
	}
	return c.do(ctx, "POST", "/v1/chunks", body.Bytes(), MaxRangeBytes+MaxRangeChunks*8+64, dict)
}

// dictID is the zstd dictionary id of replies compressed with a
// dictionary (any id but 0 would do: both sides know the dictionary).
const dictID = 1
