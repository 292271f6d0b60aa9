package corpus_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/neardup/neardup/corpus"
)

// Records gives the document sequence a pipeline takes: documents, and
// rejected records as errors in their place; the reader stays the
// caller's, for its statistics.
func ExampleRecords() {
	input := `{"id":"a","text":"first"}
not json
{"id":"b","text":"second"}
`
	r, docs, err := corpus.Records([]string{"-"}, corpus.Options{Stdin: strings.NewReader(input)})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for d, err := range docs {
		var re *corpus.RecordError
		switch {
		case errors.As(err, &re):
			fmt.Println("rejected:", re.Reason)
		case err != nil:
			panic(err)
		default:
			fmt.Printf("%s: %s\n", d.ID, d.Body)
		}
	}
	fmt.Println(r.Stats())
	// Output:
	// a: first
	// rejected: bad-json
	// b: second
	// read 3, yielded 2, rejected 1 (bad-json 1)
}

// All opens, reads and closes in one range loop.
func ExampleAll() {
	input := `{"id":"a","text":"first"}
{"id":"b","text":"second"}
`
	for d, err := range corpus.All([]string{"-"}, corpus.Options{Stdin: strings.NewReader(input)}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(d.ID)
	}
	// Output:
	// a
	// b
}
