// Package listen holds the one rule both of neardup's HTTP servers
// (package server, the index's API, and package chunk/rdc, the file tree
// server) follow for where they may listen: on loopback always, beyond
// loopback only with a bearer token, and then only over TLS unless the
// caller says a TLS proxy stands in front (Insecure).
//
// It is ground, not a server: it only checks a host or a listener's
// address against a Policy and wraps the caller's own sentinel error, so
// that each server keeps reporting its own ErrInsecure.
package listen

import (
	"fmt"
	"net"
)

// Policy is what a server has that allows it beyond loopback.
type Policy struct {
	// Token is whether requests must carry a bearer token.
	Token bool
	// TLS is whether the server speaks TLS.
	TLS bool
	// Insecure allows plain HTTP beyond loopback (behind a TLS proxy).
	Insecure bool
}

// CheckHost returns nil for a loopback host ("localhost" or a loopback IP)
// and for any host when p allows it; otherwise an error wrapping
// errInsecure that says what is missing. The empty host means every
// interface.
func CheckHost(host string, p Policy, errInsecure error) error {
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "" {
		host = "every interface"
	}
	if !p.Token {
		return fmt.Errorf("%w: listening on %s needs a bearer token", errInsecure, host)
	}
	if !p.TLS && !p.Insecure {
		return fmt.Errorf("%w: listening on %s needs TLS (or Insecure, behind a TLS proxy)", errInsecure, host)
	}
	return nil
}

// CheckListener is CheckHost for the address a listener is bound to: a
// TCP address by its IP, any other by its string form.
func CheckListener(a net.Addr, p Policy, errInsecure error) error {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ta.IP.IsLoopback() {
			return nil
		}
		return CheckHost(ta.IP.String(), p, errInsecure)
	}
	return CheckHost(a.String(), p, errInsecure)
}
