package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc/v2"
	"github.com/parquet-go/parquet-go"
)

// pqFive is a row of a Parquet file with five columns of several types.
type pqFive struct {
	ID    string   `parquet:"id"`
	Text  string   `parquet:"text"`
	URL   *string  `parquet:"url,optional"`
	Score float64  `parquet:"score"`
	Tags  []string `parquet:"tags,list"`
}

// TestRoundTripParquet deduplicates (keeps every third row of) a Parquet
// file with five columns and checks that the output is a Parquet file with
// the same schema, key-value metadata and codec, holding exactly the kept
// rows with every column.
func TestRoundTripParquet(t *testing.T) {
	var rows []pqFive
	for i := range 250 {
		r := pqFive{ID: fmt.Sprintf("r%03d", i), Text: fmt.Sprintf("text %d %s", i, strings.Repeat("w", i%7)), Score: float64(i) / 4}
		if i%3 != 1 {
			r.URL = ptr(fmt.Sprintf("http://example.com/%d", i))
		}
		for j := range i % 4 {
			r.Tags = append(r.Tags, fmt.Sprintf("t%d", j))
		}
		rows = append(rows, r)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	data := parquetBytesOpts(t, rows, 100, parquet.Compression(&parquet.Zstd), parquet.KeyValueMetadata("origin", "test"))
	writeFile(t, in, "five.parquet", data)

	out := filepath.Join(dir, "out")
	m, err := NewMirrorWriter(out)
	if err != nil {
		t.Fatal(err)
	}
	n, err := CopyKept(context.Background(), []string{in}, Options{}, m, func(n int64, d *Document) bool { return n%3 == 0 })
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var want []pqFive
	for i, r := range rows {
		if i%3 == 0 {
			want = append(want, r)
		}
	}
	if n != int64(len(want)) {
		t.Errorf("wrote %d, want %d", n, len(want))
	}

	f, err := os.Open(filepath.Join(out, "five.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	src, _ := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if got, wantSchema := pf.Schema().String(), src.Schema().String(); got != wantSchema {
		t.Errorf("schema\n%s\nwant\n%s", got, wantSchema)
	}
	if len(pf.Schema().Columns()) != 5 {
		t.Errorf("%d columns", len(pf.Schema().Columns()))
	}
	if v, ok := pf.Lookup("origin"); !ok || v != "test" {
		t.Errorf("key-value metadata origin = %q, %v", v, ok)
	}
	if c := pf.Metadata().RowGroups[0].Columns[0].MetaData.Codec; c != src.Metadata().RowGroups[0].Columns[0].MetaData.Codec {
		t.Errorf("codec %v", c)
	}
	got := make([]pqFive, pf.NumRows())
	r := parquet.NewGenericReader[pqFive](f)
	if k, err := r.Read(got); k != len(got) || (err != nil && err != io.EOF) {
		t.Fatalf("read %d rows: %v", k, err)
	}
	for i := range got {
		if len(got[i].Tags) == 0 {
			got[i].Tags = nil // the reader makes an empty list of a missing one
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows differ")
	}
	// And the reader reads it back as documents.
	res := readAll(t, []string{filepath.Join(out, "five.parquet")}, Options{})
	if len(res.docs) != len(want) || res.docs[1].ID != want[1].ID || string(res.docs[1].Body) != want[1].Text {
		t.Errorf("read back %d docs", len(res.docs))
	}
}

// TestRoundTripJSON keeps some records of JSONL and JSON inputs: JSONL lines
// come back byte for byte with every field, JSON arrays as arrays.
func TestRoundTripJSON(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	jsonl := `{"id":"1","text":"one","url":"http://x/1","nested":{"k":[1,2]}}` + "\n" +
		`{"id":"2","text":"two","url":"http://x/2"}` + "\n" +
		`{"id":"3",  "text":"three", "score":0.5}` + "\n"
	array := "[\n  {\"id\": \"a\", \"text\": \"first\", \"lang\": \"en\"},\n  {\"id\": \"b\", \"text\": \"second\"},\n  {\"id\": \"c\", \"text\": \"third\", \"extra\": null}\n]\n"
	objects := "{\"id\": \"x\", \"text\": \"top\"}\n{\"id\": \"y\",\n \"text\": \"level\"}\n"
	writeFile(t, in, "a.jsonl.gz", gzipBytes(t, []byte(jsonl)))
	writeFile(t, in, "b.json", []byte(array))
	writeFile(t, in, "c.json", []byte(objects))
	writeFile(t, in, "d.json", []byte("[{\"id\": \"gone\", \"text\": \"all dropped\"}]"))
	drop := map[string]bool{"2": true, "b": true, "x": true, "gone": true}
	out := filepath.Join(dir, "out")
	m, _ := NewMirrorWriter(out)
	if _, err := CopyKept(context.Background(), []string{in}, Options{}, m, func(_ int64, d *Document) bool { return !drop[d.ID] }); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	res := readAll(t, []string{filepath.Join(out, "a.jsonl.gz")}, Options{})
	lines := strings.Split(jsonl, "\n")
	if len(res.docs) != 2 || string(res.docs[0].Raw) != lines[0] || string(res.docs[1].Raw) != lines[2] || res.docs[0].Compression != CompressionGzip {
		t.Errorf("jsonl: %d docs %q", len(res.docs), res.ids())
	}
	b, _ := os.ReadFile(filepath.Join(out, "b.json"))
	var objs []map[string]any
	if err := json.Unmarshal(b, &objs); err != nil {
		t.Fatalf("b.json is not a JSON array: %v\n%s", err, b)
	}
	if len(objs) != 2 || objs[0]["lang"] != "en" || objs[1]["id"] != "c" || !reflect.DeepEqual(objs[1]["extra"], nil) {
		t.Errorf("b.json = %s", b)
	}
	if c, _ := os.ReadFile(filepath.Join(out, "c.json")); string(c) != "{\"id\": \"y\",\n \"text\": \"level\"}\n" {
		t.Errorf("c.json = %q", c)
	}
	if _, err := os.Stat(filepath.Join(out, "d.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an input with nothing kept has an output: %v", err)
	}
}

// warcRec builds a WARC/1.1 record with the given header fields (in order,
// after WARC-Type and WARC-Record-ID) and block.
func warcRec(typ, id string, fields []string, contentType string, block []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s>\r\nWARC-Date: 2024-05-06T07:08:09Z\r\n", typ, id)
	for _, f := range fields {
		b.WriteString(f + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Type: %s\r\nContent-Length: %d\r\n\r\n", contentType, len(block))
	b.Write(block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

func uuid(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// crawlWARC is a small crawl: a warcinfo, then request/response/metadata
// triples associated in the ways crawlers do it (WARC-Concurrent-To, or
// only the target URI), an image, a revisit and a resource.
func crawlWARC() (data []byte, recs map[string][]byte, order []string) {
	recs = map[string][]byte{}
	add := func(name string, rec []byte) {
		recs[name] = rec
		order = append(order, name)
		data = append(data, rec...)
	}
	info := "WARC-Warcinfo-ID: <urn:uuid:" + uuid(1) + ">"
	req := func(uri string) []byte {
		return []byte("GET / HTTP/1.1\r\nHost: " + strings.TrimPrefix(uri, "http://") + "\r\n\r\n")
	}
	page := func(body string) []byte {
		return []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	}
	meta := []byte("via: http://example.com/\r\nfetchTimeMs: 12\r\n")
	add("warcinfo", warcRec("warcinfo", uuid(1), []string{"WARC-Filename: crawl.warc"}, "application/warc-fields", []byte("software: neardup-test\r\nformat: WARC File Format 1.1\r\n")))
	for i, p := range []string{"a", "b"} { // linked by WARC-Concurrent-To
		uri := "http://" + p + ".example/"
		resp := uuid(10 + 10*i)
		add("req-"+p, warcRec("request", uuid(11+10*i), []string{"WARC-Target-URI: " + uri, info, "WARC-Concurrent-To: <urn:uuid:" + resp + ">"}, "application/http; msgtype=request", req(uri)))
		add("resp-"+p, warcRec("response", resp, []string{"WARC-Target-URI: " + uri, info}, "application/http; msgtype=response", page("<p>page "+p+"</p>")))
		add("meta-"+p, warcRec("metadata", uuid(12+10*i), []string{"WARC-Target-URI: " + uri, info, "WARC-Concurrent-To: <urn:uuid:" + resp + ">"}, "application/warc-fields", meta))
	}
	// Linked only by the target URI.
	add("req-c", warcRec("request", uuid(31), []string{"WARC-Target-URI: http://c.example/", info}, "application/http; msgtype=request", req("http://c.example/")))
	add("resp-c", warcRec("response", uuid(30), []string{"WARC-Target-URI: http://c.example/", info}, "application/http; msgtype=response", page("<p>page c</p>")))
	add("meta-c", warcRec("metadata", uuid(32), []string{"WARC-Target-URI: http://c.example/", info}, "application/warc-fields", meta))
	// An image (not a document) with its request.
	add("req-img", warcRec("request", uuid(41), []string{"WARC-Target-URI: http://a.example/logo.png", info, "WARC-Concurrent-To: <urn:uuid:" + uuid(40) + ">"}, "application/http; msgtype=request", req("http://a.example/logo.png")))
	add("resp-img", warcRec("response", uuid(40), []string{"WARC-Target-URI: http://a.example/logo.png", info}, "application/http; msgtype=response",
		[]byte("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 8\r\n\r\n\x89PNG\r\n\x1a\n")))
	// A revisit of an earlier crawl's capture.
	add("revisit", warcRec("revisit", uuid(50), []string{"WARC-Target-URI: http://e.example/", info, "WARC-Refers-To: <urn:uuid:" + uuid(99) + ">",
		"WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest", "WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
		"WARC-Refers-To-Target-URI: http://e.example/", "WARC-Refers-To-Date: 2023-01-01T00:00:00Z"}, "application/http; msgtype=response",
		[]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")))
	// A page with only a metadata record after it, and a resource.
	add("resp-f", warcRec("response", uuid(60), []string{"WARC-Target-URI: http://f.example/", info}, "application/http; msgtype=response", page("<p>page f</p>")))
	add("meta-f", warcRec("metadata", uuid(62), []string{"WARC-Target-URI: http://f.example/", info, "WARC-Concurrent-To: <urn:uuid:" + uuid(60) + ">"}, "application/warc-fields", meta))
	add("res-g", warcRec("resource", uuid(70), []string{"WARC-Target-URI: file:///notes.txt", info}, "text/plain", []byte("plain resource")))
	return data, recs, order
}

// readGoWARC reads a WARC file with github.com/nlnwa/gowarc, an independent
// reader, with strict validation, and returns each record's type, id and
// block bytes.
func readGoWARC(t *testing.T, path string) (types, ids []string, blocks [][]byte) {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, _, val, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("gowarc: record %d: %v", len(ids), err)
		}
		if val != nil && len(*val) > 0 {
			t.Errorf("gowarc: record %d: %v", len(ids), val)
		}
		rb, err := rec.Block().RawBytes()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rb)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, rec.Type().String())
		ids = append(ids, rec.RecordId())
		blocks = append(blocks, b)
		rec.Close()
	}
	return types, ids, blocks
}

// TestRoundTripWARC drops two of the five pages of a crawl and checks,
// reading the output back with gowarc record for record, that it holds
// the kept pages with their request, metadata and warcinfo records, the
// image and revisit that belong to no page, and nothing of the dropped
// pages, in input order and byte for byte.
func TestRoundTripWARC(t *testing.T) {
	data, recs, _ := crawlWARC()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	writeFile(t, in, "crawl.warc", data)
	writeFile(t, in, "crawl2.warc.gz", multiGzip(t, [][]byte{data}))
	// Sanity: gowarc accepts the input as it is.
	if types, _, _ := readGoWARC(t, filepath.Join(in, "crawl.warc")); len(types) != len(recs) {
		t.Fatalf("gowarc reads %d of %d input records", len(types), len(recs))
	}
	drop := map[string]bool{"http://b.example/": true, "http://c.example/": true}
	out := filepath.Join(dir, "out")
	m, _ := NewMirrorWriter(out)
	var docs []string
	n, err := CopyKept(context.Background(), []string{in}, Options{}, m, func(_ int64, d *Document) bool {
		docs = append(docs, d.ID)
		return !drop[d.ID]
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 6 || len(docs) != 10 {
		t.Errorf("wrote %d of %d documents %q", n, len(docs), docs)
	}
	want := []string{"warcinfo", "req-a", "resp-a", "meta-a", "req-img", "resp-img", "revisit", "resp-f", "meta-f", "res-g"}
	for _, name := range []string{"crawl.warc", "crawl2.warc.gz"} {
		p := filepath.Join(out, name)
		if name == "crawl2.warc.gz" {
			// gowarc reads gzipped WARCs too, but we check here that each
			// record is a gzip member of its own, then read the plain bytes.
			raw, _ := os.ReadFile(p)
			if k := bytes.Count(raw, []byte{0x1f, 0x8b, 0x08}); k < len(want) {
				t.Errorf("%s: %d gzip members for %d records", name, k, len(want))
			}
		}
		types, ids, blocks := readGoWARC(t, p)
		if len(ids) != len(want) {
			t.Fatalf("%s: %d records %v %v, want %v", name, len(ids), types, ids, want)
		}
		for i, w := range want {
			rec := recs[w]
			l := parseWARCLinks(rec)
			block := rec[bytes.Index(rec, crlfcrlf)+4 : len(rec)-4]
			if "<"+ids[i]+">" != l.id || types[i] != l.typ || !bytes.Equal(blocks[i], block) {
				t.Errorf("%s record %d: %s %s, want %s (%s %s), block equal %v", name, i, types[i], ids[i], w, l.typ, l.id, bytes.Equal(blocks[i], block))
			}
		}
		// Byte for byte: the output is the kept input records in order.
		var wantBytes []byte
		for _, w := range want {
			wantBytes = append(wantBytes, recs[w]...)
		}
		res := readAll(t, []string{p}, Options{})
		if len(res.docs) != 3 {
			t.Errorf("%s: our reader finds %d documents", name, len(res.docs))
		}
		if name == "crawl.warc" {
			if got, _ := os.ReadFile(p); !bytes.Equal(got, wantBytes) {
				t.Errorf("%s is not the kept records verbatim", name)
			}
		}
	}

	// Nothing kept: what belongs to no page stays, with the warcinfo
	// those records name; a file of pages only leaves no output at all.
	pages := recs["warcinfo"]
	for _, name := range []string{"req-a", "resp-a", "meta-a", "resp-f", "meta-f"} {
		pages = append(pages, recs[name]...)
	}
	writeFile(t, in, "pages.warc", pages)
	out2 := filepath.Join(dir, "none")
	m, _ = NewMirrorWriter(out2)
	if _, err := CopyKept(context.Background(), []string{filepath.Join(in, "crawl.warc"), filepath.Join(in, "pages.warc")}, Options{}, m, func(int64, *Document) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var rest []byte
	for _, name := range []string{"warcinfo", "req-img", "resp-img", "revisit"} {
		rest = append(rest, recs[name]...)
	}
	if got, _ := os.ReadFile(filepath.Join(out2, "crawl.warc")); !bytes.Equal(got, rest) {
		t.Errorf("nothing kept: output\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(out2, "pages.warc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output written with nothing kept: %v", err)
	}
}

// TestWARCFilter drives the association rules directly: a warcinfo named
// only by dropped records is dropped, however many of them follow it; a
// record that waits for an owner that never comes is written after at
// most maxWARCWaiting records, in its place, and so is everything that
// waits at the end.
func TestWARCFilter(t *testing.T) {
	var out []string
	f := newWARCFilter(func(raw []byte) error {
		out = append(out, parseWARCLinks(raw).id)
		return nil
	})
	info := func(n int) string { return "WARC-Warcinfo-ID: <urn:uuid:" + uuid(n) + ">" }
	to := func(n int) string { return "WARC-Concurrent-To: <urn:uuid:" + uuid(n) + ">" }
	doc := func(rec []byte, keep bool) {
		if err := f.doc(&Document{Raw: rec}, keep); err != nil {
			t.Fatal(err)
		}
	}
	comp := func(rec []byte) {
		if err := f.companion(&Document{Raw: rec}); err != nil {
			t.Fatal(err)
		}
	}
	resp := func(n, infoN int) []byte {
		return warcRec("response", uuid(n), []string{"WARC-Target-URI: http://x/" + fmt.Sprint(n), info(infoN)}, "application/http", nil)
	}
	ids := func(ns ...int) []string {
		var s []string
		for _, n := range ns {
			s = append(s, "<urn:uuid:"+uuid(n)+">")
		}
		return s
	}
	comp(warcRec("warcinfo", uuid(1), nil, "application/warc-fields", nil))
	comp(warcRec("request", uuid(11), []string{to(10), info(1)}, "application/http", nil))
	doc(resp(10, 1), true)
	comp(warcRec("warcinfo", uuid(2), nil, "application/warc-fields", nil))
	comp(warcRec("request", uuid(21), []string{to(20), info(2)}, "application/http", nil))
	doc(resp(20, 2), false)
	comp(warcRec("metadata", uuid(22), []string{to(20), info(2)}, "application/warc-fields", nil))
	for i := range 1000 {
		doc(resp(1000+i, 2), false)
	}
	if len(f.q) != 1 {
		t.Errorf("%d records wait behind the warcinfo", len(f.q))
	}
	if err := f.finish(); err != nil {
		t.Fatal(err)
	}
	if want := ids(1, 11, 10); !reflect.DeepEqual(out, want) {
		t.Errorf("written %q, want %q", out, want)
	}

	// A request whose response never comes, then many kept pages.
	out = nil
	f = newWARCFilter(f.emit)
	comp(warcRec("request", uuid(31), []string{to(999)}, "application/http", nil))
	var want []int
	want = append(want, 31)
	for i := range 300 {
		doc(resp(1000+i, 1), true)
		want = append(want, 1000+i)
		if len(f.q) > maxWARCWaiting {
			t.Fatalf("%d records wait", len(f.q))
		}
	}
	comp(warcRec("request", uuid(41), []string{to(998)}, "application/http", nil))
	want = append(want, 41)
	if err := f.finish(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, ids(want...)) {
		t.Errorf("written %d records: %q...", len(out), out[:min(8, len(out))])
	}
}
