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
	return func(yield func(*corpus.Document, error) bool) {
		var pending []*corpus.RecordError
		o.OnReject = func(e *corpus.RecordError) { pending = append(pending, e) }
		r, err := corpus.Open(paths, o)
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.Close()
		flush := func() bool {
			for _, e := range pending {
				if !yield(nil, e) {
					return false
				}
			}
			pending = pending[:0]
			return true
		}
		for r.Next() {
			if !flush() || !yield(r.Doc(), nil) {
				return
			}
		}
		if !flush() {
			return
		}
		if err := r.Err(); err != nil {
			yield(nil, err)
		}
	}
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
