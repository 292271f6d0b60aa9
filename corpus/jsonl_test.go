package corpus

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sampleJSONL = `{"id":"a","text":"hello world","meta":{"url":"http://x/a","n":3}}
{"text":"no id here"}

{"id":7,"text":"escapes: \"q\" \\ \n tab\t \u00e9 \ud83d\ude00 lone \ud800 end","lang":"en"}
{"id":null,"text":"null id"}
`

func TestJSONLFields(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "s.jsonl", []byte(sampleJSONL))
	res := readAll(t, []string{p}, Options{MetaFields: []string{"meta.url", "lang", "meta"}})
	if len(res.rejects) != 0 || len(res.warnings) != 0 {
		t.Fatalf("rejects %v warnings %v", res.rejects, res.warnings)
	}
	wantIDs := []string{"a", p + ":2", "7", p + ":5"}
	if got := res.ids(); !reflect.DeepEqual(got, wantIDs) {
		t.Fatalf("ids %q, want %q", got, wantIDs)
	}
	d := res.docs[0]
	if string(d.Body) != "hello world" || d.Line != 1 || d.Offset != 0 || d.Format != FormatJSONL || d.HTML {
		t.Errorf("doc 0 = %+v", d)
	}
	if d.Meta["meta.url"] != "http://x/a" || d.Meta["meta"] != `{"url":"http://x/a","n":3}` {
		t.Errorf("meta %v", d.Meta)
	}
	lines := strings.Split(sampleJSONL, "\n")
	if string(d.Raw) != lines[0] {
		t.Errorf("raw %q, want %q", d.Raw, lines[0])
	}
	if res.docs[1].Meta != nil {
		t.Errorf("doc without meta fields has Meta %v", res.docs[1].Meta)
	}
	esc := res.docs[2]
	want := "escapes: \"q\" \\ \n tab\t é 😀 lone \uFFFD end"
	if string(esc.Body) != want {
		t.Errorf("unescaped %q, want %q", esc.Body, want)
	}
	if esc.Line != 4 || esc.Offset != int64(len(lines[0])+len(lines[1])+len(lines[2])+3) {
		t.Errorf("line %d offset %d", esc.Line, esc.Offset)
	}
	if esc.Meta["lang"] != "en" {
		t.Errorf("lang meta %v", esc.Meta)
	}
	if s := res.stats; s.Read != 4 || s.Yielded != 4 || s.Files != 1 {
		t.Errorf("stats %v", s)
	}
}

func TestJSONLDottedFields(t *testing.T) {
	in := `{"doc":{"key":"k1","body":{"text":"deep"}},"text":"top"}` + "\n" +
		`{"doc":{"key":"k2"},"text":"top2"}` + "\n"
	res := readAll(t, []string{"-"}, Options{Stdin: strings.NewReader(in), IDField: "doc.key", TextField: "doc.body.text"})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"k1"}) {
		t.Fatalf("ids %q", got)
	}
	if string(res.docs[0].Body) != "deep" {
		t.Errorf("body %q", res.docs[0].Body)
	}
	if len(res.rejects) != 1 || res.rejects[0].Reason != ReasonMissingText || res.rejects[0].Line != 2 || res.rejects[0].Path != "-" {
		t.Errorf("rejects %v", res.rejects)
	}
}

