package main

import (
	"bytes"
	"context"
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

// words returns n words of document i: distinct for distinct i.
func words(i, n int) string {
	w := make([]string, n)
	for j := range w {
		w[j] = fmt.Sprintf("w%d_%d", i, j)
	}
	return strings.Join(w, " ")
}

// pqRow5 is a row of a Parquet file with five columns of several types.
type pqRow5 struct {
	ID    string   `parquet:"id"`
	Text  string   `parquet:"text"`
	URL   *string  `parquet:"url,optional"`
	Score float64  `parquet:"score"`
	Tags  []string `parquet:"tags,list"`
}

// TestDedupParquetRoundTrip deduplicates a Parquet file with five columns
// (three rows are near-duplicates of the row before them) and reads the
// kept file back: a Parquet file with the same schema, the same five
// columns, and exactly the rows that are not duplicates, every column
// intact.
func TestDedupParquetRoundTrip(t *testing.T) {
	dups := map[int]bool{5: true, 12: true, 20: true}
	var rows, want []pqRow5
	for i := range 30 {
		r := pqRow5{ID: fmt.Sprintf("row-%02d", i), Text: words(i, 80), Score: float64(i) / 8}
		if dups[i] {
			r.Text = words(i-1, 80) + " tail"
		}
		if i%3 != 1 {
			r.URL = new(fmt.Sprintf("https://example.com/%d", i))
		}
		for j := range i % 4 {
			r.Tags = append(r.Tags, fmt.Sprintf("tag%d", j))
		}
		rows = append(rows, r)
		if !dups[i] {
			want = append(want, r)
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "five.parquet")
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqRow5](&buf, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(10))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	env, stdout, errb := testEnv()
	if code := Main(context.Background(), []string{"dedup", in, "-o", out, "--store", "memory", "-q"}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(stdout.String(), "read 30: kept 27, duplicates 3") {
		t.Fatalf("stdout %s", stdout)
	}
	f, err := os.Open(filepath.Join(out, "kept", "five.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	src, _ := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if got, wantSchema := pf.Schema().String(), src.Schema().String(); got != wantSchema || len(pf.Schema().Columns()) != 5 {
		t.Errorf("schema (%d columns)\n%s\nwant\n%s", len(pf.Schema().Columns()), got, wantSchema)
	}
	got := make([]pqRow5, pf.NumRows())
	r := parquet.NewGenericReader[pqRow5](f)
	if k, err := r.Read(got); k != len(got) || (err != nil && err != io.EOF) {
		t.Fatalf("read %d of %d rows: %v", k, len(got), err)
	}
	for i := range got {
		if len(got[i].Tags) == 0 {
			got[i].Tags = nil // the reader makes an empty list of a missing one
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kept rows differ: got %d rows, want %d", len(got), len(want))
	}
}

// warcRecord builds one WARC/1.1 record.
func warcRecord(typ string, id int, fields []string, contentType string, block []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s>\r\nWARC-Date: 2025-03-04T05:06:07Z\r\n", typ, warcUUID(id))
	for _, f := range fields {
		b.WriteString(f + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Type: %s\r\nContent-Length: %d\r\n\r\n", contentType, len(block))
	b.Write(block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

func warcUUID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// TestDedupWARCRoundTrip deduplicates a crawl of six pages, each a
// request, a response and a metadata record after a warcinfo record; two
// pages are near-duplicates of the page before them. The kept WARC holds
// the warcinfo and the three records of each kept page, byte for byte in
// input order, and github.com/nlnwa/gowarc, an independent reader, reads
// it back record for record with strict validation.
func TestDedupWARCRoundTrip(t *testing.T) {
	info := "WARC-Warcinfo-ID: <urn:uuid:" + warcUUID(1) + ">"
	type rec struct {
		typ, id string
		raw     []byte
	}
	var recs []rec
	add := func(typ string, id int, raw []byte) {
		recs = append(recs, rec{typ, "<urn:uuid:" + warcUUID(id) + ">", raw})
	}
	add("warcinfo", 1, warcRecord("warcinfo", 1, []string{"WARC-Filename: crawl.warc.gz"}, "application/warc-fields", []byte("software: neardup-test\r\nformat: WARC File Format 1.1\r\n")))
	dup := map[int]bool{1: true, 4: true}
	for p := range 6 {
		uri := fmt.Sprintf("http://site%d.example/", p)
		text := words(p, 80)
		if dup[p] {
			text = words(p-1, 80) + " copy"
		}
		body := "<html><body><p>" + text + "</p></body></html>"
		resp := 100 + 10*p
		to := "WARC-Concurrent-To: <urn:uuid:" + warcUUID(resp) + ">"
		add("request", resp+1, warcRecord("request", resp+1, []string{"WARC-Target-URI: " + uri, info, to}, "application/http; msgtype=request",
			[]byte("GET / HTTP/1.1\r\nHost: "+strings.TrimPrefix(uri, "http://")+"\r\n\r\n")))
		add("response", resp, warcRecord("response", resp, []string{"WARC-Target-URI: " + uri, info}, "application/http; msgtype=response",
			fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body)))
		add("metadata", resp+2, warcRecord("metadata", resp+2, []string{"WARC-Target-URI: " + uri, info, to}, "application/warc-fields", []byte("fetchTimeMs: 12\r\n")))
	}
	var data, wantBytes []byte
	var want []rec
	for i, r := range recs {
		data = append(data, r.raw...)
		if i == 0 || !dup[(i-1)/3] {
			want = append(want, r)
			wantBytes = append(wantBytes, r.raw...)
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "crawl.warc")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The input itself is valid to gowarc.
	if types, _ := readWARCGo(t, in); len(types) != len(recs) {
		t.Fatalf("gowarc reads %d of %d input records", len(types), len(recs))
	}
	out := filepath.Join(dir, "out")
	env, stdout, errb := testEnv()
	if code := Main(context.Background(), []string{"dedup", in, "-o", out, "--store", "memory", "-q"}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(stdout.String(), "read 6: kept 4, duplicates 2") {
		t.Fatalf("stdout %s", stdout)
	}
	kept := filepath.Join(out, "kept", "crawl.warc")
	types, ids := readWARCGo(t, kept)
	if len(ids) != len(want) {
		t.Fatalf("gowarc reads %d records %v, want %d", len(ids), types, len(want))
	}
	for i, w := range want {
		if types[i] != w.typ || ids[i] != w.id {
			t.Errorf("record %d: %s %s, want %s %s", i, types[i], ids[i], w.typ, w.id)
		}
	}
	if got, _ := os.ReadFile(kept); !bytes.Equal(got, wantBytes) {
		t.Errorf("the kept WARC is not the kept records verbatim (%d bytes, want %d)", len(got), len(wantBytes))
	}
}

// readWARCGo reads a WARC file with gowarc, strictly validated, and
// returns each record's type and id.
func readWARCGo(t *testing.T, path string) (types, ids []string) {
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
			t.Fatalf("gowarc: %s record %d: %v", path, len(ids), err)
		}
		if val != nil && len(*val) > 0 {
			t.Errorf("gowarc: %s record %d: %v", path, len(ids), val)
		}
		types = append(types, rec.Type().String())
		ids = append(ids, "<"+rec.RecordId()+">")
		rec.Close()
	}
	return types, ids
}
