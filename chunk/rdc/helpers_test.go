package rdc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// spec describes a tree: path -> content; "dir/" makes a directory,
// "@target" a symbolic link; mode follows "|0755" in the key.
type spec map[string]string

func writeTree(t testing.TB, dir string, s spec) {
	t.Helper()
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s[k]
		name, mode := k, fs.FileMode(0o644)
		if i := strings.IndexByte(k, '|'); i >= 0 {
			name = k[:i]
			var m uint32
			fmt.Sscanf(k[i+1:], "%o", &m)
			mode = fs.FileMode(m)
		}
		p := filepath.Join(dir, name)
		switch {
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if mode != 0o644 {
				os.Chmod(p, mode)
			}
		case strings.HasPrefix(v, "@"):
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(v[1:], p); err != nil {
				t.Fatal(err)
			}
		default:
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(v), mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, mode)
		}
	}
}

// listTree describes every entry under dir: type, mode, content or
// target, one line each, sorted.
func listTree(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			lines = append(lines, fmt.Sprintf("d %s %o", rel, fi.Mode().Perm()))
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			lines = append(lines, fmt.Sprintf("l %s -> %s", rel, tg))
		default:
			b, _ := os.ReadFile(p)
			sum := fmt.Sprintf("%x", b)
			if len(b) > 40 {
				sum = fmt.Sprintf("%d bytes %v", len(b), ShortOf(sumBytes(b)))
			}
			lines = append(lines, fmt.Sprintf("f %s %o %s", rel, fi.Mode().Perm(), sum))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// randText returns n bytes of pseudo-random words (compressible like
// source text, but with few repeats at chunk scale).
func randText(r *rand.Rand, n int) string {
	words := []string{"func", "return", "if", "err", "nil", "for", "range", "var", "type", "struct", "int", "string", "map", "go", "defer"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteString(fmt.Sprint(r.IntN(1000)))
		if r.IntN(8) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()[:n]
}

// testServer serves dir on a loopback port until the test ends.
type testServer struct {
	URL    string
	srv    *Server
	cancel context.CancelFunc
	done   chan error
}

func serveDir(t testing.TB, dir string, o ServerOptions) *testServer {
	t.Helper()
	tree, err := Scan(context.Background(), dir, DefaultChunk)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(tree, o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{URL: "http://" + l.Addr().String(), srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(ctx, l) }()
	t.Cleanup(ts.Stop)
	return ts
}

func (ts *testServer) Stop() {
	if ts.cancel != nil {
		ts.cancel()
		<-ts.done
		ts.srv.Close()
		ts.cancel = nil
	}
}

func pullURL(t testing.TB, url, dir string, o PullOptions) (*Stats, error) {
	t.Helper()
	c, err := NewClient(url, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	return Pull(context.Background(), c, dir, o)
}

// noTemps fails if a pull left a temporary file or directory in dir.
func noTemps(t testing.TB, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// proxy forwards loopback connections to target, passing the server's
// bytes through tamper (which may change them or cut the connection by
// returning an error).
type proxy struct {
	l      net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	tamper func(conn int, off int64, b []byte) error
	nconn  int
}

func newProxy(t testing.TB, target string, tamper func(conn int, off int64, b []byte) error) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, tamper: tamper}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			id := p.nconn
			p.nconn++
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { copyBuf(s, c, nil); s.Close() }()
			go func() {
				copyBuf(c, s, func(off int64, b []byte) error { return p.tamper(id, off, b) })
				c.Close()
			}()
		}
	}()
	t.Cleanup(p.Close)
	return p
}

func (p *proxy) URL() string { return "http://" + p.l.Addr().String() }

func (p *proxy) Close() {
	p.l.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

func copyBuf(dst, src net.Conn, tamper func(int64, []byte) error) {
	buf := make([]byte, 32<<10)
	var off int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if tamper != nil {
				if terr := tamper(off, buf[:n]); terr != nil {
					return
				}
			}
			off += int64(n)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

var errCut = errors.New("cut")

var _ = bytes.Equal

func sumBytes(b []byte) [32]byte { return sumChunk(b) }
