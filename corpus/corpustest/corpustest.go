// Package corpustest reads the sample corpus shipped in the repository's
// testdata/licenses (474 licence texts and the ground truth of their
// near-duplicate pairs, see testdata/licenses/README.md) for the tests of
// every package that measures itself against it.
//
// The corpus is the repository's one set of real near-duplicates whose
// exact answer is known: every pair of documents with a 5-word-shingle
// Jaccard of at least 0.5 is listed with its Jaccard, all others are below
// 0.5. Tests compare their estimates, candidates and clusters with it. The
// helpers fail the test on any read error, so a test reads one line.
package corpustest

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Doc is one document of docs.jsonl.gz.
type Doc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Pair is one line of pairs.jsonl.gz: two ids and their exact Jaccard.
type Pair struct {
	A       string  `json:"a"`
	B       string  `json:"b"`
	Jaccard float64 `json:"jaccard"`
}

// Docs returns the documents of the corpus in dir (the path of
// testdata/licenses), in file order.
func Docs(t testing.TB, dir string) []Doc {
	t.Helper()
	return ReadJSONL[Doc](t, filepath.Join(dir, "docs.jsonl.gz"))
}

// Pairs returns the ground-truth pairs of the corpus in dir, in file order.
func Pairs(t testing.TB, dir string) []Pair {
	t.Helper()
	return ReadJSONL[Pair](t, filepath.Join(dir, "pairs.jsonl.gz"))
}

// ReadJSONL decodes every line of a JSON-lines file, gunzipped when its
// name ends in ".gz", into a T. T may be json.RawMessage to keep the lines
// as they are.
func ReadJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r = zr
	}
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", path, len(out)+1, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}
