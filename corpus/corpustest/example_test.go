package corpustest_test

import (
	"fmt"
	"testing"

	"github.com/neardup/neardup/corpus/corpustest"
)

// The sample corpus and its ground truth, as a test reads them (a test
// passes its own t).
func ExampleDocs() {
	t := &testing.T{}
	docs := corpustest.Docs(t, "../../testdata/licenses")
	pairs := corpustest.Pairs(t, "../../testdata/licenses")
	high := 0
	for _, p := range pairs {
		if p.Jaccard >= 0.9 {
			high++
		}
	}
	fmt.Println(len(docs), "documents;", len(pairs), "pairs at J >= 0.5,", high, "at J >= 0.9")
	// Output: 474 documents; 2483 pairs at J >= 0.5, 284 at J >= 0.9
}
