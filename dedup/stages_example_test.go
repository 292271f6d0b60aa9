package dedup_test

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/index"
)

// twoInputs yields the documents of two inputs, each followed by its
// InputEnd, from input skip on (as a corpus.Reader told to Skip would).
func twoInputs(skip int) iter.Seq2[*corpus.Document, error] {
	return someInputs(func(i int) bool { return i >= skip })
}

// someInputs yields the documents of the inputs of twoInputs that take
// returns true for.
func someInputs(take func(int) bool) iter.Seq2[*corpus.Document, error] {
	text := words(50)
	inputs := [][]*corpus.Document{
		{{ID: "a", Body: []byte(text)}, {ID: "b", Body: []byte(text + " and one more")}},
		{{ID: "c", Body: []byte("something else entirely")}, {ID: "d", Body: []byte(text + " and two more")}},
	}
	return func(yield func(*corpus.Document, error) bool) {
		for i, docs := range inputs {
			if !take(i) {
				continue
			}
			for _, d := range docs {
				if !yield(d, nil) {
					return
				}
			}
			if !yield(nil, &dedup.InputEnd{Input: i}) {
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

// Two shards each read and sketch their share of the inputs (here input
// i goes to shard i mod 2) into their own work directory; MergeShards
// joins their stage files, and a run that resumes from them finishes with
// the result of one run over all the inputs.
func ExampleMergeShards() {
	dir, err := os.MkdirTemp("", "neardup-shards-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	inputs := []dedup.InputFile{{Name: "one.jsonl", Size: 2}, {Name: "two.jsonl", Size: 2}}
	cfg := map[string]string{"threshold": "0.8"}
	// The shards fingerprint under one secret key, or their exact copies
	// could not be matched across shards (the merge refuses that).
	key, err := identity.NewKey()
	if err != nil {
		panic(err)
	}
	o := dedup.Options{Index: index.Config{Threshold: 0.8, Identity: key}, Memory: 1}
	var works []string
	for shard := range 2 {
		work := filepath.Join(dir, fmt.Sprintf("shard%d", shard))
		so := o
		so.Stages = &dedup.Stages{Dir: work, Inputs: inputs, Config: cfg, Shard: shard, Shards: 2}
		res, err := dedup.Run(ctx, someInputs(func(i int) bool { return i%2 == shard }), so)
		if err != nil {
			panic(err)
		}
		fmt.Printf("shard %d sketched %d documents\n", shard, res.Summary.Kept)
		works = append(works, work)
	}
	merged := &dedup.Stages{Dir: filepath.Join(dir, "merged"), Inputs: inputs, Config: cfg, Resume: true}
	if _, err := dedup.ShardConfig(works); err != nil {
		panic(err)
	}
	if err := dedup.MergeShards(works, merged); err != nil {
		panic(err)
	}
	o.Stages = merged
	res, err := dedup.Run(ctx, someInputs(func(int) bool { return false }), o) // nothing left to read
	if err != nil {
		panic(err)
	}
	whole, err := dedup.Run(ctx, twoInputs(0), dedup.Options{Index: index.Config{Threshold: 0.8}})
	if err != nil {
		panic(err)
	}
	fmt.Println("merged:", res.Summary.Kept, "kept,", len(res.Pairs), "pairs; one run:", whole.Summary.Kept, "kept,", len(whole.Pairs), "pairs")
	// Output:
	// shard 0 sketched 2 documents
	// shard 1 sketched 2 documents
	// merged: 2 kept, 3 pairs; one run: 2 kept, 3 pairs
}
