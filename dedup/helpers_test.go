package dedup

import (
	"iter"

	"github.com/neardup/neardup/corpus"
)

// read returns the records of paths as a command feeds Run: the documents,
// and the records the reader rejected as *corpus.RecordError values, in
// the order the reader met them.
func read(paths ...string) iter.Seq2[*corpus.Document, error] {
	return readWith(corpus.Options{}, paths...)
}

func readWith(o corpus.Options, paths ...string) iter.Seq2[*corpus.Document, error] {
	return corpus.All(paths, o)
}

// docsOf yields the given documents.
func docsOf(docs ...*corpus.Document) iter.Seq2[*corpus.Document, error] {
	return func(yield func(*corpus.Document, error) bool) {
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
}