func TestJSONLBadInput(t *testing.T) {
	lines := []string{
		`{"id":"ok1","text":"fine"}`,                             // 1
		`{"id":"bad","text":"unterminated}`,                      // 2 bad json
		`["not","an","object"]`,                                  // 3 bad json
		`{"id":"nt"}`,                                            // 4 missing text
		`{"id":"num","text":42}`,                                 // 5 not a string
		`{"id":"big","text":"` + strings.Repeat("x", 200) + `"}`, // 6 too large
		"{\"id\":\"utf\",\"text\":\"caf\xe9\"}",                  // 7 invalid UTF-8
		`{"id":"ok2","text":"fine again"}`,                       // 8
	}
	in := strings.Join(lines, "\n") // no final newline
	offsets := make([]int64, len(lines))
	for i := 1; i < len(lines); i++ {
		offsets[i] = offsets[i-1] + int64(len(lines[i-1])) + 1
	}
	dir := t.TempDir()
	p := writeFile(t, dir, "bad.jsonl", []byte(in))

	res := readAll(t, []string{p}, Options{MaxRecordBytes: 100})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"ok1", "utf", "ok2"}) {
		t.Errorf("ids %q", got)
	}
	if got := string(res.docs[1].Body); got != "caf\uFFFD" {
		t.Errorf("repaired body %q", got)
	}
	if got := string(res.docs[1].Raw); got != lines[6] {
		t.Errorf("raw of repaired record changed: %q", got)
	}
	want := []struct {
		line   int64
		reason string
	}{{2, ReasonBadJSON}, {3, ReasonBadJSON}, {4, ReasonMissingText}, {5, ReasonMissingText}, {6, ReasonTooLarge}}
	if len(res.rejects) != len(want) {
		t.Fatalf("rejects %v", res.rejects)
	}
	for i, w := range want {
		e := res.rejects[i]
		if e.Path != p || e.Line != w.line || e.Reason != w.reason || e.Offset != offsets[w.line-1] {
			t.Errorf("reject %d = %+v, want line %d offset %d reason %s", i, e, w.line, offsets[w.line-1], w.reason)
		}
		if !strings.Contains(e.Error(), p+":") {
			t.Errorf("error %q does not name the file and line", e.Error())
		}
	}
	if len(res.warnings) != 1 || res.warnings[0].Reason != ReasonInvalidUTF8 || res.warnings[0].Line != 7 {
		t.Errorf("warnings %v", res.warnings)
	}
	s := res.stats
	if s.Read != 8 || s.Yielded != 3 || s.Rejected != 5 || s.RejectedBy[ReasonBadJSON] != 2 || s.WarningsBy[ReasonInvalidUTF8] != 1 {
		t.Errorf("stats %v", s)
	}

	// Rejecting invalid UTF-8 instead.
	res = readAll(t, []string{p}, Options{MaxRecordBytes: 100, RejectInvalidUTF8: true})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"ok1", "ok2"}) {
		t.Errorf("ids %q", got)
	}
	if res.stats.RejectedBy[ReasonInvalidUTF8] != 1 || res.stats.Warnings != 0 {
		t.Errorf("stats %v", res.stats)
	}
}

func TestJSONLLongLines(t *testing.T) {
	// Lines longer than the 64 KiB read buffer, around the cap.
	long := strings.Repeat("y", 100<<10)
	in := `{"text":"` + long + `"}` + "\n" + `{"text":"` + long + `z"}` + "\n" + `{"text":"short"}`
	capBytes := int64(len(long) + 11) // exactly the first line
	res := readAll(t, []string{"-"}, Options{Stdin: strings.NewReader(in), MaxRecordBytes: capBytes})
	if len(res.docs) != 2 || len(res.docs[0].Body) != len(long) || string(res.docs[1].Body) != "short" {
		t.Fatalf("docs %d", len(res.docs))
	}
	if len(res.rejects) != 1 || res.rejects[0].Reason != ReasonTooLarge || res.rejects[0].Line != 2 {
		t.Errorf("rejects %v", res.rejects)
	}
	if res.docs[1].Line != 3 || res.docs[1].Offset != int64(2*len(long)+25) {
		t.Errorf("line %d offset %d", res.docs[1].Line, res.docs[1].Offset)
	}
}

func TestCompressedJSONL(t *testing.T) {
	dir := t.TempDir()
	plain := readAll(t, []string{writeFile(t, dir, "p.jsonl", []byte(sampleJSONL))}, Options{})
	for _, c := range []struct {
		name string
		data []byte
		comp Compression
	}{
		{"g.jsonl.gz", gzipBytes(t, []byte(sampleJSONL)), CompressionGzip},
		{"z.jsonl.zst", zstdBytes(t, []byte(sampleJSONL)), CompressionZstd},
		// Magic bytes decide, not the name; the content sniff finds JSONL.
		{"g.bin", gzipBytes(t, []byte(sampleJSONL)), CompressionGzip},
		{"z.dat", zstdBytes(t, []byte(sampleJSONL)), CompressionZstd},
	} {
		p := writeFile(t, dir, c.name, c.data)
		res := readAll(t, []string{p}, Options{})
		if len(res.docs) != len(plain.docs) || len(res.rejects) != 0 {
			t.Fatalf("%s: %d docs, rejects %v", c.name, len(res.docs), res.rejects)
		}
		for i, d := range res.docs {
			if d.Compression != c.comp || !bytes.Equal(d.Body, plain.docs[i].Body) || !bytes.Equal(d.Raw, plain.docs[i].Raw) || d.Offset != plain.docs[i].Offset {
				t.Errorf("%s doc %d differs: %+v", c.name, i, d)
			}
		}
		if res.stats.Bytes != int64(len(c.data)) {
			t.Errorf("%s: Bytes %d, want compressed size %d", c.name, res.stats.Bytes, len(c.data))
		}
	}
}

