package main

import (
	"crypto/tls"
	"os"

	"github.com/spf13/pflag"
)

// listenFlags are the flags of the commands that serve over HTTP (serve
// and files serve): where to listen, the bearer token and TLS. Both follow
// the same rules (internal/listen): loopback unless a token is given,
// beyond loopback only with TLS or --insecure.
type listenFlags struct {
	Addr     string
	Token    string
	Insecure bool
	TLSCert  string
	TLSKey   string
}

// bind registers the flags on fl, listening on defAddr by default.
func (l *listenFlags) bind(fl *pflag.FlagSet, defAddr string) {
	fl.StringVar(&l.Addr, "addr", defAddr, "address to listen on (port 0: a free one, printed on stderr)")
	fl.StringVar(&l.Token, "token", "", "bearer token every request must carry (required beyond loopback)")
	fl.BoolVar(&l.Insecure, "insecure", false, "allow listening beyond loopback without TLS")
	fl.StringVar(&l.TLSCert, "tls-cert", "", "TLS certificate file (PEM)")
	fl.StringVar(&l.TLSKey, "tls-key", "", "TLS key file (PEM)")
}

// tokenFromEnv takes the token from NEARDUP_TOKEN when --token is not
// given.
func (l *listenFlags) tokenFromEnv() {
	if l.Token == "" {
		l.Token = os.Getenv("NEARDUP_TOKEN")
	}
}

// tlsConfig loads --tls-cert and --tls-key (nil without them); a missing
// half or an unreadable pair is a usage error.
func (l *listenFlags) tlsConfig() (*tls.Config, error) {
	if (l.TLSCert == "") != (l.TLSKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	if l.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(l.TLSCert, l.TLSKey)
	if err != nil {
		return nil, usagef("--tls-cert/--tls-key: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
