package corpus

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestRecordErrorDetail checks that rejections carry the id when the
// reader got to it, the source, the offset, the reason, and for missing
// text the fields the record does have.
func TestRecordErrorDetail(t *testing.T) {
	dir := t.TempDir()
	jsonl := `{"id":"a","text":"fine"}` + "\n" +
		`{"id":"b","content":"wrong field","url":"http://x/"}` + "\n" +
		`{"content":"no id either","n":1}` + "\n" +
		`{"id":"d","text":null,"x":1}` + "\n" +
		`{"id":7,"text":["not","a","string"]}` + "\n" +
		`{"doc":{"key":"k","bo\u0064y":{}},"id":"f"}` + "\n"
	p := writeFile(t, dir, "a.jsonl", []byte(jsonl))
	lines := strings.SplitAfter(jsonl, "\n")
	off := func(i int) int64 { return int64(len(strings.Join(lines[:i], ""))) }
	res := readAll(t, []string{p}, Options{})
	want := []RecordError{
		{ID: "b", Path: p, Line: 2, Offset: off(1), Reason: ReasonMissingText, Fields: []string{"id", "content", "url"}},
		{ID: "", Path: p, Line: 3, Offset: off(2), Reason: ReasonMissingText, Fields: []string{"content", "n"}},
		{ID: "d", Path: p, Line: 4, Offset: off(3), Reason: ReasonMissingText, Fields: []string{"id", "text", "x"}},
		{ID: "7", Path: p, Line: 5, Offset: off(4), Reason: ReasonMissingText, Fields: []string{"id", "text"}},
		{ID: "f", Path: p, Line: 6, Offset: off(5), Reason: ReasonMissingText, Fields: []string{"doc", "id"}},
	}
	if len(res.rejects) != len(want) {
		t.Fatalf("rejects %v", res.rejects)
	}
	for i, w := range want {
		e := res.rejects[i]
		if e.ID != w.ID || e.Path != w.Path || e.Line != w.Line || e.Offset != w.Offset || e.Reason != w.Reason || !reflect.DeepEqual(e.Fields, w.Fields) || e.Records() != 1 {
			t.Errorf("reject %d = %+v\nwant %+v", i, e, w)
		}
	}
	if msg := res.rejects[0].Error(); !strings.Contains(msg, `no field "text"; the record has: id, content, url`) {
		t.Errorf("message %q", msg)
	}
	if msg := res.rejects[2].Error(); !strings.Contains(msg, `field "text" is null`) {
		t.Errorf("message %q", msg)
	}

	// A dotted path lists the keys of the deepest object it reached.
	res = readAll(t, []string{p}, Options{TextField: "doc.body.text"})
	if e := res.rejects[len(res.rejects)-1]; len(e.Fields) != 0 || !strings.Contains(e.Error(), "the record has: no fields") {
		t.Errorf("reject %v, fields %q", e, e.Fields)
	}
	res = readAll(t, []string{p}, Options{TextField: "doc.text"})
	if e := res.rejects[len(res.rejects)-1]; !reflect.DeepEqual(e.Fields, []string{"doc.key", "doc.body"}) || e.ID != "f" {
		t.Errorf("reject %+v", e)
	}

	// WARC: the id is the target URI once the header is read.
	big := response("http://big/", "text/html", strings.Repeat("x", 500))
	enc := warcRecord("response", "http://enc/", "application/http; msgtype=response", httpBlock("text/html", "Content-Encoding: br\r\n", []byte("xx")))
	w := writeFile(t, dir, "a.warc", append(append([]byte{}, big...), enc...))
	res = readAll(t, []string{w}, Options{MaxRecordBytes: 300})
	if len(res.rejects) != 2 || res.rejects[0].ID != "http://big/" || res.rejects[0].Offset != 0 || res.rejects[1].ID != "http://enc/" || res.rejects[1].Offset != int64(len(big)) {
		t.Errorf("warc rejects %+v", res.rejects)
	}

	// Whole files and open failures are named by the file's id.
	f := writeFile(t, dir, "big.txt", bytes.Repeat([]byte("z"), 100))
	res = readAll(t, []string{f, dir + "/missing.txt"}, Options{MaxRecordBytes: 10})
	if len(res.rejects) != 2 || res.rejects[0].ID != "big.txt" || res.rejects[0].Reason != ReasonTooLarge || res.rejects[1].ID != "missing.txt" || res.rejects[1].Reason != ReasonOpen {
		t.Errorf("file rejects %+v", res.rejects)
	}

	// Parquet: a file without the text column lists its columns; a row
	// with a null text is named by its id column.
	pq := writeFile(t, dir, "o.parquet", parquetBytes(t, []pqRowOther{{Key: 1, Body: "x"}}, 10))
	res = readAll(t, []string{pq}, Options{})
	if len(res.rejects) != 1 || !reflect.DeepEqual(res.rejects[0].Fields, []string{"key", "body"}) || !strings.Contains(res.rejects[0].Error(), "the file has: key, body") {
		t.Errorf("parquet rejects %+v", res.rejects)
	}
	pq = writeFile(t, dir, "n.parquet", parquetBytes(t, []pqRow{{ID: "nul", Lang: "en"}}, 10))
	res = readAll(t, []string{pq}, Options{})
	if len(res.rejects) != 1 || res.rejects[0].ID != "nul" || res.rejects[0].Line != 1 || res.rejects[0].Offset != -1 {
		t.Errorf("parquet rejects %+v", res.rejects)
	}
}
