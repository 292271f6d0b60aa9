package corpus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/corpus"
)

// Reading JSONL with a bad line: the bad record is reported with its line
// and skipped, the run goes on, and the summary counts every record.
func ExampleOpen() {
	input := `{"id":"a","text":"first document"}
{"id":"b","text":
{"text":"no id: named by file and line"}
`
	r, err := corpus.Open([]string{"-"}, corpus.Options{
		Stdin:    strings.NewReader(input),
		OnReject: func(e *corpus.RecordError) { fmt.Println("rejected:", e.Reason, "at line", e.Line) },
	})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for r.Next() {
		d := r.Doc() // valid until the next call to Next
		fmt.Printf("%s: %s\n", d.ID, d.Body)
	}
	if err := r.Err(); err != nil {
		panic(err)
	}
	fmt.Println(r.Stats())
	// Output:
	// a: first document
	// rejected: bad-json at line 2
	// -:3: no id: named by file and line
	// read 3, yielded 2, rejected 1 (bad-json 1)
}

// Dotted field paths pick nested fields for the id, the text and metadata.
func ExampleOpen_fields() {
	input := `{"doc":{"url":"http://example.com/","body":"hello"},"lang":"en"}` + "\n"
	r, _ := corpus.Open([]string{"-"}, corpus.Options{
		Stdin:      strings.NewReader(input),
		IDField:    "doc.url",
		TextField:  "doc.body",
		MetaFields: []string{"lang"},
	})
	defer r.Close()
	for r.Next() {
		d := r.Doc()
		fmt.Println(d.ID, string(d.Body), d.Meta["lang"])
	}
	// Output:
	// http://example.com/ hello en
}

