package index

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// A fingerprint that agrees with a stored one in its 128 bits but not in
// its length, or in its first 64 bits only (the posting key's inputs
// differ then, so it is found only through a forced posting), is not
// identical: Identical counts the failed confirmation and calls nothing.
func TestIdenticalConfirms(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(16, 1, lsh.Banding(2, 8), 0))
	_, sets := corpus(2, nil, 5)
	d := mkDoc(t, x, "d", sets[0], false)
	mustAdd(t, x, d)
	if got := identical(t, x, d.Fingerprint, nil); got != "d" {
		t.Fatalf("the same fingerprint: %q", got)
	}
	other := d.Fingerprint
	other.Len++
	st, err := x.Identical(bg, []identity.Fingerprint{other}, nil, func(int, uint64, string) error {
		t.Fatal("another length taken for identical")
		return nil
	})
	if err != nil || st.Unconfirmed != 1 || st.Lookups != 1 {
		t.Fatalf("another length: %+v %v", st, err)
	}
	checkClean(t, x)
}

// An index of the previous release (configuration version 2: no identity
// key; records with the public 64-bit Rabin fingerprint, posted under
// fpKey) opens, is upgraded (a key drawn and recorded, Upgraded true), and
// does not take its old fingerprints as identity: a forged collision of
// the 64-bit fingerprint finds nothing. Check counts the old records and
// finds no problem; replacing one removes its old posting.
func TestUpgradeVersion2(t *testing.T) {
	st := store.NewMemory()
	cfg := minhashConfig(16, 3, lsh.Banding(2, 8), 0)
	st0 := store.NewMemory()
	x0 := mustOpen(t, st0, cfg)
	_, sets := corpus(2, nil, 6)
	d := mkDoc(t, x0, "old", sets[0], true)
	const legacy = 0x0123456789abcdef
	d.Fingerprint = identity.Fingerprint{Lo: legacy}
	raw, _, err := st0.Meta(bg, configMeta, nil) // as this release records it
	if err != nil {
		t.Fatal(err)
	}
	var v2 map[string]json.RawMessage
	json.Unmarshal(raw, &v2)
	delete(v2, "identity")
	v2["version"] = json.RawMessage("2")
	raw, _ = json.Marshal(v2)
	b := st.NewBatch()
	b.PutMeta(configMeta, raw)
	b.PutDoc(ID("old"), appendV2(nil, d))
	keys, _ := x0.Keys(nil, &d.Sketch)
	for _, k := range append(keys, fpKey(legacy)) {
		b.AddPosting(k, ID("old"))
	}
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}

	x := mustOpen(t, st, Config{})
	if !x.Upgraded() || x.Config().Identity.IsZero() {
		t.Fatalf("not upgraded: %v", x.Upgraded())
	}
	rec, _, _ := st.Meta(bg, configMeta, nil)
	if !strings.Contains(string(rec), `"version":3`) || !strings.Contains(string(rec), x.Config().Identity.String()) {
		t.Fatalf("recorded: %s", rec)
	}
	if y := mustOpen(t, st, Config{}); y.Upgraded() || y.Config().Identity != x.Config().Identity {
		t.Fatal("reopened: upgraded again, or another key")
	}
	var other identity.Key
	other[0] = 1
	var ce *ConfigError
	if _, err := Open(bg, st, Config{Identity: other}); !errors.As(err, &ce) || ce.Field != "identity key" || strings.Contains(err.Error(), other.String()) {
		t.Fatalf("another key: %v", err)
	}
	// Whatever 64 or 128 bits a forger aims at, the old record is not
	// identical to anything.
	for _, f := range []identity.Fingerprint{{Lo: legacy}, {Hi: legacy}, {Hi: legacy, Lo: legacy}, {Lo: legacy, Len: 100}} {
		if got := identical(t, x, f, nil); got != "" {
			t.Fatalf("%v matched the old record", f)
		}
	}
	// Its copies are found as near-duplicates, by their sketch.
	ms, err := x.Query(bg, nil, mkDoc(t, x, "copy", sets[0], true), "")
	if err != nil || len(ms) != 1 || ms[0].Name != "old" || ms[0].Exact != 1 {
		t.Fatalf("query: %+v %v", ms, err)
	}
	r, err := x.Check(bg, false)
	if err != nil || !r.OK() || r.Legacy != 1 || r.Identities != 0 {
		t.Fatalf("check of the upgraded index: %+v %v", r, err)
	}
	// Added again, it gets an identity; its old posting goes.
	mustAdd(t, x, mkDoc(t, x, "old", sets[0], true))
	if r, err = x.Check(bg, false); err != nil || !r.OK() || r.Legacy != 0 || r.Identities != 1 {
		t.Fatalf("check after re-adding: %+v %v", r, err)
	}
}

// Check verifies the identity table: a recorded Bloom filter that misses
// an identity fingerprint (a lookup would then miss an identical
// document) is a problem, and repair has the filter rebuilt.
func TestCheckIdentityFilter(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, minhashConfig(16, 1, lsh.Banding(2, 8), 0))
	_, sets := corpus(20, nil, 9)
	for i, s := range sets {
		mustAdd(t, x, mkDoc(t, x, "d"+string(rune('a'+i)), s, false))
	}
	if err := x.Flush(bg); err != nil {
		t.Fatal(err)
	}
	checkClean(t, x)
	// Replace the recorded filter by an empty one of the same size.
	f := filter{capacity: minFilter}
	f.bf = newFPFilter(minFilter, x.cfg.BloomFP)
	raw, err := f.encode()
	if err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	b.PutMeta(filterMeta, raw)
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	r, err := x.Check(bg, false)
	if err != nil || r.OK() || r.Metadata != 1 || !strings.Contains(strings.Join(r.Problems, "\n"), "misses 20 of the 20 identity fingerprints") {
		t.Fatalf("check: %+v %v", r, err)
	}
	if r, err = x.Check(bg, true); err != nil || !r.Repaired {
		t.Fatalf("repair: %+v %v", r, err)
	}
	checkClean(t, mustOpen(t, st, Config{}))
	if got := identical(t, mustOpen(t, st, Config{}), mkDoc(t, x, "q", sets[4], false).Fingerprint, nil); got != "de" {
		t.Fatalf("after repair: %q", got)
	}
}
