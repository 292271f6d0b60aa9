package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParquet(t *testing.T) {
	var rows []pqRow
	for i := 0; i < 250; i++ {
		r := pqRow{ID: fmt.Sprintf("doc-%03d", i), Lang: "en"}
		if i%50 != 7 {
			r.Text = ptr(fmt.Sprintf("text of document %d %s", i, strings.Repeat("w", i%13)))
		}
		rows = append(rows, r)
	}
	dir := t.TempDir()
	data := parquetBytes(t, rows, 100) // 3 row groups, many small pages
	p := writeFile(t, dir, "d.parquet", data)
	res := readAll(t, []string{p}, Options{MetaFields: []string{"lang", "nosuch"}})
	if len(res.docs) != 245 || len(res.rejects) != 5 {
		t.Fatalf("%d docs, rejects %v", len(res.docs), res.rejects)
	}
	j := 0
	for i, r := range rows {
		if r.Text == nil {
			continue
		}
		d := res.docs[j]
		j++
		if d.ID != r.ID || string(d.Body) != *r.Text || d.Line != int64(i+1) || d.Format != FormatParquet || d.Meta["lang"] != "en" || len(d.Meta) != 1 || d.Raw != nil {
			t.Fatalf("row %d: doc %+v", i, d)
		}
	}
	for k, e := range res.rejects {
		if e.Reason != ReasonMissingText || e.Line != int64(50*k+8) || e.Path != p {
			t.Errorf("reject %v", e)
		}
	}
	if res.stats.Bytes != int64(len(data)) {
		t.Errorf("Bytes %d, want %d", res.stats.Bytes, len(data))
	}

	// Other column names, an integer id, the magic bytes without extension.
	other := parquetBytes(t, []pqRowOther{{Key: 11, Body: "eleven"}, {Key: 12, Body: "twelve"}}, 10)
	p2 := writeFile(t, dir, "other.bin", other)
	res = readAll(t, []string{p2}, Options{ParquetIDColumn: "key", ParquetTextColumn: "body"})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"11", "12"}) || string(res.docs[1].Body) != "twelve" {
		t.Errorf("ids %q", got)
	}
	// Default columns: no "text" column is a rejection of the file; no
	// "id" column gives path:row ids.
	res = readAll(t, []string{p2}, Options{ParquetTextColumn: "body"})
	if got := res.ids(); !reflect.DeepEqual(got, []string{p2 + ":1", p2 + ":2"}) {
		t.Errorf("ids %q", got)
	}
	res = readAll(t, []string{p2}, Options{})
	if len(res.rejects) != 1 || res.rejects[0].Reason != ReasonMissingText {
		t.Errorf("rejects %v", res.rejects)
	}
	// A corrupt or compressed parquet file, and parquet on stdin.
	p3 := writeFile(t, dir, "broken.parquet", append([]byte("PAR1"), bytes.Repeat([]byte{7}, 100)...))
	p4 := writeFile(t, dir, "z.parquet.gz", gzipBytes(t, data))
	res = readAll(t, []string{p3, p4, "-"}, Options{Stdin: bytes.NewReader(data)})
	if got := res.reasons(); !reflect.DeepEqual(got, []string{ReasonParquet, ReasonUnsupported, ReasonUnsupported}) {
		t.Errorf("reasons %q", got)
	}
}

