package corpus

import (
	"context"
	"fmt"
)

// CopyKept reads paths again with opts and writes to w every document for
// which keep returns true, in input order; n counts the documents the
// Reader yields from 0, so it is the same number a first pass over the same
// inputs with the same Options gave each document (the Reader is
// deterministic). keep may look at the document too. When w is a
// FilterWriter (MirrorWriter is), it is also given the documents not kept
// (Drop) and the records that are not documents (Companion, through
// Options.OnSkip, chained after the caller's), so that a WARC output keeps
// the request, metadata and warcinfo records of the kept responses and
// drops those of the others.
//
// CopyKept does not close w; the caller does (MirrorWriter writes what is
// still pending on Close). It returns the number of documents written. It
// stops at the first write error, at the Reader's error (see Reader.Err),
// or when ctx is done.
func CopyKept(ctx context.Context, paths []string, opts Options, w Writer, keep func(n int64, d *Document) bool) (int64, error) {
	fw, _ := w.(FilterWriter)
	var werr error
	if fw != nil {
		user := opts.OnSkip
		opts.OnSkip = func(d *Document, reason string) {
			if user != nil {
				user(d, reason)
			}
			if werr == nil {
				werr = fw.Companion(d)
			}
		}
	}
	r, err := Open(paths, opts)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n, written int64
	for r.Next() {
		if werr != nil {
			return written, werr
		}
		if err := ctx.Err(); err != nil {
			return written, err
		}
		d := r.Doc()
		if keep(n, d) {
			if err := w.Write(d); err != nil {
				return written, fmt.Errorf("corpus: writing %q: %w", d.ID, err)
			}
			written++
		} else if fw != nil {
			if err := fw.Drop(d); err != nil {
				return written, err
			}
		}
		n++
	}
	if werr != nil {
		return written, werr
	}
	return written, r.Err()
}
