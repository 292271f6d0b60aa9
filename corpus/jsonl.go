package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonlSource reads one JSON object per line. It validates each line with
// a fast validator equivalent to encoding/json's and then extracts only the
// wanted fields with a small scanner over the validated bytes, so that a
// text field without escapes is yielded without copying.
type jsonlSource struct {
	o    *opened
	opts *Options
	f    jsonFields

	line, off int64
	buf       []byte // line accumulation for lines longer than the read buffer
}

// jsonFields extracts the id, text and meta fields of JSON objects (for
// JSONL and JSON sources).
type jsonFields struct {
	opts *Options
	body []byte // unescaped text
	tmp  []byte // unescaped id / meta / keys

	idPath, textPath []string
	metaPaths        [][]string
	meta             map[string]string
}

func newJSONFields(opts *Options) jsonFields {
	f := jsonFields{
		opts:     opts,
		idPath:   strings.Split(opts.IDField, "."),
		textPath: strings.Split(opts.TextField, "."),
	}
	for _, m := range opts.MetaFields {
		f.metaPaths = append(f.metaPaths, strings.Split(m, "."))
	}
	if len(f.metaPaths) > 0 {
		f.meta = make(map[string]string, len(f.metaPaths))
	}
	return f
}

func newJSONLSource(o *opened, opts *Options) *jsonlSource {
	return &jsonlSource{o: o, opts: opts, f: newJSONFields(opts)}
}

func (s *jsonlSource) close() error { return s.o.close() }

func (s *jsonlSource) next(d *Document) error {
	for {
		start := s.off
		line, n, tooLong, err := readLine(s.o.br, &s.buf, s.opts.MaxRecordBytes)
		s.off += n
		if n == 0 && err == io.EOF {
			return io.EOF
		}
		s.line++
		if err != nil && err != io.EOF {
			e := s.o.errAt(s.line, start, classify(err), err)
			e.stop = true
			return e
		}
		if tooLong {
			return s.o.errAt(s.line, start, ReasonTooLarge, fmt.Errorf("line is over the %d-byte cap", s.opts.MaxRecordBytes))
		}
		line = trimEOL(line)
		if len(bytes.TrimLeft(line, " \t\r")) == 0 {
			continue // blank lines are not records
		}
		return s.parse(d, line, start)
	}
}

// readLine returns the next line including its '\n' (absent at the end of
// the stream), the number of bytes consumed, and whether its content is
// over max bytes, in which case the line is consumed but not kept. The
// returned slice is valid until the next read from br or change of *buf.
func readLine(br *bufio.Reader, buf *[]byte, max int64) (line []byte, n int64, tooLong bool, err error) {
	frag, err := br.ReadSlice('\n')
	n = int64(len(frag))
	if err != bufio.ErrBufferFull {
		return frag, n, int64(len(trimEOL(frag))) > max, err
	}
	b := append((*buf)[:0], frag...)
	for err == bufio.ErrBufferFull {
		frag, err = br.ReadSlice('\n')
		n += int64(len(frag))
		if !tooLong {
			if int64(len(b)+len(frag)) > max+2 { // room for "\r\n"
				tooLong = true
				b = b[:0]
			} else {
				b = append(b, frag...)
			}
		}
	}
	*buf = b
	if tooLong {
		return nil, n, true, err
	}
	return b, n, int64(len(trimEOL(b))) > max, err
}

