package corpus

import (
	"encoding/json"
	"strings"
	"testing"
)

var validCases = []string{
	`{}`, `[]`, ` {"a" : [1, -2.5e+3, 0, 0.0, 1E5, true, false, null, "s\"\\\/\b\f\n\r\t\u00e9"]} `,
	`"str"`, `0`, `-0`, `12`, `{"a":{"b":{}}}`, "\t{\"x\":1}\r\n",
	`{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`,
	`"\x"`, `"\u12G4"`, `"\u12"`, "\"a\x01b\"", `tru`, `nulls`, `{"a":1}{}`, `"unterminated`, ``, ` `,
	"\"caf\xe9\"", `{"a":1 , "b" : [ ] }`, `[[[[]]]]`, `{1:2}`, `["a\` + "\n" + `b"]`,
	// Long strings: the eight-byte scan, with the stopping byte at
	// several offsets of a word, and high bytes (≥ 0x80) beside it.
	`{"text":"0123456789abcdef\"0123456789abcdef"}`, `{"text":"01234567\u00e9abcdefgh01234567"}`,
	"{\"text\":\"0123456\x1f89abcdef0123456789\"}", "\"0123456789abcdef\xff\xfe\x80\x9f0123456789\"",
	`"abcdefghijklmnopqrstuvwxyz0123456789"`, `"abcdefghijklmnopqrstuvwxyz0123456`, `"abcdefgh\"ijklmnop\\qrstuvwxyz"`,
	"\"abcdefghi\x7fjklmnop\xc3\xa9qrstuvwx\"",
}

func TestValidJSON(t *testing.T) {
	cases := append([]string{}, validCases...)
	cases = append(cases, strings.Repeat("[", maxJSONDepth)+strings.Repeat("]", maxJSONDepth))
	cases = append(cases, strings.Repeat("[", maxJSONDepth+1)+strings.Repeat("]", maxJSONDepth+1))
	cases = append(cases, strings.Repeat(`{"a":`, maxJSONDepth)+"1"+strings.Repeat("}", maxJSONDepth))
	for _, c := range cases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.40q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

// FuzzValidJSON checks validJSON against encoding/json.Valid, the oracle.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}
