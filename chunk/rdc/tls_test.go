package rdc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// A pull over TLS with a token: the client trusts the server's
// certificate through its own pool and carries the bearer token.
func TestPullTLS(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}

	oldDir, newDir := trees(t)
	tree, err := Scan(context.Background(), newDir, DefaultChunk)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(tree, ServerOptions{Token: "tok", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	defer func() { cancel(); <-done }()

	c, err := NewClient("https://"+l.Addr().String(), ClientOptions{Token: "tok", TLS: &tls.Config{RootCAs: pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	if _, err := Pull(context.Background(), c, oldDir, PullOptions{Delete: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
		t.Fatal("tree differs after a pull over TLS")
	}
	// Without the CA the client refuses the server.
	bad, _ := NewClient("https://"+l.Addr().String(), ClientOptions{Token: "tok"})
	if _, err := bad.Manifest(context.Background()); err == nil {
		t.Error("an untrusted certificate was accepted")
	}
}
