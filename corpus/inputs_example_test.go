package corpus_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/corpus"
)

// A resumed run lists the reader's inputs, skips those it finished, and
// learns from OnInputEnd where each input ends (its next checkpoint).
func ExampleReader_Skip() {
	dir, err := os.MkdirTemp("", "corpus-inputs-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for i, text := range []string{"first", "second", "third"} {
		line := fmt.Sprintf("{\"id\":%q,\"text\":%q}\n", text, text)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.jsonl", i)), []byte(line), 0o644); err != nil {
			panic(err)
		}
	}
	o := corpus.Options{OnInputEnd: func(i int) { fmt.Println("end of input", i) }}
	r, err := corpus.Open([]string{dir}, o)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	fmt.Println(len(r.Inputs()), "inputs, the first", filepath.Base(r.Inputs()[0].Path))
	r.Skip(func(i int) bool { return i < 1 }) // input 0 was finished before
	for r.Next() {
		fmt.Println(r.Doc().ID)
	}
	// Output:
	// 3 inputs, the first 0.jsonl
	// second
	// end of input 1
	// third
	// end of input 2
}
