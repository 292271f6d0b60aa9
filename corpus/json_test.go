package corpus

import (
	"reflect"
	"strings"
	"testing"
)

func TestJSONDocuments(t *testing.T) {
	dir := t.TempDir()
	single := "{\n  \"id\": \"one\",\n  \"text\": \"a single\\nobject\",\n  \"tags\": [\"x\", \"y\"]\n}\n"
	array := "[\n  {\"id\": \"a\", \"text\": \"first\"},\n  {\"id\": \"b\",\n   \"text\": \"second\"}\n  ,{\"text\": \"third, no id\"}\n]\n"
	lines := `{"id":"l1","text":"json lines"}` + "\n" + `{"id":"l2","text":"saved as .json"}` + "\n"
	for _, c := range []struct {
		name, data string
		ids        []string
		lines      []int64
		raws       []string
	}{
		{"single.json", single, []string{"one"}, []int64{1}, []string{strings.TrimSpace(single)}},
		{"array.json", array, []string{"a", "b", "#3"}, []int64{2, 3, 5}, []string{`{"id": "a", "text": "first"}`, "{\"id\": \"b\",\n   \"text\": \"second\"}", `{"text": "third, no id"}`}},
		{"lines.json", lines, []string{"l1", "l2"}, []int64{1, 2}, []string{`{"id":"l1","text":"json lines"}`, `{"id":"l2","text":"saved as .json"}`}},
		{"bom.json", "\xef\xbb\xbf[{\"id\":\"m\",\"text\":\"after a BOM\"}]", []string{"m"}, []int64{1}, []string{`{"id":"m","text":"after a BOM"}`}},
		{"gz.json.gz", string(gzipBytes(t, []byte(array))), []string{"a", "b", "#3"}, []int64{2, 3, 5}, nil},
	} {
		p := writeFile(t, dir, c.name, []byte(c.data))
		res := readAll(t, []string{p}, Options{MetaFields: []string{"tags"}})
		if len(res.rejects) != 0 {
			t.Fatalf("%s: rejects %v", c.name, res.rejects)
		}
		want := append([]string(nil), c.ids...)
		for i, id := range want {
			if strings.HasPrefix(id, "#") {
				want[i] = p + id
			}
		}
		if got := res.ids(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ids %q, want %q", c.name, got, want)
		}
		plain := c.data
		if strings.HasSuffix(c.name, ".gz") {
			plain = array
		}
		for i, d := range res.docs {
			if d.Format != FormatJSON || d.Line != c.lines[i] || d.inArray != strings.HasPrefix(strings.TrimPrefix(plain, "\xef\xbb\xbf"), "[") {
				t.Errorf("%s doc %d: format %v line %d inArray %v", c.name, i, d.Format, d.Line, d.inArray)
			}
			if !strings.HasPrefix(plain[d.Offset:], string(d.Raw)) {
				t.Errorf("%s doc %d: offset %d does not start its raw bytes", c.name, i, d.Offset)
			}
			if c.raws != nil && string(d.Raw) != c.raws[i] {
				t.Errorf("%s doc %d: raw %q, want %q", c.name, i, d.Raw, c.raws[i])
			}
		}
		if c.name == "single.json" && (string(res.docs[0].Body) != "a single\nobject" || res.docs[0].Meta["tags"] != `["x", "y"]`) {
			t.Errorf("single: %+v", res.docs[0])
		}
	}
}