func TestDirectoryWalk(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	writeFile(t, root, "b.txt", []byte("bee"))
	writeFile(t, root, "a.html", []byte("<p>a</p>"))
	writeFile(t, root, "sub/c.jsonl", []byte(`{"id":"c1","text":"see"}`+"\n"))
	writeFile(t, root, "sub/deep/d.txt", []byte("dee"))
	writeFile(t, root, "skip/e.txt", []byte("excluded dir"))
	writeFile(t, root, "sub/f.log", []byte("not included"))
	outside := writeFile(t, dir, "outside/o.txt", []byte("outside"))
	if err := os.Symlink(outside, filepath.Join(root, "link.txt")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(root, "dangling.txt"))

	opts := Options{Include: []string{"*.txt", "*.html", "sub/**/*.jsonl"}, Exclude: []string{"skip"}}
	res := readAll(t, []string{root}, opts)
	want := []string{"a.html", "b.txt", "c1", "sub/deep/d.txt"}
	if got := res.ids(); !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %q, want %q", got, want)
	}
	if d := res.docs[0]; !d.HTML || d.Format != FormatHTML || d.Name != "a.html" || d.Source != filepath.Join(root, "a.html") {
		t.Errorf("html doc %+v", d)
	}
	if d := res.docs[2]; d.Name != "sub/c.jsonl" {
		t.Errorf("jsonl doc name %q", d.Name)
	}
	// link.txt and dangling.txt match *.txt and are skipped as links;
	// linkdir matches no include pattern.
	if s := res.stats; s.SkippedBy[SkipSymlink] != 2 || s.Files != 4 || s.Read != 4 {
		t.Errorf("stats %v", s)
	}
	var total int64
	for _, n := range []string{"b.txt", "a.html", "sub/c.jsonl", "sub/deep/d.txt"} {
		fi, _ := os.Stat(filepath.Join(root, n))
		total += fi.Size()
	}
	r, _ := Open([]string{root}, opts)
	if r.TotalBytes() != total {
		t.Errorf("TotalBytes %d, want %d", r.TotalBytes(), total)
	}
	for r.Next() {
	}
	if r.BytesRead() != total {
		t.Errorf("BytesRead %d, want %d", r.BytesRead(), total)
	}

	// A symlink named directly is followed, and so is a linked root;
	// both are named under the common root of the inputs.
	res = readAll(t, []string{filepath.Join(root, "link.txt"), filepath.Join(root, "linkdir")}, Options{})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"link.txt", "linkdir/o.txt"}) {
		t.Errorf("ids %q", got)
	}

	// Missing paths and files that vanish after the walk are rejections.
	gone := writeFile(t, dir, "gone/x.txt", []byte("x"))
	r, err := Open([]string{filepath.Join(dir, "missing"), filepath.Dir(gone), root}, Options{Include: opts.Include, Exclude: opts.Exclude})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(gone)
	var ids []string
	var rejects []string
	r.opts.OnReject = func(e *RecordError) { rejects = append(rejects, e.Reason+" "+filepath.Base(e.Path)) }
	for r.Next() {
		ids = append(ids, r.Doc().ID)
	}
	// The common root of the three inputs is dir: names start with root/.
	wantUnder := []string{"root/a.html", "root/b.txt", "c1", "root/sub/deep/d.txt"}
	if !reflect.DeepEqual(ids, wantUnder) || !reflect.DeepEqual(rejects, []string{"open missing", "open x.txt"}) {
		t.Errorf("ids %q rejects %q", ids, rejects)
	}
	checkStats(t, r.Stats())
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pat, rel string
		want     bool
	}{
		{"*.txt", "a/b/c.txt", true},
		{"*.txt", "c.txt.gz", false},
		{"a/*.txt", "a/c.txt", true},
		{"a/*.txt", "a/b/c.txt", false},
		{"a/**/*.txt", "a/c.txt", true},
		{"a/**/*.txt", "a/b/x/c.txt", true},
		{"**/x", "x", true},
		{"**", "any/thing", true},
		{"a/**", "b/c", false},
	} {
		if got := matchGlob(strings.Split(c.pat, "/"), c.rel); got != c.want {
			t.Errorf("match(%q, %q) = %v", c.pat, c.rel, got)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		head, path string
		walked     bool
		want       Format
	}{
		{"WARC/1.0\r\n", "x.txt", false, FormatWARC},
		{"PAR1....", "x.jsonl", false, FormatParquet},
		{`{"a":1}`, "x.txt", false, FormatText}, // extension before the '{' sniff
		{`{"a":1}`, "x.json.gz", false, FormatJSON},
		{`{"a":1}`, "x.jsonl.gz", false, FormatJSONL},
		{"\xef\xbb\xbf  {\"a\":1}", "data", false, FormatJSONL},
		{"<html>", "page", false, FormatHTML},
		{"hello", "page.HTM", false, FormatHTML},
		{"hello", "notes", false, FormatText},
		{"hello", "x.ndjson.zst", false, FormatJSONL},
		{"", "empty.warc", false, FormatWARC},
		// Walked files: containers by magic or extension only.
		{`{{define "x"}}`, "x.tmpl", true, FormatText},
		{`{"a":1}`, "data", true, FormatText},
		{"<svg>", "logo.svg", true, FormatHTML},
		{`{"a":1}`, "data.json", true, FormatJSON},
		{`{"a":1}`, "data.jsonl", true, FormatJSONL},
		{"WARC/1.1", "crawl", true, FormatWARC},
		{"package main", "main.go", true, FormatText},
	} {
		if got := detect([]byte(c.head), c.path, c.walked); got != c.want {
			t.Errorf("detect(%q, %q, walked %v) = %v, want %v", c.head, c.path, c.walked, got, c.want)
		}
	}
	// An explicit format overrides detection.
	res := readAll(t, []string{"-"}, Options{Stdin: strings.NewReader(`{"text":"x"}`), Format: FormatText})
	if len(res.docs) != 1 || res.docs[0].Format != FormatText || string(res.docs[0].Body) != `{"text":"x"}` {
		t.Errorf("forced text: %+v", res.docs)
	}
	for _, s := range []string{"auto", "jsonl", "warc", "parquet", "html", "text", "json", "file"} {
		f, err := ParseFormat(s)
		if err != nil || f.String() != s {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("ParseFormat(csv) succeeded")
	}
}

func TestWholeFiles(t *testing.T) {
	dir := t.TempDir()
	p1 := writeFile(t, dir, "big.txt", bytes.Repeat([]byte("z"), 1000))
	p2 := writeFile(t, dir, "latin1.txt", []byte("caf\xe9"))
	p3 := writeFile(t, dir, "page.html.gz", gzipBytes(t, []byte("<p>zipped</p>")))
	p4 := writeFile(t, dir, "big.txt.zst", zstdBytes(t, bytes.Repeat([]byte("z"), 1000)))
	p5 := writeFile(t, dir, "empty.txt", nil)
	res := readAll(t, []string{p1, p2, p3, p4, p5}, Options{MaxRecordBytes: 999})
	if got := res.reasons(); !reflect.DeepEqual(got, []string{ReasonTooLarge, ReasonTooLarge}) {
		t.Errorf("reasons %q", got)
	}
	if len(res.docs) != 3 {
		t.Fatalf("docs %q", res.ids())
	}
	if d := res.docs[0]; string(d.Body) != "caf\uFFFD" || string(d.Raw) != "caf\xe9" || len(res.warnings) != 1 {
		t.Errorf("latin1 doc %+v, warnings %v", d, res.warnings)
	}
	if d := res.docs[1]; string(d.Body) != "<p>zipped</p>" || !d.HTML || d.Compression != CompressionGzip {
		t.Errorf("gz doc %+v", d)
	}
	if d := res.docs[2]; len(d.Body) != 0 || d.ID != "empty.txt" || d.Name != "empty.txt" {
		t.Errorf("empty doc %+v", d)
	}
}

// TestIDsCommonRoot: files of the same relative name in two input
// directories get distinct ids and names (issue: "dedup crawl1/ crawl2/"
// made two documents with one id and concatenated the kept files).
func TestIDsCommonRoot(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "crawl1/page.html", []byte("<p>one</p>"))
	writeFile(t, dir, "crawl2/page.html", []byte("<p>two</p>"))
	writeFile(t, dir, "crawl2/sub/page.html", []byte("<p>three</p>"))
	writeFile(t, dir, "x/notes.txt", []byte("notes"))
	c1, c2 := filepath.Join(dir, "crawl1"), filepath.Join(dir, "crawl2")
	for _, c := range []struct {
		paths []string
		want  []string
	}{
		{[]string{c1, c2}, []string{"crawl1/page.html", "crawl2/page.html", "crawl2/sub/page.html"}},
		{[]string{c2 + "/"}, []string{"page.html", "sub/page.html"}}, // one directory: relative to it, as before
		{[]string{c1, filepath.Join(c2, "sub", "page.html")}, []string{"crawl1/page.html", "crawl2/sub/page.html"}},
		{[]string{filepath.Join(c2, "sub"), c2}, []string{"sub/page.html", "page.html", "sub/page.html"}}, // a file twice: one id, twice
		{[]string{filepath.Join(dir, "x", "notes.txt")}, []string{"notes.txt"}},                           // one file: its base name
		{[]string{filepath.Join(dir, "x", "notes.txt"), "-"}, []string{"notes.txt", "-"}},
	} {
		res := readAll(t, c.paths, Options{Stdin: strings.NewReader("stdin text")})
		if got := res.ids(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Open(%q): ids %q, want %q", c.paths, got, c.want)
		}
		for _, d := range res.docs {
			if d.ID != "-" && d.Name != d.ID {
				t.Errorf("name %q differs from id %q", d.Name, d.ID)
			}
		}
	}

	// Kept files are written side by side, never concatenated.
	out := filepath.Join(dir, "out")
	m, err := NewMirrorWriter(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range readAll(t, []string{c1, c2}, Options{}).docs {
		if err := m.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"crawl1/page.html": "<p>one</p>", "crawl2/page.html": "<p>two</p>", "crawl2/sub/page.html": "<p>three</p>"} {
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v", name, got, err)
		}
	}

	// Relative paths as given on a command line, from the parent.
	t.Chdir(dir)
	res := readAll(t, []string{"crawl1", "./crawl2/"}, Options{})
	if got := res.ids(); !reflect.DeepEqual(got, []string{"crawl1/page.html", "crawl2/page.html", "crawl2/sub/page.html"}) {
		t.Errorf("relative inputs: ids %q", got)
	}
	if res.docs[0].Source != filepath.Join("crawl1", "page.html") {
		t.Errorf("source %q", res.docs[0].Source)
	}
}

