package redis

import (
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, goURL, prefix string
		cluster           bool
	}{
		{"redis://127.0.0.1:6379", "redis://127.0.0.1:6379", "", false},
		{"redis://u:p@h:1/2?prefix=idx&pool_size=3", "redis://u:p@h:1/2?pool_size=3", "idx", false},
		{"rediss://h:1", "rediss://h:1", "", false},
		{"redis+cluster://a:1,b:2,c:3?prefix={x}", "redis://a:1?addr=b%3A2&addr=c%3A3", "{x}", true},
		{"rediss+cluster://u:p@a:1,b:2", "rediss://u:p@a:1?addr=b%3A2", "", true},
		{"redis://h:1?journal_expiry=90s&prefix=p", "redis://h:1", "p", false},
	} {
		goURL, cluster, prefix, expiry, err := parseURL(c.in)
		if strings.Contains(c.in, "journal_expiry") && expiry != 90*time.Second {
			t.Errorf("parseURL(%q): journal expiry %v", c.in, expiry)
		}
		if err != nil || goURL != c.goURL || cluster != c.cluster || prefix != c.prefix {
			t.Errorf("parseURL(%q) = %q %v %q %v, want %q %v %q", c.in, goURL, cluster, prefix, err, c.goURL, c.cluster, c.prefix)
		}
	}
	for _, bad := range []string{"redis://h:1?journal_expiry=soon", "redis://h:1?journal_expiry=-1s"} {
		if _, _, _, _, err := parseURL(bad); err == nil {
			t.Errorf("parseURL(%q) accepted", bad)
		}
	}
	if s := redact("redis://user:hunter2@h:1"); strings.Contains(s, "hunter2") {
		t.Errorf("redact: %s", s)
	}
	if s := redact("redis+cluster://user:hunter2@a:1,b:2"); strings.Contains(s, "hunter2") {
		t.Errorf("redact: %s", s)
	}
}

func TestKeyspace(t *testing.T) {
	k := keyspace{prefix: "idx"}
	name := string(k.posting(nil, 0x0102030405060708))
	if name != "idx:p:\x01\x02\x03\x04\x05\x06\x07\x08" {
		t.Errorf("posting key %q", name)
	}
	if v, ok := k.parsePosting(name); !ok || v != 0x0102030405060708 {
		t.Errorf("parsePosting = %x %v", v, ok)
	}
	for _, other := range []string{"idx:p:short", "idy:p:12345678", "idx:d:12345678", "idx:p:123456789"} {
		if _, ok := k.parsePosting(other); ok {
			t.Errorf("parsePosting(%q) accepted", other)
		}
	}
	for p, want := range map[string]bool{"idx": false, "{idx}": true, "a{b}c": true, "{}": false, "{x": false, "x}{y}": true} {
		if got := (keyspace{prefix: p}).oneSlot(); got != want {
			t.Errorf("oneSlot(%q) = %v", p, got)
		}
	}
	for _, bad := range []string{"", "a*", "a b", "a?", "a[b]", strings.Repeat("a", 201)} {
		if checkPrefix(bad) == nil {
			t.Errorf("checkPrefix(%q) accepted", bad)
		}
	}
}

// FuzzParseURL: any string gives an error or a URL, never a panic, and
// the same answer twice; a password never appears in a redacted form.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"redis://h:1", "redis+cluster://a:1,b:2?prefix=x", "rediss://u:p@h/3?x=%zz", "redis://@,", "://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g1, c1, p1, x1, e1 := parseURL(s)
		g2, c2, p2, x2, e2 := parseURL(s)
		if g1 != g2 || c1 != c2 || p1 != p2 || x1 != x2 || (e1 == nil) != (e2 == nil) {
			t.Fatalf("parseURL(%q) not deterministic", s)
		}
		redact(s)
	})
}
