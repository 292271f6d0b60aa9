package api

// This file holds hand-written JSON for the hot bodies, in both
// directions: the requests of POST /v1/documents and /v1/query (a list of
// documents whose texts are most of the bytes) and their replies (lists
// of matches). encoding/json validates a body in one pass and decodes it
// by reflection in a second, and encodes by reflection; at thousands of
// documents a second that was a tenth of a query's CPU time on the server,
// and as much again in a client.
//
// The decoder is a fast path, not a second JSON implementation: it accepts
// only the plain shape of these bodies — the known field names spelled
// exactly, each at most once, strings, booleans, plain numbers, whitespace
// — and anything else (an unknown or differently cased field, a null
// where a list is expected, invalid UTF-8, a control character, trailing
// data) makes it give up, and the body is decoded by encoding/json, which
// then also words the error. What it accepts it decodes exactly as
// encoding/json does (escapes and surrogate pairs included;
// FuzzDecodeFast compares the two). The encoder writes the bytes
// json.Marshal writes (TestAppendJSON and FuzzAppendString compare them).

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// fastDecoder parses one body; ok turns false at the first thing off the
// fast path.
type fastDecoder struct {
	b   []byte
	i   int
	buf []byte // unescaped string bytes
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// byte consumes c (after whitespace) and reports whether it was there.
func (d *fastDecoder) byte(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// peek returns the next byte after whitespace, or 0 at the end.
func (d *fastDecoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// str parses a string and returns its unescaped bytes (valid until the
// next call).
func (d *fastDecoder) str() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	high := false
	for d.i < len(d.b) {
		if d.i+8 <= len(d.b) && strPlain8(binary.LittleEndian.Uint64(d.b[d.i:])) {
			d.i += 8
			continue
		}
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if high && !utf8.Valid(s) {
				return nil, false // encoding/json would replace the bad bytes
			}
			return s, true
		case c == '\\':
			return d.escaped(start, high)
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			high = true
		}
		d.i++
	}
	return nil, false
}

// escaped finishes a string holding escapes, from its first byte at
// start (high: a byte >= 0x80 came before the first escape), as
// encoding/json's unquote does.
func (d *fastDecoder) escaped(start int, high bool) ([]byte, bool) {
	d.buf = append(d.buf[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if high && !utf8.Valid(d.buf) {
				return nil, false
			}
			return d.buf, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			if c >= 0x80 {
				high = true
			}
			d.buf = append(d.buf, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return nil, false
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			d.buf = append(d.buf, e)
		case 'b':
			d.buf = append(d.buf, '\b')
		case 'f':
			d.buf = append(d.buf, '\f')
		case 'n':
			d.buf = append(d.buf, '\n')
		case 'r':
			d.buf = append(d.buf, '\r')
		case 't':
			d.buf = append(d.buf, '\t')
		case 'u':
			r := d.u4(d.i)
			if r < 0 {
				return nil, false
			}
			d.i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					r2 = d.u4(d.i + 2)
				}
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					d.i += 6
					r = dec
				} else {
					r = unicode.ReplacementChar
				}
			}
			d.buf = utf8.AppendRune(d.buf, r)
		default:
			return nil, false
		}
	}
	return nil, false
}