// TestExcludePaths: an output directory inside an input directory is not
// read back, however it is named.
func TestExcludePaths(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	writeFile(t, in, "a.txt", []byte("a"))
	writeFile(t, in, "sub/b.txt", []byte("b"))
	writeFile(t, in, "out/kept/a.txt", []byte("a"))
	writeFile(t, in, "out/summary.json", []byte(`{"kept":1}`))
	writeFile(t, in, "skip.txt", []byte("a single file"))
	want := []string{"a.txt", "sub/b.txt"}
	if err := os.Symlink(filepath.Join(in, "out"), filepath.Join(dir, "link")); err != nil {
		t.Skip("no symlinks:", err)
	}
	for _, excl := range [][]string{
		{filepath.Join(in, "out"), filepath.Join(in, "skip.txt")},
		{filepath.Join(in, "out") + "/", filepath.Join(in, ".", "skip.txt")},
		{filepath.Join(dir, "link"), filepath.Join(in, "skip.txt"), filepath.Join(dir, "does-not-exist")}, // the same directory by another name
	} {
		res := readAll(t, []string{in}, Options{ExcludePaths: excl})
		if got := res.ids(); !reflect.DeepEqual(got, want) || res.stats.Skipped != 0 {
			t.Errorf("ExcludePaths %q: ids %q, stats %v", excl, got, res.stats)
		}
	}
	// Relative paths, as a command line gives them.
	t.Chdir(dir)
	res := readAll(t, []string{"in"}, Options{ExcludePaths: []string{"in/out", "./in/skip.txt"}})
	if got := res.ids(); !reflect.DeepEqual(got, want) {
		t.Errorf("relative: ids %q", got)
	}
	// An input named directly is read even when excluded.
	res = readAll(t, []string{"in/out/kept/a.txt"}, Options{ExcludePaths: []string{"in/out"}})
	if len(res.docs) != 1 {
		t.Errorf("named input: %q", res.ids())
	}
	if _, err := Open([]string{"in"}, Options{ExcludePaths: []string{""}}); !errors.Is(err, ErrOptions) {
		t.Errorf("empty path: %v", err)
	}
}
