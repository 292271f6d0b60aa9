package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/rabin"
)

// The forging attack of issue 28, against the public `neardup fingerprint`
// command: a Rabin fingerprint is affine over GF(2) for bodies of one
// length, so the fingerprints of a base page and of the base with each
// letter flipped ('a' -> 'c', one bit) give the linear map, and Gaussian
// elimination picks the flips whose page has the victim's fingerprint. The
// page it writes shares no word with the victim. Earlier releases dropped
// the victim as identical; now the identity is a keyed 128-bit BLAKE3
// fingerprint plus the length, so the forgery must leave both pages kept
// by dedup (in memory, out of core, and against an index of an earlier
// run) and unmatched by index query and the server's add with if_new. The
// same elimination run against the public 128-bit default of the command
// finds no collision at all (BLAKE3 is not linear).

// victim is a 160-letter page of ordinary text.
const victim = "Permission is hereby granted free of charge to any person obtaining a copy of this software to deal in the Software without restriction including use copy merge"

// gf2 is a vector of up to 128 bits over GF(2).
type gf2 [2]uint64

// solveGF2 returns a subset of cols (as a mask) whose sum is target, or
// false when target is not in their span.
func solveGF2(cols []gf2, target gf2) ([]bool, bool) {
	type row struct {
		v     gf2
		comb  []bool
		pivot int
	}
	bit := func(v gf2, i int) bool { return v[i/64]>>(i%64)&1 == 1 }
	var basis []row
	for i, c := range cols {
		r := row{v: c, comb: make([]bool, len(cols))}
		r.comb[i] = true
		for _, b := range basis {
			if bit(r.v, b.pivot) {
				r.v[0] ^= b.v[0]
				r.v[1] ^= b.v[1]
				for j := range r.comb {
					r.comb[j] = r.comb[j] != b.comb[j]
				}
			}
		}
		if r.v == (gf2{}) {
			continue
		}
		for r.pivot = 0; !bit(r.v, r.pivot); r.pivot++ {
		}
		basis = append(basis, r)
	}
	x := make([]bool, len(cols))
	for _, b := range basis {
		if bit(target, b.pivot) {
			target[0] ^= b.v[0]
			target[1] ^= b.v[1]
			for j := range x {
				x[j] = x[j] != b.comb[j]
			}
		}
	}
	return x, target == gf2{}
}