func TestJSONBadInput(t *testing.T) {
	dir := t.TempDir()
	big := `{"id":"big","text":"` + strings.Repeat("x", 300) + `"}`
	data := "[\n" +
		`{"id":"ok1","text":"fine"},` + "\n" + // 2
		`42,` + "\n" + // 3: not an object
		`["nested"],` + "\n" + // 4: not an object
		`{"id":"bad","text":},` + "\n" + // 5: invalid
		big + ",\n" + // 6: too large
		`{"id":"nt","body":"x"},` + "\n" + // 7: missing text
		`{"id":"ok2","text":"after the bad ones"}` + "\n" + // 8
		`{"id":"ok3","text":"no comma before me"}` + "\n" + // 9: garbage to the end of the line
		"]\n" +
		"] stray\n" + // 11: garbage
		`{"id":"ok4","text":"top level after the array"}` + "\n" + // 12
		`{"id":"cut","text":"the input ends insi` // 13: cut short
	p := writeFile(t, dir, "bad.json", []byte(data))
	res := readAll(t, []string{p}, Options{MaxRecordBytes: 200})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"ok1", "ok2", "ok4"}) {
		t.Errorf("ids %q", got)
	}
	want := []struct {
		line   int64
		reason string
	}{{3, ReasonBadJSON}, {4, ReasonBadJSON}, {5, ReasonBadJSON}, {6, ReasonTooLarge}, {7, ReasonMissingText}, {9, ReasonBadJSON}, {11, ReasonBadJSON}, {13, ReasonBadJSON}}
	if len(res.rejects) != len(want) {
		t.Fatalf("rejects %v", res.rejects)
	}
	for i, w := range want {
		e := res.rejects[i]
		if e.Line != w.line || e.Reason != w.reason || e.Path != p || e.Offset < 0 || e.Offset >= int64(len(data)) {
			t.Errorf("reject %d = %v, want line %d %s", i, e, w.line, w.reason)
		}
	}
	if e := res.rejects[4]; e.ID != "nt" || !reflect.DeepEqual(e.Fields, []string{"id", "body"}) {
		t.Errorf("missing-text reject %+v", e)
	}
	if s := res.stats; s.Read != 11 || s.Yielded != 3 {
		t.Errorf("stats %v", s)
	}
}

// TestWalkSourceTree walks a directory like a Go module: no file may be
// taken for JSONL because it starts with '{', and .json files are JSON
// documents, so there is no bad-json rejection (the issue found 146,000).
func TestWalkSourceTree(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                  "module example.com/x\n\ngo 1.26\n",
		"main.go":                 "package main\n\nfunc main() {}\n",
		"internal/tmpl/page.tmpl": "{{define \"page\"}}<p>{{.}}</p>{{end}}\n",
		"internal/gen/table.go":   "{\n// starts with a brace, as generated code may\n}\n",
		"testdata/config.json":    "{\n  \"name\": \"x\",\n  \"text\": \"a config with a text field\"\n}\n",
		"testdata/list.json":      "[\n  {\"text\": \"one\"},\n  {\"text\": \"two\"}\n]\n",
		"testdata/golden.json":    "{\n  \"want\": [1, 2, 3]\n}\n",
		"LICENSE":                 "Permission is hereby granted, free of charge...\n",
		"README.md":               "# x\n",
		"web/index.html":          "<!DOCTYPE html><p>page</p>",
	}
	for name, body := range files {
		writeFile(t, dir, name, []byte(body))
	}
	res := readAll(t, []string{dir}, Options{})
	if n := res.stats.RejectedBy[ReasonBadJSON]; n != 0 {
		t.Errorf("%d bad-json rejections: %v", n, res.rejects)
	}
	// golden.json has no text field: one missing-text, naming its fields.
	if len(res.rejects) != 1 || res.rejects[0].Reason != ReasonMissingText || !reflect.DeepEqual(res.rejects[0].Fields, []string{"want"}) {
		t.Errorf("rejects %v", res.rejects)
	}
	formats := map[string]Format{}
	for _, d := range res.docs {
		formats[d.ID] = d.Format
	}
	for id, f := range map[string]Format{"main.go": FormatText, "internal/gen/table.go": FormatText, "internal/tmpl/page.tmpl": FormatText, "LICENSE": FormatText, "web/index.html": FormatHTML} {
		if formats[id] != f {
			t.Errorf("%s read as %v, want %v", id, formats[id], f)
		}
	}
	if len(res.docs) != len(files)-1+2-1 { // list.json gives two records, golden.json none
		t.Errorf("%d documents: %q", len(res.docs), res.ids())
	}

	// FormatFile: every file one document, no rejection.
	res = readAll(t, []string{dir}, Options{Format: FormatFile})
	if len(res.docs) != len(files) || res.stats.Rejected != 0 {
		t.Errorf("file format: %d docs, %v", len(res.docs), res.rejects)
	}
	for _, d := range res.docs {
		want := FormatText
		if strings.HasSuffix(d.ID, ".html") {
			want = FormatHTML
		}
		if d.Format != want || d.Name != d.ID || string(d.Body) != files[d.ID] {
			t.Errorf("file format: %s: %v %q", d.ID, d.Format, d.Body)
		}
	}
}