func TestTruncatedAndCorruptStreams(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString(`{"text":"line number `)
		b.WriteString(strings.Repeat("abc ", i%7))
		b.WriteString(`"}` + "\n")
	}
	full := []byte(b.String())
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		data   []byte
		reason string
	}{
		{"trunc.jsonl.gz", gzipBytes(t, full), ReasonTruncated},
		{"trunc.jsonl.zst", zstdBytes(t, full), ReasonTruncated},
	} {
		cut := c.data[:len(c.data)*2/3]
		p := writeFile(t, dir, c.name, cut)
		res := readAll(t, []string{p}, Options{})
		if len(res.rejects) != 1 {
			t.Fatalf("%s: rejects %v", c.name, res.rejects)
		}
		e := res.rejects[0]
		if e.Reason != c.reason || e.Path != p || e.Line != int64(len(res.docs))+1 {
			t.Errorf("%s: reject %+v after %d docs", c.name, e, len(res.docs))
		}
		if len(res.docs) == 0 || len(res.docs) >= 20000 {
			t.Errorf("%s: %d docs before the cut", c.name, len(res.docs))
		}
		// Every yielded document is a complete, correct line.
		for i, d := range res.docs {
			if !bytes.HasPrefix(full[d.Offset:], append(append([]byte{}, d.Raw...), '\n')) {
				t.Fatalf("%s: doc %d raw does not match the input", c.name, i)
			}
		}
	}

	// A corrupt gzip body (bad deflate data, then checksum): corrupt.
	gz := gzipBytes(t, full)
	bad := append([]byte{}, gz...)
	for i := 20; i < 40; i++ {
		bad[i] ^= 0xff
	}
	p := writeFile(t, dir, "corrupt.jsonl.gz", bad)
	res := readAll(t, []string{p}, Options{})
	if res.stats.Rejected < 1 || res.rejects[len(res.rejects)-1].Reason != ReasonCorrupt {
		t.Errorf("corrupt gzip: rejects %v", res.rejects)
	}
	// A gzip header alone is truncated.
	p = writeFile(t, dir, "header.gz", gz[:5])
	res = readAll(t, []string{p}, Options{})
	if len(res.rejects) != 1 || res.rejects[0].Reason != ReasonTruncated {
		t.Errorf("short gzip: rejects %v", res.rejects)
	}
}

func TestMaxRejects(t *testing.T) {
	in := strings.Repeat("nope\n", 10)
	r, err := Open([]string{"-"}, Options{Stdin: strings.NewReader(in), Format: FormatJSONL, MaxRejects: 3})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
	}
	if !errors.Is(r.Err(), ErrTooManyRejects) || r.Stats().Rejected != 3 {
		t.Errorf("err %v stats %v", r.Err(), r.Stats())
	}
}

func TestOptionsValidate(t *testing.T) {
	_, err := Open(nil, Options{Include: []string{"[bad"}, MaxRecordBytes: -1, IDField: "a..b"})
	if !errors.Is(err, ErrOptions) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"[bad", "MaxRecordBytes", "a..b"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestLookupScanner(t *testing.T) {
	obj := []byte(` { "a" : [1, {"x":"}"}, "]"], "b\"q" : {"c" : "d\\"}, "e\u0066" : true , "g":{"h":{"i":-1.5e3}} } `)
	for _, c := range []struct {
		path []string
		want string
		ok   bool
	}{
		{[]string{"a"}, `[1, {"x":"}"}, "]"]`, true},
		{[]string{"b\"q", "c"}, `"d\\"`, true},
		{[]string{"ef"}, `true`, true},
		{[]string{"g", "h", "i"}, `-1.5e3`, true},
		{[]string{"g", "h", "j"}, ``, false},
		{[]string{"a", "x"}, ``, false},
		{[]string{"zz"}, ``, false},
	} {
		v, ok := lookup(obj, c.path)
		if ok != c.ok || string(v) != c.want {
			t.Errorf("lookup %q = %q %v, want %q %v", c.path, v, ok, c.want, c.ok)
		}
	}
}

func TestStdinText(t *testing.T) {
	res := readAll(t, []string{"-"}, Options{Stdin: strings.NewReader("just some text\n")})
	if len(res.docs) != 1 || res.docs[0].ID != "-" || res.docs[0].Format != FormatText || string(res.docs[0].Body) != "just some text\n" || res.docs[0].Name != "stdin" {
		t.Fatalf("docs %+v", res.docs)
	}
	if res.err != nil || filepath.Base(res.docs[0].Source) != "-" {
		t.Errorf("err %v source %q", res.err, res.docs[0].Source)
	}
}
