package corpus

import (
	"fmt"
	"io"
)

// fileSource yields one input (an HTML or plain-text file, or standard
// input read as one) as a single document.
type fileSource struct {
	o      *opened
	opts   *Options
	format Format
	buf    *[]byte
	done   bool
}

func newFileSource(o *opened, opts *Options, format Format, buf *[]byte) *fileSource {
	return &fileSource{o: o, opts: opts, format: format, buf: buf}
}

func (s *fileSource) close() error { return s.o.close() }

func (s *fileSource) next(d *Document) error {
	if s.done {
		return io.EOF
	}
	s.done = true
	max := s.opts.MaxRecordBytes
	if s.o.comp == CompressionNone && s.o.in.size > max {
		return s.fileErr(0, ReasonTooLarge, fmt.Errorf("file is %d bytes, over the %d-byte cap", s.o.in.size, max))
	}
	b := (*s.buf)[:0]
	if s.o.in.size > 0 && s.o.comp == CompressionNone && int64(cap(b)) < s.o.in.size {
		b = make([]byte, 0, s.o.in.size+1)
	}
	// Read at most max+1 bytes: one more than the cap tells us it is over.
	lr := io.LimitedReader{R: s.o.br, N: max + 1}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			*s.buf = b
			return s.fileErr(int64(len(b)), classify(err), err)
		}
	}
	*s.buf = b
	if int64(len(b)) > max {
		return s.fileErr(0, ReasonTooLarge, fmt.Errorf("record is over the %d-byte cap", max))
	}
	in := s.o.in
	d.ID = in.id
	d.Body = b
	d.Raw = b
	d.HTML = s.format == FormatHTML
	d.Source = in.path
	d.Name = in.name
	d.Format = s.format
	d.Compression = s.o.comp
	return nil
}

// fileErr is a rejection of the whole file, named by its id.
func (s *fileSource) fileErr(off int64, reason string, err error) *RecordError {
	e := s.o.errAt(0, off, reason, err)
	e.ID = s.o.in.id
	return e
}
