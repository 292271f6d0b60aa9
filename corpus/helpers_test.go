package corpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

// result is everything a read produced.
type result struct {
	docs     []*Document
	rejects  []*RecordError
	warnings []*RecordError
	stats    Stats
	err      error
}

func (r *result) ids() []string {
	var s []string
	for _, d := range r.docs {
		s = append(s, d.ID)
	}
	return s
}

func (r *result) reasons() []string {
	var s []string
	for _, e := range r.rejects {
		s = append(s, e.Reason)
	}
	return s
}

// readAll reads paths with opts, collecting documents (cloned), rejects and
// warnings, and checks the Stats invariants.
func readAll(t testing.TB, paths []string, opts Options) *result {
	t.Helper()
	res := &result{}
	opts.OnReject = func(e *RecordError) { res.rejects = append(res.rejects, e) }
	opts.OnWarning = func(e *RecordError) { res.warnings = append(res.warnings, e) }
	r, err := Open(paths, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	for r.Next() {
		res.docs = append(res.docs, r.Doc().Clone())
	}
	res.err = r.Err()
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	res.stats = r.Stats()
	checkStats(t, res.stats)
	if res.err == nil {
		if got := int64(len(res.docs)); got != res.stats.Yielded {
			t.Errorf("yielded %d documents, Stats.Yielded = %d", got, res.stats.Yielded)
		}
		var got int64
		for _, e := range res.rejects {
			got += e.Records()
		}
		if got != res.stats.Rejected {
			t.Errorf("OnReject reported %d records, Stats.Rejected = %d", got, res.stats.Rejected)
		}
	}
	return res
}

// checkStats checks read = yielded + rejected and the per-reason sums.
func checkStats(t testing.TB, s Stats) {
	t.Helper()
	if s.Read != s.Yielded+s.Rejected {
		t.Errorf("invariant broken: read %d != yielded %d + rejected %d", s.Read, s.Yielded, s.Rejected)
	}
	for name, pair := range map[string]struct {
		total int64
		by    map[string]int64
	}{"rejected": {s.Rejected, s.RejectedBy}, "warnings": {s.Warnings, s.WarningsBy}, "skipped": {s.Skipped, s.SkippedBy}} {
		var sum int64
		for _, n := range pair.by {
			sum += n
		}
		if sum != pair.total {
			t.Errorf("%s by reason sums to %d, total %d", name, sum, pair.total)
		}
	}
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(b, nil)
}

// warcRecord builds one WARC record (with its trailing CRLF CRLF).
func warcRecord(typ, uri, contentType string, block []byte) []byte {
	return warcRecordLen(typ, uri, contentType, block, len(block))
}

// warcRecordLen builds a record that claims Content-Length n.
func warcRecordLen(typ, uri, contentType string, block []byte, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\n", typ)
	if uri != "" {
		fmt.Fprintf(&b, "WARC-Target-URI: %s\r\n", uri)
	}
	fmt.Fprintf(&b, "WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Record-ID: <urn:uuid:%s>\r\n", strings.Repeat("0", 8)+"-"+typ)
	if contentType != "" {
		fmt.Fprintf(&b, "Content-Type: %s\r\n", contentType)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", n)
	b.Write(block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

// httpBlock builds an HTTP response block.
func httpBlock(contentType string, extra string, body []byte) []byte {
	h := "HTTP/1.1 200 OK\r\n"
	if contentType != "" {
		h += "Content-Type: " + contentType + "\r\n"
	}
	h += extra + "\r\n"
	return append([]byte(h), body...)
}

func response(uri, contentType string, body string) []byte {
	return warcRecord("response", uri, "application/http; msgtype=response", httpBlock(contentType, "", []byte(body)))
}

type pqRow struct {
	ID   string  `parquet:"id"`
	Text *string `parquet:"text,optional"`
	Lang string  `parquet:"lang"`
}

type pqRowOther struct {
	Key  int64  `parquet:"key"`
	Body string `parquet:"body"`
}

func parquetBytes[T any](t testing.TB, rows []T, rowGroupRows int) []byte {
	t.Helper()
	return parquetBytesOpts(t, rows, rowGroupRows)
}

// parquetBytesOpts writes rows as a Parquet file with pages of about 256
// bytes and row groups of rowGroupRows rows.
func parquetBytesOpts[T any](t testing.TB, rows []T, rowGroupRows int, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, append([]parquet.WriterOption{parquet.PageBufferSize(256)}, opts...)...)
	for i := 0; i < len(rows); i += rowGroupRows {
		end := min(i+rowGroupRows, len(rows))
		if _, err := w.Write(rows[i:end]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ptr[T any](v T) *T { return &v }
