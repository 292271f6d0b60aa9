package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redis"
	"github.com/neardup/neardup/store/redis/redistest"
)

// words is the vocabulary of generated documents.
var words = func() []string {
	st := rng.New(rng.Key(11))
	w := make([]string, 5000)
	for i := range w {
		b := make([]byte, 3+st.Intn(6))
		for j := range b {
			b[j] = byte('a' + st.Intn(26))
		}
		w[i] = string(b)
	}
	return w
}()

// text returns a document of n words drawn with seed.
func text(seed uint64, n int) []string {
	st := rng.New(rng.Key(12, seed))
	out := make([]string, n)
	for i := range out {
		out[i] = words[st.Intn(uint64(len(words)))]
	}
	return out
}

// edit returns a copy of doc with changes words replaced (seeded): with
// 5-word shingles a 300-word document with 3 spread changes keeps Jaccard
// about (296−15)/(296+15) ≈ 0.9.
func edit(doc []string, seed uint64, changes int) []string {
	st := rng.New(rng.Key(13, seed))
	out := append([]string(nil), doc...)
	for i := range changes {
		pos := (i*len(out))/changes + int(st.Intn(uint64(len(out)/changes)))
		out[pos] = words[st.Intn(uint64(len(words)))] + "x"
	}
	return out
}

func join(w []string) string { return strings.Join(w, " ") }

// backendKinds are the stores every endpoint test runs against.
var backendKinds = []string{"pebble", "redis", "cluster"}

var prefixes atomic.Int64

// openStore opens an empty store of kind for t: Pebble in a temporary
// directory, or a fresh prefix on a redis-server (or cluster) started for
// t. url, when not "", reuses a running Redis.
func openStore(t testing.TB, kind, url string) store.Store {
	t.Helper()
	switch kind {
	case "pebble":
		st, err := store.OpenPebble(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	case "redis", "cluster":
		if url == "" {
			if kind == "redis" {
				url = redistest.Start(t).URL()
			} else {
				url = redistest.StartCluster(t, 3).URL()
			}
		}
		st, err := redis.Open(context.Background(), url, &redis.Options{Prefix: fmt.Sprintf("srv%d", prefixes.Add(1))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	t.Fatalf("unknown store kind %q", kind)
	return nil
}

// running is a server listening on a loopback port for one test.
type running struct {
	URL string
	C   *client.Client
	B   *server.IndexBackend
	S   *server.Server
}

// serve starts a server over st on 127.0.0.1 and stops it (gracefully,
// checking that Serve returns nil) when t ends.
func serve(t *testing.T, st store.Store, o server.Options, co *client.Options) *running {
	t.Helper()
	b, err := server.OpenIndex(st, server.IndexOptions{StoreName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v", err)
		}
	})
	scheme := "http"
	if o.TLS != nil {
		scheme = "https"
	}
	u := scheme + "://" + l.Addr().String()
	c, err := client.New(u, co)
	if err != nil {
		t.Fatal(err)
	}
	return &running{URL: u, C: c, B: b, S: s}
}

func doc(id string, w []string) api.Document { return api.Document{ID: id, Text: join(w)} }

func ids(ms []api.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// openStore2 opens a second store on the index (prefix) of another.
func openStore2(t *testing.T, url, prefix string) store.Store {
	t.Helper()
	st, err := redis.Open(context.Background(), url, &redis.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// testCert makes a self-signed certificate for 127.0.0.1 and returns the
// server's TLS configuration and a pool trusting it.
func testCert(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "neardup test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}, MinVersion: tls.VersionTLS12}, pool
}
