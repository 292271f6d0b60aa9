package corpus

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func goodWARC(t testing.TB) (data []byte, records [][]byte) {
	t.Helper()
	var chunked bytes.Buffer
	body := "<p>chunked page</p>"
	fmt.Fprintf(&chunked, "%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	records = [][]byte{
		warcRecord("warcinfo", "", "application/warc-fields", []byte("software: test\r\n")),
		warcRecord("request", "http://a.example/", "application/http; msgtype=request", []byte("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n")),
		response("http://a.example/", "text/html; charset=utf-8", "<html><title>A</title><p>page a</p></html>"),
		response("http://a.example/logo.png", "image/png", "\x89PNG\r\n\x1a\n...."),
		warcRecord("resource", "file:///notes.txt", "text/plain", []byte("plain resource")),
		warcRecord("response", "http://b.example/", "application/http; msgtype=response",
			httpBlock("text/html", "Transfer-Encoding: chunked\r\n", chunked.Bytes())),
		warcRecord("response", "http://c.example/", "application/http; msgtype=response",
			httpBlock("text/html", "Content-Encoding: gzip\r\n", gzipBytes(t, []byte("<p>gzipped page</p>")))),
		warcRecord("response", "", "application/http; msgtype=response", httpBlock("", "", []byte("<!DOCTYPE html><p>no uri, sniffed</p>"))),
		warcRecord("metadata", "http://a.example/", "application/warc-fields", []byte("via: x\r\n")),
	}
	return bytes.Join(records, nil), records
}

func TestWARC(t *testing.T) {
	data, records := goodWARC(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		comp Compression
	}{
		{"a.warc", data, CompressionNone},
		{"a.warc.zst", zstdBytes(t, data), CompressionZstd},
		{"a.warc.gz", multiGzip(t, records), CompressionGzip}, // one gzip member per record
		{"noext", data, CompressionNone},                      // magic bytes
	} {
		p := writeFile(t, dir, c.name, c.data)
		res := readAll(t, []string{p}, Options{})
		if len(res.rejects) != 0 || len(res.warnings) != 0 {
			t.Fatalf("%s: rejects %v warnings %v", c.name, res.rejects, res.warnings)
		}
		want := []string{"http://a.example/", "file:///notes.txt", "http://b.example/", "http://c.example/", "<urn:uuid:00000000-response>"}
		if got := res.ids(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ids %q", c.name, got)
		}
		bodies := []string{"<html><title>A</title><p>page a</p></html>", "plain resource", "<p>chunked page</p>", "<p>gzipped page</p>", "<!DOCTYPE html><p>no uri, sniffed</p>"}
		htmls := []bool{true, false, true, true, true}
		rawIdx := []int{2, 4, 5, 6, 7}
		var off int64
		offsets := map[int]int64{}
		for i, r := range records {
			offsets[i] = off
			off += int64(len(r))
		}
		for i, d := range res.docs {
			if string(d.Body) != bodies[i] || d.HTML != htmls[i] || d.Format != FormatWARC || d.Compression != c.comp {
				t.Errorf("%s doc %d: body %q html %v format %v comp %v", c.name, i, d.Body, d.HTML, d.Format, d.Compression)
			}
			rec := records[rawIdx[i]]
			if !bytes.Equal(append(append([]byte{}, d.Raw...), "\r\n\r\n"...), rec) {
				t.Errorf("%s doc %d: raw is not the record verbatim", c.name, i)
			}
			if d.Offset != offsets[rawIdx[i]] {
				t.Errorf("%s doc %d: offset %d, want %d", c.name, i, d.Offset, offsets[rawIdx[i]])
			}
		}
		if m := res.docs[0].Meta; m["warc-date"] != "2024-01-02T03:04:05Z" || m["http-status"] != "200" || m["content-type"] != "text/html; charset=utf-8" {
			t.Errorf("%s: meta %v", c.name, m)
		}
		s := res.stats
		if s.Read != 5 || s.Skipped != 4 || s.SkippedBy[SkipWARCType] != 3 || s.SkippedBy[SkipWARCContent] != 1 {
			t.Errorf("%s: stats %v", c.name, s)
		}
	}
}

func multiGzip(t testing.TB, records [][]byte) []byte {
	var out []byte
	for _, r := range records {
		out = append(out, gzipBytes(t, r)...)
	}
	return out
}