// u4 decodes the 4 hex digits at i, or returns -1.
func (d *fastDecoder) u4(i int) rune {
	if i+4 > len(d.b) {
		return -1
	}
	var r rune
	for _, c := range d.b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func (d *fastDecoder) boolean() (v, ok bool) {
	d.ws()
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true, true
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

// object calls member for each key of an object until it returns false.
func (d *fastDecoder) object(member func(key []byte) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	for {
		k, ok := d.str()
		if !ok || !d.byte(':') || !member(k) {
			return false
		}
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// fields parses an object whose keys are all among names, each at most
// once (len(names) <= 64), calling value(f) to parse the value of
// names[f].
func (d *fastDecoder) fields(names []string, value func(f int) bool) bool {
	var seen uint64
	return d.object(func(k []byte) bool {
		for f, n := range names {
			if string(k) == n {
				if seen&(1<<f) != 0 {
					return false
				}
				seen |= 1 << f
				return value(f)
			}
		}
		return false
	})
}

// text parses a string into *dst.
func (d *fastDecoder) text(dst *string) bool {
	s, ok := d.str()
	*dst = string(s)
	return ok
}

// documents parses a list of documents (never null).
func (d *fastDecoder) documents() ([]Document, bool) {
	return objects(d, []string{"id", "text", "html"}, func(doc *Document, f int) (ok bool) {
		switch f {
		case 0:
			return d.text(&doc.ID)
		case 1:
			return d.text(&doc.Text)
		}
		doc.HTML, ok = d.boolean()
		return ok
	})
}

// objects parses a list (never null) of objects of the fields names, value
// parsing names[f] into an element.
func objects[T any](d *fastDecoder, names []string, value func(x *T, f int) bool) ([]T, bool) {
	xs := []T{}
	ok := d.list(func() bool {
		xs = append(xs, *new(T))
		x := &xs[len(xs)-1]
		return d.fields(names, func(f int) bool { return value(x, f) })
	})
	return xs, ok
}

// list calls elem for each element of an array until it returns false.
func (d *fastDecoder) list(elem func() bool) bool {
	if !d.byte('[') {
		return false
	}
	if d.byte(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.byte(']') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// number parses a JSON number as encoding/json decodes it into a float64
// (the grammar is checked first: strconv alone would take "inf", "0x1p3"
// or "1_0"); out of range gives up.
func (d *fastDecoder) number() (float64, bool) {
	d.ws()
	start := d.i
	if !d.numberSyntax() {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	return f, err == nil
}

// integer parses a JSON number as encoding/json decodes it into an int:
// digits only, in range.
func (d *fastDecoder) integer() (int, bool) {
	d.ws()
	start := d.i
	if !d.numberSyntax() {
		return 0, false
	}
	n, err := strconv.Atoi(string(d.b[start:d.i]))
	return n, err == nil
}

// numberSyntax consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (d *fastDecoder) numberSyntax() bool {
	digits := func() int {
		n := 0
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case digits() == 0:
		return false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// matches parses a list of matches (never null: the server writes []).
func (d *fastDecoder) matches() ([]Match, bool) {
	return objects(d, []string{"id", "similarity", "estimate", "stderr", "exact"}, func(m *Match, f int) (ok bool) {
		switch f {
		case 0:
			return d.text(&m.ID)
		case 1:
			m.Similarity, ok = d.number()
		case 2:
			m.Estimate, ok = d.number()
		case 3:
			m.StdErr, ok = d.number()
		case 4:
			m.Exact, ok = d.boolean()
		}
		return ok
	})
}

func (d *fastDecoder) queryResults() ([]QueryResult, bool) {
	return objects(d, []string{"id", "matches"}, func(r *QueryResult, f int) (ok bool) {
		if f == 0 {
			return d.text(&r.ID)
		}
		r.Matches, ok = d.matches()
		return ok
	})
}

func (d *fastDecoder) addResults() ([]AddResult, bool) {
	return objects(d, []string{"id", "added", "matches"}, func(r *AddResult, f int) (ok bool) {
		switch f {
		case 0:
			return d.text(&r.ID)
		case 1:
			r.Added, ok = d.boolean()
		case 2:
			r.Matches, ok = d.matches()
		}
		return ok
	})
}

// strings parses a list of strings (never null).
func (d *fastDecoder) strings() ([]string, bool) {
	ss := []string{}
	ok := d.list(func() bool {
		ss = append(ss, "")
		return d.text(&ss[len(ss)-1])
	})
	return ss, ok
}

func (d *fastDecoder) collapsed() ([]Collapsed, bool) {
	return objects(d, []string{"id", "into"}, func(c *Collapsed, f int) bool {
		if f == 0 {
			return d.text(&c.ID)
		}
		return d.text(&c.Into)
	})
}

// end reports whether only whitespace is left.
func (d *fastDecoder) end() bool {
	d.ws()
	return d.i == len(d.b)
}

// DecodeFast decodes body into v — an *AddRequest, *QueryRequest,
// *CollapseRequest, *AddResponse, *QueryResponse or *CollapseResponse,
// which it overwrites — when the body has
// the plain shape, with the result encoding/json would give; false means
// decode it with encoding/json instead (v is then untouched).
func DecodeFast(body []byte, v any) bool {
	d := &fastDecoder{b: body}
	switch v := v.(type) {
	case *AddRequest:
		return decodeObject(d, v, []string{"documents", "if_new"}, func(r *AddRequest, f int) (ok bool) {
			if f == 0 {
				r.Documents, ok = d.documents()
			} else {
				r.IfNew, ok = d.boolean()
			}
			return ok
		})
	case *QueryRequest:
		return decodeObject(d, v, []string{"documents"}, func(r *QueryRequest, _ int) (ok bool) {
			r.Documents, ok = d.documents()
			return ok
		})
	case *CollapseRequest:
		return decodeObject(d, v, []string{"ids"}, func(r *CollapseRequest, _ int) (ok bool) {
			r.IDs, ok = d.strings()
			return ok
		})
	case *QueryResponse:
		return decodeObject(d, v, []string{"results"}, func(r *QueryResponse, _ int) (ok bool) {
			r.Results, ok = d.queryResults()
			return ok
		})
	case *AddResponse:
		return decodeObject(d, v, []string{"results", "added"}, func(r *AddResponse, f int) (ok bool) {
			if f == 0 {
				r.Results, ok = d.addResults()
			} else {
				r.Added, ok = d.integer()
			}
			return ok
		})
	case *CollapseResponse:
		return decodeObject(d, v, []string{"kept", "collapsed", "unknown"}, func(r *CollapseResponse, f int) (ok bool) {
			switch f {
			case 0:
				r.Kept, ok = d.strings()
			case 1:
				r.Collapsed, ok = d.collapsed()
			case 2:
				r.Unknown, ok = d.strings()
			}
			return ok
		})
	}
	return false
}

// decodeObject decodes the whole body, an object of the fields names
// (value parses names[f] into r), into *v, which it leaves untouched when
// the body is off the fast path.
func decodeObject[T any](d *fastDecoder, v *T, names []string, value func(r *T, f int) bool) bool {
	var r T
	if !d.fields(names, func(f int) bool { return value(&r, f) }) || !d.end() {
		return false
	}
	*v = r
	return true
}

// appendString appends s as json.Marshal writes it: HTML characters,
// control characters, U+2028 and U+2029 escaped, invalid UTF-8 as
// U+FFFD. Runs of eight plain ASCII bytes are checked at once.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start, i := 0, 0
	for i < len(s) {
		if i+8 <= len(s) && plain8(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// plainByte marks the ASCII bytes json.Marshal writes as they are.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// strPlain8 reports whether none of the eight bytes of w ends or escapes
// a string or needs a check: no ", \\, control character or byte ≥ 0x80
// (the zero-byte test of plain8).
func strPlain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ '"'*ones
	bs := w ^ '\\'*ones
	t := w | (w-0x20*ones)&^w | (q-ones)&^q | (bs-ones)&^bs
	return t&highs == 0
}

// plain8 reports whether the eight bytes of w are all plain ASCII
// (plainByte), by the word-at-a-time zero-byte test: (x − 0x01…) &^ x has
// a byte's high bit set for some byte iff x has a zero byte. " and & (0x22,
// 0x26) are one test with bit 2 set, < and > (0x3c, 0x3e) one with bit 1.
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	qa := (w | 0x04*ones) ^ 0x26*ones
	lg := (w | 0x02*ones) ^ 0x3e*ones
	bs := w ^ '\\'*ones
	t := w | (w-0x20*ones)&^w | (qa-ones)&^qa | (lg-ones)&^lg | (bs-ones)&^bs
	return t&highs == 0
}

// appendFloat appends f as json.Marshal writes a float64 (f is finite).
func appendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json does.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

func appendMatches(dst []byte, ms []Match) []byte {
	if ms == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, m.ID)
		dst = append(dst, `,"similarity":`...)
		dst = appendFloat(dst, m.Similarity)
		dst = append(dst, `,"estimate":`...)
		dst = appendFloat(dst, m.Estimate)
		dst = append(dst, `,"stderr":`...)
		dst = appendFloat(dst, m.StdErr)
		dst = append(dst, `,"exact":`...)
		dst = strconv.AppendBool(dst, m.Exact)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendQueryResponse appends json.Marshal(r).
func appendQueryResponse(dst []byte, r *QueryResponse) []byte {
	if r.Results == nil {
		return append(dst, `{"results":null}`...)
	}
	dst = append(dst, `{"results":[`...)
	for i, x := range r.Results {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, x.ID)
		dst = append(dst, `,"matches":`...)
		dst = appendMatches(dst, x.Matches)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// appendAddResponse appends json.Marshal(r).
func appendAddResponse(dst []byte, r *AddResponse) []byte {
	if r.Results == nil {
		dst = append(dst, `{"results":null`...)
	} else {
		dst = append(dst, `{"results":[`...)
		for i, x := range r.Results {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = appendString(dst, x.ID)
			dst = append(dst, `,"added":`...)
			dst = strconv.AppendBool(dst, x.Added)
			dst = append(dst, `,"matches":`...)
			dst = appendMatches(dst, x.Matches)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"added":`...)
	dst = strconv.AppendInt(dst, int64(r.Added), 10)
	return append(dst, '}')
}

func appendDocuments(dst []byte, docs []Document) []byte {
	if docs == nil {
		return append(dst, "null"...)
	}
	n := 2 // what the body takes without escapes: grown once
	for _, d := range docs {
		n += len(d.ID) + len(d.Text) + len(`{"id":"","text":"","html":true},`)
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, '[')
	for i, d := range docs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, d.ID)
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, d.Text)
		if d.HTML {
			dst = append(dst, `,"html":true`...)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// AppendJSON appends json.Marshal(v) to dst, by hand for the hot bodies
// (AddRequest, QueryRequest without sketches, CollapseRequest and their
// replies, values or pointers) and by encoding/json for the rest.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case *CollapseRequest:
		if v != nil {
			return AppendJSON(dst, *v)
		}
	case *CollapseResponse:
		if v != nil {
			return AppendJSON(dst, *v)
		}
	case CollapseRequest:
		dst = append(dst, `{"ids":`...)
		dst = appendStrings(dst, v.IDs)
		return append(dst, '}'), nil
	case CollapseResponse:
		dst = append(dst, `{"kept":`...)
		dst = appendStrings(dst, v.Kept)
		dst = append(dst, `,"collapsed":`...)
		if v.Collapsed == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '[')
			for i, c := range v.Collapsed {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"id":`...)
				dst = appendString(dst, c.ID)
				dst = append(dst, `,"into":`...)
				dst = appendString(dst, c.Into)
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
		dst = append(dst, `,"unknown":`...)
		dst = appendStrings(dst, v.Unknown)
		return append(dst, '}'), nil
	case *AddRequest:
		if v != nil {
			return AppendJSON(dst, *v)
		}
	case *QueryRequest:
		if v != nil {
			return AppendJSON(dst, *v)
		}
	case *QueryResponse:
		if v != nil {
			return AppendJSON(dst, *v)
		}
	case *AddResponse:
		if v != nil {
			return AppendJSON(dst, *v)
		}
	case AddRequest:
		dst = append(dst, `{"documents":`...)
		dst = appendDocuments(dst, v.Documents)
		if v.IfNew {
			dst = append(dst, `,"if_new":true`...)
		}
		return append(dst, '}'), nil
	case QueryRequest:
		if len(v.Sketches) == 0 {
			if len(v.Documents) == 0 {
				return append(dst, "{}"...), nil
			}
			dst = append(dst, `{"documents":`...)
			dst = appendDocuments(dst, v.Documents)
			return append(dst, '}'), nil
		}
	case QueryResponse:
		if finite(v.Results) {
			return appendQueryResponse(dst, &v), nil
		}
	case AddResponse:
		ok := true
		for _, r := range v.Results {
			ok = ok && finiteMatches(r.Matches)
		}
		if ok {
			return appendAddResponse(dst, &v), nil
		}
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

func finite(rs []QueryResult) bool {
	for _, r := range rs {
		if !finiteMatches(r.Matches) {
			return false
		}
	}
	return true
}

// finiteMatches reports whether every number is finite (json.Marshal
// fails on the others, and so must we).
func finiteMatches(ms []Match) bool {
	for _, m := range ms {
		for _, f := range [3]float64{m.Similarity, m.Estimate, m.StdErr} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return false
			}
		}
	}
	return true
}
