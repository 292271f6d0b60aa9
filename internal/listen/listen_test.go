package listen

import (
	"errors"
	"net"
	"strings"
	"testing"
)

var errTest = errors.New("test: refusing")

func TestCheckHost(t *testing.T) {
	for _, c := range []struct {
		host string
		p    Policy
		want string // "" allowed, else a part of the message
	}{
		{"localhost", Policy{}, ""},
		{"127.0.0.1", Policy{}, ""},
		{"127.9.9.9", Policy{}, ""},
		{"::1", Policy{}, ""},
		{"", Policy{}, "every interface needs a bearer token"},
		{"0.0.0.0", Policy{}, "0.0.0.0 needs a bearer token"},
		{"10.0.0.1", Policy{Token: true}, "needs TLS"},
		{"10.0.0.1", Policy{Token: true, TLS: true}, ""},
		{"10.0.0.1", Policy{Token: true, Insecure: true}, ""},
		{"10.0.0.1", Policy{TLS: true, Insecure: true}, "needs a bearer token"},
		{"example.com", Policy{}, "example.com needs a bearer token"},
	} {
		err := CheckHost(c.host, c.p, errTest)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckHost(%q, %+v) = %v, want nil", c.host, c.p, err)
		case c.want != "" && (err == nil || !errors.Is(err, errTest) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckHost(%q, %+v) = %v, want an error wrapping errTest with %q", c.host, c.p, err, c.want)
		}
	}
}

func TestCheckListener(t *testing.T) {
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 80}
	if err := CheckListener(lo, Policy{}, errTest); err != nil {
		t.Errorf("loopback: %v", err)
	}
	if err := CheckListener(any, Policy{}, errTest); !errors.Is(err, errTest) {
		t.Errorf("0.0.0.0 without a token: %v, want errTest", err)
	}
	if err := CheckListener(any, Policy{Token: true, TLS: true}, errTest); err != nil {
		t.Errorf("0.0.0.0 with token and TLS: %v", err)
	}
	unix := &net.UnixAddr{Name: "/tmp/s", Net: "unix"}
	if err := CheckListener(unix, Policy{}, errTest); !errors.Is(err, errTest) {
		t.Errorf("unix socket without a token: %v, want errTest", err)
	}
}