func TestWARCBadRecords(t *testing.T) {
	good := func(i int) []byte {
		return response(fmt.Sprintf("http://ok/%d", i), "text/html", fmt.Sprintf("<p>ok %d</p>", i))
	}
	blk := httpBlock("text/html", "", []byte("<p>some body text here</p>"))
	badHTTP := warcRecord("response", "http://badhttp/", "application/http; msgtype=response", []byte("garbage without header end"))
	big := response("http://big/", "text/html", strings.Repeat("x", 500))
	type part struct {
		data   []byte
		reason string // "" for a good record
	}
	parts := []part{
		{good(0), ""},
		{warcRecordLen("response", "http://long/", "application/http; msgtype=response", blk, len(blk)+40), ReasonWARCLength}, // claims more: eats into the next record
		{good(1), ""},
		{warcRecordLen("response", "http://short/", "application/http; msgtype=response", blk, len(blk)-5), ReasonWARCLength}, // claims less
		{good(2), ""},
		{[]byte("this is not a WARC record\r\nnor is this\r\n"), ReasonWARCFraming},
		{good(3), ""},
		{[]byte("WARC/1.0\r\nWARC-Type: response\r\nContent-Length: twelve\r\n\r\n<p>x</p>\r\n\r\n"), ReasonWARCFraming},
		{good(4), ""},
		{[]byte("WARC/1.0\r\nWARC-Type: response\r\nno colon here\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n"), ReasonWARCFraming},
		{good(5), ""},
		{badHTTP, ReasonHTTP},
		{big, ReasonTooLarge},
		{good(6), ""},
		{warcRecord("response", "http://enc/", "application/http; msgtype=response", httpBlock("text/html", "Content-Encoding: br\r\n", []byte("xx"))), ReasonHTTP},
		{good(7), ""},
	}
	var data []byte
	var offsets []int64
	for _, p := range parts {
		offsets = append(offsets, int64(len(data)))
		data = append(data, p.data...)
	}
	// The stream ends with a truncated record.
	truncAt := int64(len(data))
	data = append(data, good(8)[:60]...)

	dir := t.TempDir()
	path := writeFile(t, dir, "bad.warc", data)
	res := readAll(t, []string{path}, Options{MaxRecordBytes: 300})
	var wantIDs []string
	for i := 0; i <= 7; i++ {
		wantIDs = append(wantIDs, fmt.Sprintf("http://ok/%d", i))
	}
	if got := res.ids(); !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("ids %q\nwant %q", got, wantIDs)
	}
	var wantRej []*RecordError
	for i, p := range parts {
		if p.reason != "" {
			wantRej = append(wantRej, &RecordError{Path: path, Offset: offsets[i], Reason: p.reason})
		}
	}
	wantRej = append(wantRej, &RecordError{Path: path, Offset: truncAt, Reason: ReasonTruncated})
	if len(res.rejects) != len(wantRej) {
		for _, e := range res.rejects {
			t.Log(e)
		}
		t.Fatalf("%d rejects, want %d", len(res.rejects), len(wantRej))
	}
	for i, w := range wantRej {
		e := res.rejects[i]
		if e.Path != w.Path || e.Offset != w.Offset || e.Reason != w.Reason || e.Line != 0 {
			t.Errorf("reject %d = %v (offset %d), want offset %d reason %s", i, e, e.Offset, w.Offset, w.Reason)
		}
		if !strings.Contains(e.Error(), fmt.Sprintf("@%d", w.Offset)) {
			t.Errorf("error %q lacks the offset", e)
		}
	}
	var goodOffsets []int64
	for i, p := range parts {
		if p.reason == "" {
			goodOffsets = append(goodOffsets, offsets[i])
		}
	}
	for i, d := range res.docs {
		if d.Offset != goodOffsets[i] {
			t.Errorf("doc %d offset %d, want %d", i, d.Offset, goodOffsets[i])
		}
	}
}

func TestWARCMissingTrailerAtEnd(t *testing.T) {
	rec := response("http://x/", "text/html", "<p>x</p>")
	res := readAll(t, []string{"-"}, Options{Stdin: bytes.NewReader(rec[:len(rec)-4])})
	if len(res.docs) != 1 || len(res.rejects) != 0 || len(res.warnings) != 1 || res.warnings[0].Reason != ReasonWARCTrailer {
		t.Fatalf("docs %d rejects %v warnings %v", len(res.docs), res.rejects, res.warnings)
	}
}

func TestWARCTruncatedGzip(t *testing.T) {
	_, records := goodWARC(t)
	gz := multiGzip(t, records)
	dir := t.TempDir()
	p := writeFile(t, dir, "t.warc.gz", gz[:len(gz)-30])
	res := readAll(t, []string{p}, Options{})
	if len(res.docs) != 5 || len(res.rejects) != 1 || res.rejects[0].Reason != ReasonTruncated {
		t.Fatalf("docs %q rejects %v", res.ids(), res.rejects)
	}
}