// Walking a directory tree: sorted, filtered by globs, symbolic links not
// followed; whole files are named by their path relative to the root.
func ExampleOpen_directory() {
	dir, _ := os.MkdirTemp("", "corpus-example")
	defer os.RemoveAll(dir)
	for name, text := range map[string]string{
		"b.txt":         "bee",
		"a.html":        "<p>a</p>",
		"sub/c.txt":     "see",
		"sub/skip.log":  "not selected",
		"drafts/d.txt":  "excluded directory",
		"sub/e.jsonl":   `{"id":"e1","text":"jsonl inside the tree"}`,
		"sub/empty.txt": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	os.Symlink(filepath.Join(dir, "b.txt"), filepath.Join(dir, "link.txt"))

	r, _ := corpus.Open([]string{dir}, corpus.Options{
		Include: []string{"*.txt", "*.html", "*.jsonl"},
		Exclude: []string{"drafts"},
	})
	defer r.Close()
	for r.Next() {
		d := r.Doc()
		fmt.Printf("%-14s %-5s html=%v %q\n", d.ID, d.Format, d.HTML, d.Body)
	}
	fmt.Println(r.Stats())
	// Output:
	// a.html         html  html=true "<p>a</p>"
	// b.txt          text  html=false "bee"
	// sub/c.txt      text  html=false "see"
	// e1             jsonl html=false "jsonl inside the tree"
	// sub/empty.txt  text  html=false ""
	// read 5, yielded 5, rejected 0, skipped 1 (symlink 1)
}

// ExcludePaths keeps a run from reading its own output back when the
// output directory lies inside an input directory.
func ExampleOptions_excludePaths() {
	dir, _ := os.MkdirTemp("", "corpus-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "page.txt"), []byte("input"), 0o644)
	out := filepath.Join(dir, "out")
	os.MkdirAll(filepath.Join(out, "kept"), 0o755)
	os.WriteFile(filepath.Join(out, "kept", "page.txt"), []byte("output of an earlier run"), 0o644)

	r, _ := corpus.Open([]string{dir}, corpus.Options{ExcludePaths: []string{out}})
	defer r.Close()
	for r.Next() {
		fmt.Println(r.Doc().ID)
	}
	// Output:
	// page.txt
}

// WARC response records yield their HTML payload, the HTTP header
// stripped; other records are skipped and counted.
func ExampleOpen_warc() {
	page := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>archived</p>"
	warc := fmt.Sprintf("WARC/1.1\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n"+
		"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/\r\n"+
		"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", len(page), page)
	r, _ := corpus.Open([]string{"-"}, corpus.Options{Stdin: strings.NewReader(warc)})
	defer r.Close()
	for r.Next() {
		d := r.Doc()
		fmt.Println(d.ID, d.Format, d.HTML, string(d.Body), d.Offset)
	}
	fmt.Println(r.Stats())
	// Output:
	// http://example.com/ warc true <p>archived</p> 56
	// read 1, yielded 1, rejected 0, skipped 1 (warc-type 1)
}

// A .json file is a JSON document: one object, an array of objects, or
// objects one after another; every object is a record. Records without an
// id are named by their number in the file.
func ExampleOpen_json() {
	dir, _ := os.MkdirTemp("", "corpus-example")
	defer os.RemoveAll(dir)
	doc := `[
  {"id": "a", "text": "first"},
  {"text": "second, without an id"}
]`
	os.WriteFile(filepath.Join(dir, "docs.json"), []byte(doc), 0o644)
	r, _ := corpus.Open([]string{filepath.Join(dir, "docs.json")}, corpus.Options{})
	defer r.Close()
	for r.Next() {
		d := r.Doc()
		fmt.Println(strings.TrimPrefix(d.ID, dir+string(filepath.Separator)), d.Format, d.Line, string(d.Body))
	}
	// Output:
	// a json 2 first
	// docs.json#2 json 3 second, without an id
}

// Format "file" reads every input as one document, whatever its name or
// contents, for example a source tree.
func ExampleOpen_file() {
	dir, _ := os.MkdirTemp("", "corpus-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "data.jsonl"), []byte(`{"text":"one line"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	f, _ := corpus.ParseFormat("file")
	r, _ := corpus.Open([]string{dir}, corpus.Options{Format: f})
	defer r.Close()
	for r.Next() {
		d := r.Doc()
		fmt.Printf("%s %s %q\n", d.ID, d.Format, d.Body)
	}
	// Output:
	// data.jsonl text "{\"text\":\"one line\"}\n"
	// main.go text "package main\n"
}

// TotalBytes and BytesRead drive a progress bar; BytesRead may be polled
// from another goroutine.
func ExampleReader_TotalBytes() {
	dir, _ := os.MkdirTemp("", "corpus-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(`{"text":"one"}`+"\n"+`{"text":"two"}`+"\n"), 0o644)
	r, _ := corpus.Open([]string{dir}, corpus.Options{})
	defer r.Close()
	fmt.Println("total", r.TotalBytes())
	for r.Next() {
		fmt.Printf("%d/%d\n", r.BytesRead(), r.TotalBytes())
	}
	// Output:
	// total 30
	// 30/30
	// 30/30
}

// Rejections are *RecordError values naming the file and position.
func ExampleRecordError() {
	var got *corpus.RecordError
	r, _ := corpus.Open([]string{"no/such/file.jsonl"}, corpus.Options{
		OnReject: func(e *corpus.RecordError) { got = e },
	})
	for r.Next() {
	}
	fmt.Println(got.Reason, got.Path, errors.Is(got, os.ErrNotExist))
	fmt.Println(r.Stats())
	// Output:
	// open no/such/file.jsonl true
	// read 1, yielded 0, rejected 1 (open 1)
}

// A record without the text field names the fields it does have, so that a
// command can suggest the right --text-field.
func ExampleRecordError_fields() {
	r, _ := corpus.Open([]string{"-"}, corpus.Options{
		Stdin: strings.NewReader(`{"id":"p1","content":"the text is here","url":"http://example.com/"}` + "\n"),
		OnReject: func(e *corpus.RecordError) {
			fmt.Println(e.Reason, e.ID, e.Line, e.Offset, e.Fields, e.Records())
			fmt.Println(e)
		},
	})
	for r.Next() {
	}
	// Output:
	// missing-text p1 1 0 [id content url] 1
	// corpus: -:1: missing-text: no field "text"; the record has: id, content, url
}

func ExampleParseFormat() {
	f, err := corpus.ParseFormat("ndjson")
	fmt.Println(f, err)
	_, err = corpus.ParseFormat("csv")
	fmt.Println(err != nil)
	// Output:
	// jsonl <nil>
	// true
}

// JSONL input lines are written back byte for byte; other documents become
// {"id","text","meta"} objects.
func ExampleJSONLWriter() {
	w := corpus.NewJSONLWriter(os.Stdout)
	r, _ := corpus.Open([]string{"-"}, corpus.Options{
		Stdin: strings.NewReader(`{"text":"kept",  "id":1, "extra":true}` + "\n"),
	})
	for r.Next() {
		w.Write(r.Doc())
	}
	w.Write(&corpus.Document{ID: "page", Body: []byte("<p>\"hi\"</p>"), Format: corpus.FormatHTML, Meta: map[string]string{"k": "v"}})
	w.Close()
	// Output:
	// {"text":"kept",  "id":1, "extra":true}
	// {"id":"page","text":"<p>\"hi\"</p>","meta":{"k":"v"}}
}

// MirrorWriter writes the documents kept by a filter in their input's
// format and compression, under an output directory.
func ExampleMirrorWriter() {
	in, _ := os.MkdirTemp("", "corpus-in")
	out, _ := os.MkdirTemp("", "corpus-out")
	defer os.RemoveAll(in)
	defer os.RemoveAll(out)
	os.WriteFile(filepath.Join(in, "docs.jsonl"), []byte(`{"id":"keep","text":"x"}`+"\n"+`{"id":"drop","text":"y"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(in, "page.html"), []byte("<p>kept page</p>"), 0o644)

	m, _ := corpus.NewMirrorWriter(out)
	r, _ := corpus.Open([]string{in}, corpus.Options{})
	for r.Next() {
		if d := r.Doc(); d.ID != "drop" {
			m.Write(d)
		}
	}
	r.Close()
	m.Close()
	for _, name := range []string{"docs.jsonl", "page.html"} {
		b, _ := os.ReadFile(filepath.Join(out, name))
		fmt.Printf("%s: %s\n", name, strings.TrimSpace(string(b)))
	}
	// Output:
	// docs.jsonl: {"id":"keep","text":"x"}
	// page.html: <p>kept page</p>
}

// CopyKept writes what a filter keeps: here, from a WARC crawl, the second
// page is a duplicate. Its request and metadata records go with it; the
// first page keeps its own and the warcinfo record.
func ExampleCopyKept() {
	in, _ := os.MkdirTemp("", "corpus-in")
	out, _ := os.MkdirTemp("", "corpus-out")
	defer os.RemoveAll(in)
	defer os.RemoveAll(out)
	rec := func(typ, id, extra, block string) string {
		return fmt.Sprintf("WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:%s>\r\n%sContent-Length: %d\r\n\r\n%s\r\n\r\n", typ, id, extra, len(block), block)
	}
	page := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>same page</p>"
	warc := rec("warcinfo", "info", "", "software: example\r\n")
	for _, p := range []string{"a", "b"} {
		uri := "WARC-Target-URI: http://" + p + ".example/\r\n"
		warc += rec("request", "req-"+p, uri+"WARC-Concurrent-To: <urn:resp-"+p+">\r\n", "GET / HTTP/1.1\r\n\r\n")
		warc += rec("response", "resp-"+p, uri, page)
		warc += rec("metadata", "meta-"+p, uri+"WARC-Concurrent-To: <urn:resp-"+p+">\r\n", "fetchTimeMs: 5\r\n")
	}
	os.WriteFile(filepath.Join(in, "crawl.warc"), []byte(warc), 0o644)

	m, _ := corpus.NewMirrorWriter(out)
	n, err := corpus.CopyKept(context.Background(), []string{in}, corpus.Options{}, m,
		func(n int64, d *corpus.Document) bool { return n == 0 }) // keep the first document
	if err == nil {
		err = m.Close()
	}
	fmt.Println("kept", n, err)
	b, _ := os.ReadFile(filepath.Join(out, "crawl.warc"))
	for _, line := range strings.Split(string(b), "\r\n") {
		if strings.HasPrefix(line, "WARC-Record-ID") {
			fmt.Println(line)
		}
	}
	// Output:
	// kept 1 <nil>
	// WARC-Record-ID: <urn:info>
	// WARC-Record-ID: <urn:req-a>
	// WARC-Record-ID: <urn:resp-a>
	// WARC-Record-ID: <urn:meta-a>
}

// Clone keeps a document past the next call to Next.
func ExampleDocument_Clone() {
	r, _ := corpus.Open([]string{"-"}, corpus.Options{
		Stdin: strings.NewReader(`{"id":"1","text":"one"}` + "\n" + `{"id":"2","text":"two"}` + "\n"),
	})
	var kept []*corpus.Document
	for r.Next() {
		kept = append(kept, r.Doc().Clone())
	}
	fmt.Println(kept[0].ID, string(kept[0].Body), kept[1].ID, string(kept[1].Body))
	// Output:
	// 1 one 2 two
}

// Every record read is yielded or rejected: Read == Yielded + Rejected.
func ExampleReader_Stats() {
	r, _ := corpus.Open([]string{"-"}, corpus.Options{
		Stdin: strings.NewReader("{\"text\":\"ok\"}\nnot json\n{\"text\":7}\n"),
	})
	defer r.Close()
	for r.Next() {
	}
	s := r.Stats()
	fmt.Println(s.Read, s.Yielded, s.Rejected, s.RejectedBy)
	// Output: 3 1 2 map[bad-json:1 missing-text:1]
}

// Err says why a Reader stopped early; bad records alone never make it
// fail unless MaxRejects is set.
func ExampleReader_Err() {
	jsonl, _ := corpus.ParseFormat("jsonl")
	r, _ := corpus.Open([]string{"-"}, corpus.Options{
		Stdin:      strings.NewReader("{bad\n{bad\n{bad\n{\"text\":\"never reached\"}\n"),
		Format:     jsonl,
		MaxRejects: 2,
	})
	defer r.Close()
	for r.Next() {
		fmt.Println(r.Doc().ID)
	}
	fmt.Println(errors.Is(r.Err(), corpus.ErrTooManyRejects), r.Stats().Rejected)
	// Output: true 2
}

func ExampleReader_Close() {
	r, _ := corpus.Open([]string{"-"}, corpus.Options{Stdin: strings.NewReader(`{"text":"a"}` + "\n")})
	fmt.Println(r.Close(), r.Close()) // safe to call twice
	fmt.Println(r.Next(), errors.Is(r.Err(), corpus.ErrClosed))
	// Output:
	// <nil> <nil>
	// false true
}

func ExampleJSONLWriter_AppendLine() {
	w := corpus.NewJSONLWriter(io.Discard)
	line := w.AppendLine(nil, &corpus.Document{ID: "d1", Body: []byte("tab\there")})
	fmt.Printf("%s", line)
	// Output: {"id":"d1","text":"tab\there"}
}

// Write buffers; Flush (or Close) hands the lines to the underlying writer.
func ExampleJSONLWriter_Flush() {
	var buf bytes.Buffer
	w := corpus.NewJSONLWriter(&buf)
	w.Write(&corpus.Document{ID: "x", Body: []byte("y")})
	fmt.Println(buf.Len())
	w.Flush()
	fmt.Print(buf.String())
	fmt.Println(w.Close(), w.Write(&corpus.Document{}) != nil)
	// Output:
	// 0
	// {"id":"x","text":"y"}
	// <nil> true
}
