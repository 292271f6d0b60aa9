package dedup

import (
	"strconv"
	"testing"
)

// TestIDTable adds 300,000 distinct ids, each read again later, and checks
// every answer against a map. Among 300,000 ids about 10 pairs share a
// 32-bit tag (n²/2^33), so the full comparison behind a matching tag is
// exercised too; the table grows 15 times on the way.
func TestIDTable(t *testing.T) {
	var tab idTable
	want := map[string]placeRef{}
	const n = 300_000
	for i := range 2 * n {
		k := i
		if i%2 == 1 { // every odd step repeats an id added before
			k = i / 3
		}
		name := "doc-" + strconv.Itoa(k)
		ref := placeRef{path: int32(i % 7), at: int64(i)}
		first, dup := tab.add(name, ref)
		w, wdup := want[name]
		if dup != wdup || dup && first != w {
			t.Fatalf("add(%q) = %v, %v; want %v, %v", name, first, dup, w, wdup)
		}
		if !wdup {
			want[name] = ref
		}
	}
	if tab.len() != len(want) {
		t.Fatalf("len %d, want %d", tab.len(), len(want))
	}
	if 2*tab.len() > len(tab.slots) {
		t.Fatalf("%d ids in %d slots: over half full", tab.len(), len(tab.slots))
	}
}

// BenchmarkIDs adds a million distinct ids, as the reader of a 1M-document
// run does, to an idTable and to the Go map it replaced (a lookup, then an
// insert).
func BenchmarkIDs(b *testing.B) {
	names := make([]string, 1<<20)
	for i := range names {
		names[i] = "doc-" + strconv.Itoa(i*7919)
	}
	b.Run("idTable", func(b *testing.B) {
		for b.Loop() {
			var t idTable
			for i, n := range names {
				t.add(n, placeRef{at: int64(i)})
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			m := map[string]placeRef{}
			for i, n := range names {
				if _, dup := m[n]; !dup {
					m[n] = placeRef{at: int64(i)}
				}
			}
		}
	})
}
