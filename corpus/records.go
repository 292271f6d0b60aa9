package corpus

import (
	"iter"
)

// Records opens paths with o like Open and returns the reader and the
// sequence that dedup.Run (and the other consumers of a corpus) take: the
// documents, and the records the reader rejects as *RecordError values, in
// the order the reader meets them (o.OnReject is still called). The
// sequence can be ranged over once; the caller closes the reader (and asks
// it for Stats and progress).
func Records(paths []string, o Options) (*Reader, iter.Seq2[*Document, error], error) {
	var pending []*RecordError
	onReject := o.OnReject
	o.OnReject = func(e *RecordError) {
		if onReject != nil {
			onReject(e)
		}
		pending = append(pending, e)
	}
	r, err := Open(paths, o)
	if err != nil {
		return nil, nil, err
	}
	seq := func(yield func(*Document, error) bool) {
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
		if flush() && r.Err() != nil {
			yield(nil, r.Err())
		}
	}
	return r, seq, nil
}

// All is Records for a caller that needs nothing of the reader: the
// sequence opens paths when it is ranged over, yields what Records's
// sequence yields (an error opening them as its only element), and closes
// the reader when the range ends.
func All(paths []string, o Options) iter.Seq2[*Document, error] {
	return func(yield func(*Document, error) bool) {
		r, seq, err := Records(paths, o)
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.Close()
		seq(yield)
	}
}
