package sample

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/sketch"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json")

// TestGolden pins every sampler's output (k = 16, seed 42, 100 features and
// a 3-feature set): stored sketches must stay valid. Regenerate only for a
// deliberate, versioned change (bump the sampler's entry in versions first):
// go test ./sample -run Golden -update.
func TestGolden(t *testing.T) {
	got := map[string][][]uint64{}
	for _, sp := range specs {
		smp, err := newSampler(sp.alg, 16, 42, sp.cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The key names the version: an output change shows up in the
		// diff of golden.json beside the version it was made under.
		name := fmt.Sprintf("%v/v%d", sp.alg, smp.Header().Version)
		got[name] = [][]uint64{smp.Sketch(nil, ids(0, 100)), smp.Sketch(nil, ids(0, 3))}
	}
	path := filepath.Join("testdata", "golden.json")
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][][]uint64
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for name, g := range got {
		w := want[name]
		if len(w) != len(g) {
			t.Errorf("%s: missing golden vectors", name)
			continue
		}
		for i := range g {
			if !slices.Equal(g[i], w[i]) {
				t.Errorf("%s case %d: output changed\n got %x\nwant %x", name, i, g[i], w[i])
			}
		}
	}
	if len(want) != len(specs) {
		t.Errorf("golden file has %d samplers, want %d", len(want), len(specs))
	}
	_ = sketch.MinHash
}
