package server

// This file holds hand-written JSON for the hot request and reply types:
// the bodies of POST /v1/documents and /v1/query (a list of documents
// whose texts are most of the bytes) and the replies of both (lists of
// matches). encoding/json validates a body in one pass and decodes it by
// reflection in a second, and encodes by reflection; at thousands of
// documents a second that was a tenth of a query's CPU time.
//
// The decoder is a fast path, not a second JSON implementation: it accepts
// only the plain shape of these bodies — the known field names spelled
// exactly, each at most once, strings, booleans, whitespace — and anything
// else (an unknown or differently cased field, a null, a number, invalid
// UTF-8, a control character, trailing data) makes it give up, and the
// body is decoded by encoding/json, which then also words the error. What
// it accepts it decodes exactly as encoding/json does (escapes and
// surrogate pairs included; FuzzFastDecode compares the two). The encoder
// writes the bytes json.Marshal writes (TestFastEncode compares them).

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/neardup/neardup/server/api"
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
			return d.escaped(start)
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
// start, as encoding/json's unquote does.
func (d *fastDecoder) escaped(start int) ([]byte, bool) {
	d.buf = append(d.buf[:0], d.b[start:d.i]...)
	high := false
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

func (d *fastDecoder) documents(dst []api.Document) ([]api.Document, bool) {
	if !d.byte('[') {
		return nil, false
	}
	if dst == nil {
		dst = []api.Document{}
	}
	if d.byte(']') {
		return dst, true
	}
	for {
		var doc api.Document
		var seen [3]bool
		ok := d.object(func(k []byte) bool {
			var f int
			switch string(k) {
			case "id":
				f = 0
			case "text":
				f = 1
			case "html":
				f = 2
			default:
				return false
			}
			if seen[f] {
				return false
			}
			seen[f] = true
			if f == 2 {
				v, ok := d.boolean()
				doc.HTML = v
				return ok
			}
			s, ok := d.str()
			if f == 0 {
				doc.ID = string(s)
			} else {
				doc.Text = string(s)
			}
			return ok
		})
		if !ok {
			return nil, false
		}
		dst = append(dst, doc)
		if d.byte(']') {
			return dst, true
		}
		if !d.byte(',') {
			return nil, false
		}
	}
}

// end reports whether only whitespace is left.
func (d *fastDecoder) end() bool {
	d.ws()
	return d.i == len(d.b)
}

// fastDecode decodes body into v when v is an *api.AddRequest or an
// *api.QueryRequest and the body has the plain shape; false means decode
// it with encoding/json instead (v is then untouched).
func fastDecode(body []byte, v any) bool {
	d := fastDecoder{b: body}
	switch v := v.(type) {
	case *api.AddRequest:
		var r api.AddRequest
		var seenDocs, seenIfNew bool
		ok := d.object(func(k []byte) bool {
			switch string(k) {
			case "documents":
				if seenDocs {
					return false
				}
				seenDocs = true
				var ok bool
				r.Documents, ok = d.documents(nil)
				return ok
			case "if_new":
				if seenIfNew {
					return false
				}
				seenIfNew = true
				var ok bool
				r.IfNew, ok = d.boolean()
				return ok
			}
			return false
		})
		if !ok || !d.end() {
			return false
		}
		*v = r
		return true
	case *api.QueryRequest:
		var r api.QueryRequest
		var seenDocs bool
		ok := d.object(func(k []byte) bool {
			if string(k) != "documents" || seenDocs || d.peek() != '[' {
				return false
			}
			seenDocs = true
			var ok bool
			r.Documents, ok = d.documents(nil)
			return ok
		})
		if !ok || !d.end() {
			return false
		}
		*v = r
		return true
	}
	return false
}

// appendString appends s as json.Marshal writes it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
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

func appendMatches(dst []byte, ms []api.Match) []byte {
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
func appendQueryResponse(dst []byte, r *api.QueryResponse) []byte {
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
func appendAddResponse(dst []byte, r *api.AddResponse) []byte {
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

// marshal is json.Marshal with the hand-written encoders for the hot
// replies.
func marshal(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case api.QueryResponse:
		if finite(v.Results) {
			return appendQueryResponse(dst, &v), nil
		}
	case api.AddResponse:
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

func finite(rs []api.QueryResult) bool {
	for _, r := range rs {
		if !finiteMatches(r.Matches) {
			return false
		}
	}
	return true
}

// finiteMatches reports whether every number is finite (json.Marshal
// fails on the others, and so must we).
func finiteMatches(ms []api.Match) bool {
	for _, m := range ms {
		for _, f := range [3]float64{m.Similarity, m.Estimate, m.StdErr} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return false
			}
		}
	}
	return true
}
