package dedup

import "testing"

// A column holds what was pushed, at its position, across chunk
// boundaries (the first chunk grown as a slice), and its values do not
// move as it grows.
func TestColumn(t *testing.T) {
	var c column[int64]
	var want []int64
	var first *int64
	for i := range 3*colChunk + 17 {
		v := int64(i)*7919 - 5
		c.push(v)
		want = append(want, v)
		if i == colChunk+3 {
			first = c.at(i)
		}
		if i%1000 == 999 || i == colChunk-1 || i == colChunk {
			for k, w := range want {
				if got := *c.at(k); got != w {
					t.Fatalf("after %d pushes: at(%d) = %d, want %d", i+1, k, got, w)
				}
			}
		}
	}
	if c.len() != len(want) {
		t.Fatalf("len %d, want %d", c.len(), len(want))
	}
	if first != c.at(colChunk+3) || *first != want[colChunk+3] {
		t.Fatalf("a value moved as the column grew")
	}
	for k := 1; k < len(c.chunks); k++ {
		if cap(c.chunks[k]) != colChunk {
			t.Fatalf("chunk %d: capacity %d, want %d", k, cap(c.chunks[k]), colChunk)
		}
	}
	c.reset()
	if c.len() != 0 || c.chunks != nil {
		t.Fatalf("a reset column holds %d values", c.len())
	}
}

// A placeRef says what the place it stands for says, for places with a
// line, a byte offset or neither, over several paths.
func TestPlaceRef(t *testing.T) {
	var tab pathTable
	places := []recordPlace{
		{path: "a.jsonl", line: 1, offset: -1},
		{path: "a.jsonl", line: 12345678901, offset: 99},
		{path: "b.warc.gz", line: 0, offset: 0},
		{path: "b.warc.gz", line: 0, offset: 1 << 40},
		{path: "-", line: 0, offset: -1},
		{path: "a.jsonl", line: 7, offset: 3},
		{path: "", line: 0, offset: 5},
	}
	var refs []placeRef
	for _, p := range places {
		refs = append(refs, tab.ref(p))
	}
	for i, p := range places {
		if got, want := tab.String(refs[i]), p.String(); got != want {
			t.Errorf("place %d: %q, want %q", i, got, want)
		}
	}
	if len(tab.paths) != 4 {
		t.Errorf("%d paths numbered, want 4: %q", len(tab.paths), tab.paths)
	}
}
