package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonSource reads a JSON document as a stream of top-level values: an
// object is a record, an array's elements are records (each must be an
// object), and several top-level values may follow one another, so a
// single object, an array of objects and JSON Lines saved as .json all
// read. It scans one value at a time, tracking strings and nesting, and
// holds at most one record (up to Options.MaxRecordBytes; a longer one is
// scanned through and rejected with ReasonTooLarge). A record's Line is
// the line of its first byte, Offset its byte offset; a record without an
// id is named "<source>#<n>", n counting the file's records from 1.
//
// Bytes that cannot start a value where one is due (a stray ']' or text
// between records) are rejected with ReasonBadJSON up to the end of their
// line, as one record, and the scan goes on. A value cut short by the end
// of the stream is rejected and ends the input; an array left open after
// complete elements loses no record and ends quietly.
type jsonSource struct {
	o    *opened
	opts *Options
	f    jsonFields

	off, line int64 // bytes consumed; line of the next byte (1-based)
	n         int64 // records seen
	started   bool  // a leading byte order mark was dealt with
	inArray   bool  // inside a top-level array
	afterElem bool  // in an array, after an element: ',' or ']' is due
	done      bool
	buf       []byte
}

func newJSONSource(o *opened, opts *Options) *jsonSource {
	return &jsonSource{o: o, opts: opts, f: newJSONFields(opts), line: 1}
}

func (s *jsonSource) close() error { return s.o.close() }

// buffered returns the buffered bytes of the stream, reading more if none
// are buffered.
func (s *jsonSource) buffered() ([]byte, error) {
	br := s.o.br
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			return nil, err
		}
	}
	return br.Peek(br.Buffered())
}

// consume drops the first n bytes of b, the buffered bytes.
func (s *jsonSource) consume(b []byte, n int) {
	s.line += int64(bytes.Count(b[:n], []byte{'\n'}))
	s.off += int64(n)
	s.o.br.Discard(n)
}

// skipWS consumes white space and returns the next byte.
func (s *jsonSource) skipWS() (byte, error) {
	for {
		b, err := s.buffered()
		if err != nil {
			return 0, err
		}
		if !s.started {
			s.started = true
			if bytes.HasPrefix(b, bom) {
				s.consume(b, len(bom))
				continue
			}
		}
		i := 0
		for i < len(b) && isWS(b[i]) {
			i++
		}
		s.consume(b, i)
		if i < len(b) {
			return b[i], nil
		}
	}
}

func (s *jsonSource) stopErr(line, off int64, reason string, err error) *RecordError {
	s.done = true
	e := s.o.errAt(line, off, reason, err)
	e.stop = true
	return e
}

func (s *jsonSource) next(d *Document) error {
	for {
		if s.done {
			return io.EOF
		}
		c, err := s.skipWS()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return s.stopErr(s.line, s.off, classify(err), err)
		}
		switch {
		case s.inArray && c == ']':
			s.inArray, s.afterElem = false, false
			s.o.br.Discard(1)
			s.off++
			continue
		case s.inArray && s.afterElem:
			if c == ',' {
				s.afterElem = false
				s.o.br.Discard(1)
				s.off++
				continue
			}
			return s.garbage("expected ',' or ']' after an array element")
		case !s.inArray && c == '[':
			s.inArray = true
			s.o.br.Discard(1)
			s.off++
			continue
		case c == '{' || c == '[' || c == '"' || c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n':
			return s.record(d)
		}
		return s.garbage(fmt.Sprintf("unexpected %q where a JSON value is due", c))
	}
}

// garbage rejects the bytes up to the end of the line as one record.
func (s *jsonSource) garbage(why string) error {
	line, off := s.line, s.off
	s.n++
	for {
		b, err := s.buffered()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s.stopErr(line, off, classify(err), err)
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			s.consume(b, i+1)
			break
		}
		s.consume(b, len(b))
	}
	return s.o.errAt(line, off, ReasonBadJSON, errors.New(why))
}

// record reads the value at the current position as a record.
func (s *jsonSource) record(d *Document) error {
	line, off := s.line, s.off
	s.n++
	if s.inArray {
		s.afterElem = true
	}
	raw, tooLong, err := s.readValue()
	if err == io.ErrUnexpectedEOF {
		return s.stopErr(line, off, ReasonBadJSON, errors.New("JSON value cut short by the end of the input"))
	}
	if err != nil {
		return s.stopErr(line, off, classify(err), err)
	}
	if tooLong {
		return s.o.errAt(line, off, ReasonTooLarge, fmt.Errorf("JSON record is over the %d-byte cap", s.opts.MaxRecordBytes))
	}
	if !validJSON(raw) {
		return s.o.errAt(line, off, ReasonBadJSON, jsonSyntaxError(raw))
	}
	if raw[0] != '{' {
		return s.o.errAt(line, off, ReasonBadJSON, errors.New("record is not a JSON object"))
	}
	if err := s.f.fill(d, s.o, raw, line, off, s.o.in.path+"#"+strconv.FormatInt(s.n, 10)); err != nil {
		return err
	}
	d.Raw = raw
	d.Format = FormatJSON
	d.inArray = s.inArray
	return nil
}

// readValue consumes one JSON value (its extent found by tracking strings
// and brackets; validity is checked afterwards) and returns its bytes, or
// tooLong when it is over the record cap (then its bytes are not kept).
// It returns io.ErrUnexpectedEOF when the stream ends inside the value.
func (s *jsonSource) readValue() (raw []byte, tooLong bool, err error) {
	max := s.opts.MaxRecordBytes
	s.buf = s.buf[:0]
	depth := 0
	inStr, esc, scalar, first := false, false, false, true
	for {
		b, err := s.buffered()
		if err == io.EOF {
			if scalar && depth == 0 && !inStr {
				return s.buf, tooLong, nil
			}
			return nil, tooLong, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, tooLong, err
		}
		if first {
			first = false
			scalar = b[0] != '{' && b[0] != '['
		}
		i, done := 0, false
		for i < len(b) && !done {
			c := b[i]
			switch {
			case esc:
				esc = false
				i++
			case inStr:
				k := bytes.IndexAny(b[i:], "\"\\")
				if k < 0 {
					i = len(b)
					break
				}
				i += k
				if b[i] == '\\' {
					esc = true
				} else {
					inStr = false
					done = scalar && depth == 0
				}
				i++
			case c == '"':
				inStr = true
				i++
			case scalar:
				if isWS(c) || c == ',' || c == ']' || c == '}' || c == '[' || c == '{' {
					done = true // the delimiter is not part of the value
					break
				}
				i++
			case c == '{' || c == '[':
				depth++
				i++
			case c == '}' || c == ']':
				depth--
				i++
				done = depth == 0
			default:
				i++
			}
		}
		if !tooLong {
			if int64(len(s.buf)+i) > max {
				tooLong = true
				s.buf = s.buf[:0]
			} else {
				s.buf = append(s.buf, b[:i]...)
			}
		}
		s.consume(b, i)
		if done {
			return s.buf, tooLong, nil
		}
	}
}
