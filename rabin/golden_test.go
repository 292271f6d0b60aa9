package rabin

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// goldenInputs are the named byte strings whose fingerprints are pinned.
func goldenInputs() []struct {
	name string
	data []byte
} {
	seq := make([]byte, 256)
	for i := range seq {
		seq[i] = byte(i)
	}
	s := rng.New(1)
	stream := randBytes(&s, 1000)
	return []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"A", []byte("A")},
		{"abc", []byte("abc")},
		{"fox", []byte("The quick brown fox jumps over the lazy dog")},
		{"zeros64", make([]byte, 64)},
		{"seq256", seq},
		{"stream1000", stream},
	}
}

// goldenText renders every pinned output: the polynomials, Hash of the
// named inputs, HashUint64 of a few words, and the final value of each
// window type, for DefaultPoly and RandomPrimitive of a few seeds.
func goldenText() []byte {
	var b bytes.Buffer
	b.WriteString("# Rabin fingerprint golden vectors; frozen: stored fingerprints depend on them.\n")
	b.WriteString("# Regenerate (only for a deliberate, versioned change): go test ./rabin -run TestGolden -update\n")
	type named struct {
		name string
		p    Poly
	}
	polys := []named{{"default", DefaultPoly}}
	for _, seed := range []uint64{1, 2, 42, 0xdeadbeef} {
		polys = append(polys, named{fmt.Sprintf("seed=%d", seed), RandomPrimitive(seed)})
	}
	for _, np := range polys {
		fmt.Fprintf(&b, "poly %s %#016x\n", np.name, uint64(np.p))
	}
	for _, np := range polys {
		tab := New(np.p)
		for _, in := range goldenInputs() {
			fmt.Fprintf(&b, "hash %s %s %#016x\n", np.name, in.name, tab.Hash(in.data))
		}
		for _, x := range []uint64{0, 1, 0x0123456789abcdef, ^uint64(0)} {
			fmt.Fprintf(&b, "hashuint64 %s %#x %#016x\n", np.name, x, tab.HashUint64(x))
		}
		bw := NewByteWindow(tab, 48)
		for _, c := range goldenInputs()[5].data {
			bw.Roll(c)
		}
		fmt.Fprintf(&b, "bytewindow48 %s seq256 %#016x\n", np.name, bw.Sum64())
		ww := NewWordWindow(tab, 5)
		for i := uint64(1); i <= 20; i++ {
			ww.Roll(i)
		}
		fmt.Fprintf(&b, "wordwindow5 %s 1..20 %#016x\n", np.name, ww.Sum64())
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden.txt")
	got := goldenText()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gotPath := path + ".got"
		_ = os.WriteFile(gotPath, got, 0o644)
		t.Fatalf("fingerprints differ from %s; actual output written to %s (diff them; never -update to paper over a change)", path, gotPath)
	}
}