// publicFingerprints runs `neardup fingerprint` (with args) over pages
// and returns their fingerprints as GF(2) vectors.
func publicFingerprints(t *testing.T, dir string, pages []string, args ...string) []gf2 {
	t.Helper()
	var b strings.Builder
	for i, p := range pages {
		line, _ := json.Marshal(map[string]string{"id": strconv.Itoa(i), "text": p})
		b.Write(line)
		b.WriteByte('\n')
	}
	in := filepath.Join(dir, "pages.jsonl")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env, stdout, stderr := testEnv()
	if code := Main(context.Background(), append(append([]string{"fingerprint", "--json"}, args...), in), env); code != ExitOK {
		t.Fatalf("fingerprint %v: exit %d: %s", args, code, stderr)
	}
	var out []gf2
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r struct{ Fingerprint string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		var v gf2
		for i := 0; i < len(r.Fingerprint); i += 16 {
			x, err := strconv.ParseUint(r.Fingerprint[i:i+16], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			v[i/16] = x
		}
		out = append(out, v)
	}
	if len(out) != len(pages) {
		t.Fatalf("%d fingerprints for %d pages", len(out), len(pages))
	}
	return out
}

// forge returns a page of 'a' and 'c' as long as victim whose fingerprint
// under the command's scheme (args) the linear model says equals victim's,
// and whether the model found one.
func forge(t *testing.T, dir string, args ...string) (string, bool) {
	t.Helper()
	n := len(victim)
	base := bytes.Repeat([]byte{'a'}, n)
	pages := []string{victim, string(base)}
	for i := range n {
		p := bytes.Clone(base)
		p[i] = 'c'
		pages = append(pages, string(p))
	}
	fps := publicFingerprints(t, dir, pages, args...) // n+2 documents in one call
	cols := make([]gf2, n)
	for i := range cols {
		cols[i] = gf2{fps[2+i][0] ^ fps[1][0], fps[2+i][1] ^ fps[1][1]}
	}
	x, ok := solveGF2(cols, gf2{fps[0][0] ^ fps[1][0], fps[0][1] ^ fps[1][1]})
	for i, flip := range x {
		if flip {
			base[i] = 'c'
		}
	}
	return string(base), ok
}

func TestForgedCollisionIsNotADuplicate(t *testing.T) {
	dir := t.TempDir()
	forged, ok := forge(t, dir, "--scheme", identity.LegacyScheme)
	if !ok {
		t.Fatal("no forgery found: the elimination is wrong")
	}
	// The forgery works against the old scheme, by the command and by
	// the library: the test is not vacuous.
	if got := publicFingerprints(t, dir, []string{victim, forged}, "--scheme", identity.LegacyScheme); got[0] != got[1] {
		t.Fatalf("forged page %q does not collide: %x %x", forged, got[0], got[1])
	}
	if tab := rabin.New(rabin.DefaultPoly); tab.Hash([]byte(victim)) != tab.Hash([]byte(forged)) || forged == victim {
		t.Fatal("forged page does not collide under rabin.DefaultPoly")
	}
	for _, w := range strings.Fields(victim) {
		if strings.Contains(forged, strings.ToLower(w)) && len(w) > 2 {
			t.Fatalf("forged page shares %q with the victim", w)
		}
	}

	// Linear algebra against the default (public BLAKE3) output: the
	// "solution" is no collision.
	guess, _ := forge(t, dir)
	if got := publicFingerprints(t, dir, []string{victim, guess}); got[0] == got[1] {
		t.Fatal("elimination forged a BLAKE3 collision")
	}

	// The attacker's page comes first, so that the victim would be the
	// later copy, the one dropped.
	pages := filepath.Join(dir, "crawl.jsonl")
	lines := fmt.Sprintf("{\"id\":\"attacker\",\"text\":%q}\n{\"id\":\"victim\",\"text\":%q}\n{\"id\":\"guess\",\"text\":%q}\n", forged, victim, guess)
	if p := os.Getenv("NEARDUP_TEST_FORGED_OUT"); p != "" {
		os.WriteFile(p, []byte(lines), 0o644) // to try an older release on
	}
	if err := os.WriteFile(pages, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	attacker := filepath.Join(dir, "attacker.jsonl")
	victimOnly := filepath.Join(dir, "victim.jsonl")
	os.WriteFile(attacker, []byte(strings.SplitAfter(lines, "\n")[0]), 0o644)
	os.WriteFile(victimOnly, []byte(strings.SplitAfter(lines, "\n")[1]), 0o644)

	kept := func(name string, args ...string) {
		t.Helper()
		out := filepath.Join(dir, name)
		env, _, stderr := testEnv()
		if code := Main(context.Background(), append([]string{"dedup", "-q", "--out", out}, args...), env); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var sum struct {
			Read, Kept, Duplicates int64
			Unconfirmed            int64 `json:"identity_unconfirmed"`
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil || json.Unmarshal(b, &sum) != nil {
			t.Fatalf("%s: summary: %v", name, err)
		}
		pairs, _ := os.ReadFile(filepath.Join(out, "pairs.jsonl"))
		if sum.Duplicates != 0 || sum.Kept != sum.Read || len(bytes.TrimSpace(pairs)) != 0 || sum.Unconfirmed != 0 {
			t.Fatalf("%s: %+v, pairs %s: a forged collision dropped a page", name, sum, pairs)
		}
	}
	kept("in-memory", pages)
	kept("out-of-core", pages, "--memory", "64KiB", "--work", filepath.Join(dir, "work"))
	// An index of an earlier run holds the attacker's page; the victim
	// comes in a later run.
	store := filepath.Join(dir, "store")
	kept("earlier-run", attacker, "--store", store)
	kept("later-run", victimOnly, "--store", store)

	// index add, then query: the victim matches nothing.
	idx := filepath.Join(dir, "idx")
	if code, out, errs := runMainStdin(t, "", "index", "add", "-q", "--store", idx, attacker); code != 0 {
		t.Fatalf("index add: %d %s %s", code, out, errs)
	}
	code, out, errs := runMainStdin(t, "", "index", "query", "--store", idx, victimOnly)
	if code != 0 || strings.Contains(out, "attacker") {
		t.Fatalf("index query: exit %d: %s %s", code, out, errs)
	}

	// The server: the attacker's page is added, then the victim with
	// if_new is still added (no match).
	url, _ := startServe(t, "--store", filepath.Join(dir, "served"))
	for _, c := range []struct{ id, text string }{{"attacker", forged}, {"victim", victim}} {
		body, _ := json.Marshal(map[string]any{"documents": []map[string]string{{"id": c.id, "text": c.text}}})
		resp, err := http.Post(url+"/v1/documents?if_new=true", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Added   int
			Results []struct {
				Added   bool
				Matches []any
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || r.Added != 1 || len(r.Results) != 1 || len(r.Results[0].Matches) != 0 {
			t.Fatalf("server add %s: %d %+v %v", c.id, resp.StatusCode, r, err)
		}
	}
}
