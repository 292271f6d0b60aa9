package corpus

import (
	"bytes"
	"mime"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// Character sets. Document.Body is UTF-8 whatever the input's encoding:
// the HTML-to-text conversion in package feature reads UTF-8 only, so the
// decoding happens here, where the HTTP header is still at hand. The
// encoding of an HTML body comes from, in order (the WHATWG encoding
// sniffing algorithm, as golang.org/x/net/html/charset implements it): a
// byte order mark, the charset parameter of the HTTP Content-Type (WARC
// responses) or of the WARC record's Content-Type (resource records), a
// <meta charset> or <meta http-equiv="Content-Type"> in the first 1024
// bytes, and failing all of these windows-1252, the web's default. Two
// exceptions keep text intact: a body that is valid UTF-8 is kept as it
// is whatever it declares (pages that declare ISO-8859-1 but are written
// in UTF-8 are common; the reverse cannot be valid UTF-8 unless it is
// ASCII), and a declared "utf-8" that is not valid is repaired like any
// other invalid UTF-8 (see Options.RejectInvalidUTF8). Plain text (text
// files, text/plain payloads) is decoded only when a byte order mark or
// an HTTP charset says how; otherwise invalid bytes are repaired.
// Document.Raw keeps the original bytes for writers.

var (
	bomUTF16LE = []byte{0xff, 0xfe}
	bomUTF16BE = []byte{0xfe, 0xff}
)

// needsDecoding reports whether a body may be in another encoding than
// UTF-8: it is not valid UTF-8, or it starts with a UTF-16 byte order mark.
func needsDecoding(body []byte, valid bool) bool {
	return !valid || bytes.HasPrefix(body, bomUTF16LE) || bytes.HasPrefix(body, bomUTF16BE)
}

// decodeCharset returns body decoded to UTF-8 (appended to dst[:0]) and
// the name of the encoding it was decoded from, or body itself and "" when
// it is kept as it is. contentType is the HTTP Content-Type, if any; html
// enables the <meta> prescan and the windows-1252 default.
func decodeCharset(dst, body []byte, contentType string, html bool) ([]byte, string) {
	var e encoding.Encoding
	var name string
	switch {
	case bytes.HasPrefix(body, bom):
		return body, ""
	case bytes.HasPrefix(body, bomUTF16LE):
		e, name = charset.Lookup("utf-16le")
		body = body[2:]
	case bytes.HasPrefix(body, bomUTF16BE):
		e, name = charset.Lookup("utf-16be")
		body = body[2:]
	case utf8.Valid(body):
		return body, ""
	case html:
		e, name, _ = charset.DetermineEncoding(body, contentType)
	default:
		if _, params, err := mime.ParseMediaType(contentType); err == nil && params["charset"] != "" {
			e, name = charset.Lookup(params["charset"])
		}
	}
	if e == nil || name == "utf-8" {
		return body, ""
	}
	dec := e.NewDecoder()
	dst = dst[:0]
	if cap(dst) < len(body)+len(body)/2+16 {
		dst = make([]byte, 0, len(body)+len(body)/2+16)
	}
	for src := body; ; {
		n, m, err := dec.Transform(dst[len(dst):cap(dst)], src, true)
		dst, src = dst[:len(dst)+n], src[m:]
		switch err {
		case nil:
			return dst, name
		case transform.ErrShortDst:
			dst = append(dst, make([]byte, cap(dst)+len(src))...)[:len(dst)]
		default:
			return body, "" // decoders replace bad input; this is a bug guard
		}
	}
}