func trimEOL(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

func (s *jsonlSource) parse(d *Document, line []byte, off int64) error {
	if !validJSON(line) {
		return s.o.errAt(s.line, off, ReasonBadJSON, jsonSyntaxError(line))
	}
	obj := trimWS(line)
	if obj[0] != '{' {
		return s.o.errAt(s.line, off, ReasonBadJSON, errors.New("line is not a JSON object"))
	}
	if err := s.f.fill(d, s.o, obj, s.line, off, s.o.in.path+":"+strconv.FormatInt(s.line, 10)); err != nil {
		return err
	}
	d.Raw = line
	d.Format = FormatJSONL
	return nil
}

// fill fills d from the valid JSON object obj, or returns the rejection of
// a record without a text string. fallbackID names a record without an id.
func (f *jsonFields) fill(d *Document, o *opened, obj []byte, line, off int64, fallbackID string) error {
	text, ok := lookup(obj, f.textPath)
	if !ok || isNull(text) || text[0] != '"' {
		what := "no field %q"
		switch {
		case ok && isNull(text):
			what = "field %q is null"
		case ok:
			what = "field %q is not a string"
		}
		fields := objectFields(obj, f.textPath, f.tmp[:0])
		e := o.errAt(line, off, ReasonMissingText, fmt.Errorf(what+"; the record has: %s", f.opts.TextField, fieldList(fields)))
		e.Fields = fields
		if v, ok := lookup(obj, f.idPath); ok && !isNull(v) {
			e.ID = f.valueString(v)
		}
		return e
	}
	if inner := text[1 : len(text)-1]; bytes.IndexByte(inner, '\\') < 0 {
		d.Body = inner // no escapes: no copy
	} else {
		f.body = unescape(f.body[:0], inner)
		d.Body = f.body
	}
	if v, ok := lookup(obj, f.idPath); ok && !isNull(v) {
		d.ID = f.valueString(v)
	} else {
		d.ID = fallbackID
	}
	if f.meta != nil {
		clear(f.meta)
		for i, p := range f.metaPaths {
			if v, ok := lookup(obj, p); ok && !isNull(v) {
				f.meta[f.opts.MetaFields[i]] = f.valueString(v)
			}
		}
		if len(f.meta) > 0 {
			d.Meta = f.meta
		}
	}
	d.Source = o.in.path
	d.Name = o.in.name
	d.Line = line
	d.Offset = off
	d.Compression = o.comp
	return nil
}

// valueString returns a JSON string's contents or any other value's JSON text.
func (f *jsonFields) valueString(v []byte) string {
	if v[0] == '"' {
		f.tmp = appendUnquoted(f.tmp[:0], v)
		return string(f.tmp)
	}
	return string(v)
}

// jsonSyntaxError returns encoding/json's description of why line is not
// valid JSON (only called on the error path).
func jsonSyntaxError(line []byte) error {
	var v json.RawMessage
	if err := json.Unmarshal(line, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

func isNull(v []byte) bool { return len(v) == 4 && string(v) == "null" }

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimWS(b []byte) []byte {
	for len(b) > 0 && isWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// The scanner below assumes JSON already accepted by json.Valid; its bounds
// checks only keep it from panicking on anything else.

// skipString returns the index just after the string starting at b[i]=='"'.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		// The quote is escaped if preceded by an odd number of backslashes.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// skipValue returns the index just after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(b)
	}
	j := i
	for j < len(b) && !isWS(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j
}

// lookup finds the value at a path of object keys. Of duplicate keys the
// first wins.
func lookup(v []byte, path []string) ([]byte, bool) {
	var tmp [64]byte
	for _, key := range path {
		v = trimWS(v)
		if len(v) == 0 || v[0] != '{' {
			return nil, false
		}
		found := false
		i := 1
		for {
			i = skipWS(v, i)
			if i >= len(v) || v[i] != '"' {
				return nil, false // '}' or malformed
			}
			kend := skipString(v, i)
			if kend > len(v) || kend-1 <= i {
				return nil, false
			}
			k := v[i+1 : kend-1]
			i = skipWS(v, kend)
			if i >= len(v) || v[i] != ':' {
				return nil, false
			}
			i = skipWS(v, i+1)
			vend := skipValue(v, i)
			if keyEquals(k, key, tmp[:0]) {
				v = v[i:vend]
				found = true
				break
			}
			i = skipWS(v, vend)
			if i >= len(v) || v[i] != ',' {
				return nil, false
			}
			i++
		}
		if !found || len(v) == 0 {
			return nil, false
		}
	}
	return v, true
}

func keyEquals(raw []byte, key string, tmp []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == key
	}
	return string(unescape(tmp, raw)) == key
}

// appendUnquoted appends the contents of the JSON string q (with quotes),
// escapes decoded, to dst. Invalid UTF-8 is copied through (the Reader
// repairs or rejects it); lone surrogates become U+FFFD, as in encoding/json.
func appendUnquoted(dst, q []byte) []byte {
	if len(q) < 2 {
		return dst
	}
	return unescape(dst, q[1:len(q)-1])
}

func unescape(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return dst
		}
		c := s[1]
		s = s[2:]
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s)
			if !ok {
				return dst
			}
			s = s[4:]
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2, _ = hex4(s[2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					s = s[6:]
					r = dec
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
	return dst
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// objectFields returns the keys of the deepest object that path reaches in
// obj (the record itself when its first key is missing), each prefixed with
// the path to that object ("doc.body" for a record {"doc":{"body":...}}
// asked for "doc.text"), at most maxFieldNames of them, in record order.
func objectFields(obj []byte, path []string, tmp []byte) []string {
	prefix := ""
	for _, key := range path[:len(path)-1] {
		v, ok := lookup(obj, []string{key})
		if !ok || len(trimWS(v)) == 0 || trimWS(v)[0] != '{' {
			break
		}
		obj, prefix = v, prefix+key+"."
	}
	fields := []string{}
	obj = trimWS(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return fields
	}
	for i := 1; len(fields) < maxFieldNames; {
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			break
		}
		kend := skipString(obj, i)
		if kend > len(obj) || kend-1 <= i {
			break
		}
		fields = append(fields, prefix+string(unescape(tmp[:0], obj[i+1:kend-1])))
		i = skipWS(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			break
		}
		i = skipWS(obj, skipValue(obj, skipWS(obj, i+1)))
		if i >= len(obj) || obj[i] != ',' {
			break
		}
		i++
	}
	return fields
}

// fieldList formats field names for a message: "a, b, c", or "no fields".
func fieldList(fields []string) string {
	if len(fields) == 0 {
		return "no fields"
	}
	return strings.Join(fields, ", ")
}
