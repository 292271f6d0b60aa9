package weighted

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/feature"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// goldenInputs are fixed weighted sets: small integers, weights spanning
// 1e−300 … 1e300, and the same as logarithms.
func goldenInputs() map[string][]feature.Feature {
	return map[string][]feature.Feature{
		"small":   {{ID: 1, Weight: 1}, {ID: 2, Weight: 2}, {ID: 3, Weight: 3.5}, {ID: 0xdeadbeef, Weight: 0.25}, {ID: 5, Weight: 0.3}, {ID: 6, Weight: 1.7}, {ID: 7, Weight: 0.9}, {ID: 8, Weight: 2.2}},
		"extreme": {{ID: 10, Weight: 1e-300}, {ID: 11, Weight: 1e-5}, {ID: 12, Weight: 1}, {ID: 13, Weight: 1e5}, {ID: 14, Weight: 1e300}},
	}
}

// TestGolden pins every sampler's output: sketches already stored must stay
// valid. Regenerate with `go test ./weighted -run Golden -update` only when
// Version is bumped.
func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	in := goldenInputs()
	for _, name := range []string{"small", "extreme"} {
		fs := in[name]
		c, _ := NewCWS(Options{K: 8, Seed: 42})
		cl, _ := NewCWS(Options{K: 8, Seed: 42, LogWeights: true})
		ic, _ := NewICWS(Options{K: 8, Seed: 42})
		hd, _ := NewHMT(Options{K: 32, Seed: 42, L: 2})
		hi, _ := NewHMT(Options{K: 32, Seed: 42, L: 2, Independent: true})
		rp, _ := NewReplicated(Options{K: 8, Seed: 42})
		type named struct {
			n string
			s valuer
		}
		samplers := []named{{"cws", c}, {"icws", ic}, {"hmt-dep", hd}, {"hmt", hi}}
		if name == "small" { // O(K·Σw): integer weights only
			samplers = append(samplers, named{"replicated", rp})
		}
		for _, s := range samplers {
			fmt.Fprintf(&buf, "%s %s %x\n", s.n, name, s.s.Sketch(nil, fs))
		}
		fmt.Fprintf(&buf, "cws-log %s %x\n", name, cl.Sketch(nil, logWeights(fs, 0)))
		for _, sm := range c.Samples(nil, fs)[:4] {
			fmt.Fprintf(&buf, "cws-sample %s %d %.17g\n", name, sm.ID, sm.Y)
		}
	}
	checkGolden(t, "golden.txt", buf.Bytes(), "sampler output changed")
}

// checkGolden compares got with testdata/name (rewriting it under -update);
// on a difference it writes got beside it as name.got and says what changed.
func checkGolden(t *testing.T, name string, got []byte, what string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s; see %s.got (bump Version and rerun with -update if intended)", what, path)
	}
}
