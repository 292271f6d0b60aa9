package corpus

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16LE encodes s as UTF-16LE with a byte order mark.
func utf16LE(s string) []byte {
	b := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

// TestCharsets reads pages and texts in legacy encodings, given as real
// bytes: the body handed on is UTF-8 with the accents kept, Charset names
// the encoding, and Raw keeps the original bytes.
func TestCharsets(t *testing.T) {
	latin1 := "caf\xe9 cr\xe8me br\xfbl\xe9e \xe0 la fran\xe7aise" // ISO-8859-1 bytes
	want := "café crème brûlée à la française"
	page := func(head string) []byte {
		return []byte("<html><head>" + head + "</head><body><p>" + latin1 + "</p></body></html>")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name        string
		data        []byte
		want        string // in Body
		charset     string
		warnings    int
		contentType string // for WARC cases: the HTTP Content-Type
	}{
		{name: "meta-charset.html", data: page(`<meta charset="iso-8859-1">`), want: want, charset: "windows-1252"},
		{name: "http-equiv.html", data: page(`<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">`), want: want, charset: "windows-1252"},
		{name: "latin2.html", data: []byte("<meta charset=\"iso-8859-2\"><p>P\xf8\xedli\xb9 \xbelu\xbbou\xe8k\xfd k\xf9\xf2</p>"), want: "Příliš žluťoučký kůň", charset: "iso-8859-2"},
		{name: "shift_jis.html", data: []byte(`<meta charset="shift_jis"><p>` + "\x93\xfa\x96\x7b\x8c\xea" + `</p>`), want: "日本語", charset: "shift_jis"},
		{name: "undeclared.html", data: page(""), want: want, charset: "windows-1252"}, // the web's default
		{name: "utf16.html", data: utf16LE("<p>" + want + "</p>"), want: "<p>" + want + "</p>", charset: "utf-16le"},
		{name: "mislabelled.html", data: []byte(`<meta charset="iso-8859-1"><p>` + want + `</p>`), want: want, charset: ""}, // valid UTF-8 stays
		{name: "utf8.html", data: page(`<meta charset="utf-8">`), want: "caf\uFFFD cr\uFFFDme", charset: "", warnings: 1},   // declared UTF-8: repaired
		{name: "latin1.txt", data: []byte(latin1), want: "caf\uFFFD cr\uFFFDme", charset: "", warnings: 1},                  // text without a declaration: repaired
		{name: "utf16.txt", data: utf16LE(want), want: want, charset: "utf-16le"},
		{name: "header.warc", data: response("http://x/", "text/html; charset=iso-8859-1", latin1), want: want, charset: "windows-1252"},
		{name: "header-beats-meta.warc", data: response("http://y/", "text/html; charset=iso-8859-2", "<meta charset=\"iso-8859-1\"><p>\xb9</p>"), want: "š", charset: "iso-8859-2"},
		{name: "plain.warc", data: response("http://z/", "text/plain; charset=windows-1252", "\x93quoted\x94 caf\xe9"), want: "“quoted” café", charset: "windows-1252"},
		{name: "resource.warc", data: warcRecord("resource", "file:///r.html", "text/html; charset=iso-8859-1", []byte(latin1)), want: want, charset: "windows-1252"},
	} {
		p := writeFile(t, dir, c.name, c.data)
		res := readAll(t, []string{p}, Options{})
		if len(res.docs) != 1 || len(res.rejects) != 0 {
			t.Fatalf("%s: %d docs, rejects %v", c.name, len(res.docs), res.rejects)
		}
		d := res.docs[0]
		if !strings.Contains(string(d.Body), c.want) || d.Charset != c.charset || len(res.warnings) != c.warnings {
			t.Errorf("%s: body %q charset %q warnings %v; want %q %q", c.name, d.Body, d.Charset, res.warnings, c.want, c.charset)
		}
		if d.Format != FormatWARC && !bytes.Equal(d.Raw, c.data) {
			t.Errorf("%s: raw bytes changed", c.name)
		}
	}
}
