package corpus

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestJSONLWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	docs := []*Document{
		{ID: "j", Body: []byte("ignored"), Format: FormatJSONL, Raw: []byte(`{"id":"j","text":"kept as is","x":[1,2]}`)},
		{ID: "w\"1", Body: []byte("line\none \x01 \"q\" \\ é \xff"), Format: FormatWARC, Meta: map[string]string{"z": "last", "a": "first"}},
		{ID: "t", Body: []byte("plain"), Format: FormatText},
		{ID: "js", Body: []byte("x"), Format: FormatJSON, Raw: []byte("{\n  \"id\": \"js\",\n  \"text\": \"a b\", \"k\": [1, 2]\n}")},
	}
	for _, d := range docs {
		if err := w.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(docs[0]); err != ErrClosed {
		t.Errorf("write after close: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		`{"id":"j","text":"kept as is","x":[1,2]}`,
		`{"id":"w\"1","text":"line\none \u0001 \"q\" \\ é \ufffd","meta":{"a":"first","z":"last"}}`,
		`{"id":"t","text":"plain"}`,
		`{"id":"js","text":"a b","k":[1,2]}`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("lines\n%q\nwant\n%q", lines, want)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("invalid JSON %q", l)
		}
	}
	// And it reads back.
	res := readAll(t, []string{"-"}, Options{Stdin: &buf, MetaFields: []string{"meta.a"}})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"j", "w\"1", "t", "js"}) || string(res.docs[1].Body) != "line\none \x01 \"q\" \\ é \uFFFD" || res.docs[1].Meta["meta.a"] != "first" {
		t.Errorf("read back %q %q", got, res.docs[1].Body)
	}
}

// TestMirrorWriter reads a mixed tree, writes every document back in its
// input format, and checks that reading the mirror gives the same documents
// and that the bytes are identical where every record was kept.
func TestMirrorWriter(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	warc, _ := goodWARC(t)
	jsonl := []byte(`{"id":"1","text":"one","extra":{"k":[1,2,3]}}` + "\n" + `{"id":"2","text":"two"}` + "\n")
	writeFile(t, in, "a.jsonl.gz", gzipBytes(t, jsonl))
	writeFile(t, in, "b.warc.zst", zstdBytes(t, warc))
	writeFile(t, in, "c/page.html", []byte("<p>page</p>"))
	writeFile(t, in, "c/notes.txt.gz", gzipBytes(t, []byte("notes")))
	writeFile(t, in, "d.parquet", parquetBytes(t, []pqRow{{ID: "p1", Text: ptr("pq one"), Lang: "en"}}, 10))

	out := filepath.Join(dir, "out")
	m, err := NewMirrorWriter(out)
	if err != nil {
		t.Fatal(err)
	}
	orig := readAll(t, []string{in}, Options{})
	for _, d := range orig.docs {
		if err := m.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	mirror := readAll(t, []string{out}, Options{})
	if len(mirror.docs) != len(orig.docs) || len(mirror.rejects) != 0 {
		t.Fatalf("mirror has %q, rejects %v; want %q", mirror.ids(), mirror.rejects, orig.ids())
	}
	for i, d := range mirror.docs {
		o := orig.docs[i]
		name := o.Name
		if d.ID != o.ID || !bytes.Equal(d.Body, o.Body) || d.Name != name || d.Compression != o.Compression {
			t.Errorf("doc %d: %q %q %q %v, want %q %q %q %v", i, d.ID, d.Body, d.Name, d.Compression, o.ID, o.Body, name, o.Compression)
		}
		if o.Format != FormatParquet && !bytes.Equal(d.Raw, o.Raw) {
			t.Errorf("doc %d raw differs", i)
		}
	}
	// Files and JSONL with everything kept are byte-identical after
	// decompression; the WARC lost only its non-document records.
	got, _ := os.ReadFile(filepath.Join(out, "c", "page.html"))
	if string(got) != "<p>page</p>" {
		t.Errorf("page.html = %q", got)
	}

	// Writing the same name again later appends (a second gzip member).
	m, _ = NewMirrorWriter(out)
	m.Write(orig.docs[0])
	m.Write(orig.docs[2]) // switch to the WARC
	m.Write(orig.docs[1]) // back to the JSONL: appended
	m.Close()
	res := readAll(t, []string{filepath.Join(out, "a.jsonl.gz")}, Options{})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"1", "2"}) {
		t.Errorf("appended jsonl ids %q", got)
	}
	if err := m.Write(orig.docs[0]); err != ErrClosed {
		t.Errorf("write after close: %v", err)
	}
	// Stdin documents get a name of their own.
	m, _ = NewMirrorWriter(out)
	if err := m.Write(&Document{ID: "-", Name: "stdin", Body: []byte("x"), Raw: []byte("x"), Format: FormatText}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if got, _ := os.ReadFile(filepath.Join(out, "stdin.text")); string(got) != "x" {
		t.Errorf("stdin.text = %q", got)
	}
	if err := m.Write(&Document{Name: "../escape", Format: FormatText}); err == nil {
		t.Error("escaping name accepted")
	}
}

func TestLocalName(t *testing.T) {
	for in, want := range map[string]string{
		"/abs/path/x.txt": "abs/path/x.txt",
		"../../up/x.txt":  "up/x.txt",
		"./a/./b":         "a/b",
		"/":               "input",
	} {
		if got := localName(in); got != want {
			t.Errorf("localName(%q) = %q, want %q", in, got, want)
		}
	}
}
