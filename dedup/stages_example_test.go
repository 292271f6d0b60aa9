package dedup_test

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
)

// twoInputs yields the documents of two inputs, each followed by its
// InputEnd, from input skip on (as a corpus.Reader told to Skip would).
func twoInputs(skip int) iter.Seq2[*corpus.Document, error] {
	text := words(50)
	inputs := [][]*corpus.Document{
		{{ID: "a", Body: []byte(text)}, {ID: "b", Body: []byte(text + " and one more")}},
		{{ID: "c", Body: []byte("something else entirely")}, {ID: "d", Body: []byte(text + " and two more")}},
	}
	return func(yield func(*corpus.Document, error) bool) {
		for i, docs := range inputs[skip:] {
			for _, d := range docs {
				if !yield(d, nil) {
					return
				}
			}
			if !yield(nil, &dedup.InputEnd{Input: skip + i}) {
				return
			}
		}
	}
}

// A resumable out-of-core run saves its stages in the work directory; a
// second run with Resume continues from them (here after the last one:
// nothing is read or sketched again) with the same result.
func ExampleStages() {
	dir, err := os.MkdirTemp("", "neardup-stages-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st := &dedup.Stages{
		Dir:    filepath.Join(dir, "work"),
		Inputs: []dedup.InputFile{{Name: "one.jsonl", Size: 2}, {Name: "two.jsonl", Size: 2}},
		Config: map[string]string{"threshold": "0.8"},
	}
	o := dedup.Options{Index: index.Config{Threshold: 0.8}, Memory: 1, Stages: st} // out of core at once
	res, err := dedup.Run(ctx, twoInputs(0), o)
	if err != nil {
		panic(err)
	}
	fmt.Println("first run:", res.Summary.Kept, "kept,", len(res.Pairs), "pairs")

	st.Resume = true
	skip, err := st.InputsDone() // the caller's reader skips these
	if err != nil {
		panic(err)
	}
	res, err = dedup.Run(ctx, twoInputs(skip), o)
	if err != nil {
		panic(err)
	}
	fmt.Println("resumed after", skip, "inputs, from stage", res.Summary.Resumed+":", res.Summary.Kept, "kept,", len(res.Pairs), "pairs")

	// A changed configuration is refused.
	st.Config = map[string]string{"threshold": "0.9"}
	_, err = st.InputsDone()
	fmt.Println(err != nil)
	if err := dedup.RemoveWork(st.Dir); err != nil {
		panic(err)
	}
	// Output:
	// first run: 2 kept, 3 pairs
	// resumed after 2 inputs, from stage cluster: 2 kept, 3 pairs
	// true
}
