package corpus

import (
	"bytes"
	"io"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// benchCorpus returns ~16 MiB of synthetic JSONL (about 400-byte lines).
func benchCorpus() []byte {
	s := rng.New(rng.Key(42))
	var buf []byte
	for i := 0; len(buf) < 16<<20; i++ {
		buf = genLine(buf, &s, i)
	}
	return buf
}

// BenchmarkRead measures reading throughput in MB/s of decompressed input
// through the whole Reader (detection, decompression, line splitting, JSON
// validation, field extraction, UTF-8 check). Run with
//
//	go test -run '^$' -bench Read -benchmem ./corpus/
func BenchmarkRead(b *testing.B) {
	plain := benchCorpus()
	var warc bytes.Buffer
	for i, line := range bytes.Split(plain[:4<<20], []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		warc.Write(response("http://example.com/"+string(rune('a'+i%26)), "text/html", "<html><body><p>"+string(line)+"</p></body></html>"))
	}
	dir := b.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		raw  int
	}{
		{"jsonl", plain, len(plain)},
		{"jsonl.gz", gzipBytes(b, plain), len(plain)},
		{"jsonl.zst", zstdBytes(b, plain), len(plain)},
		{"warc", warc.Bytes(), warc.Len()},
		{"warc.gz", gzipBytes(b, warc.Bytes()), warc.Len()},
	} {
		p := writeFile(b, dir, "bench."+c.name, c.data)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(c.raw))
			b.ReportAllocs()
			for b.Loop() {
				r, err := Open([]string{p}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for r.Next() {
					n += len(r.Doc().Body)
				}
				r.Close()
				if st := r.Stats(); st.Rejected != 0 || n == 0 {
					b.Fatalf("stats %v", st)
				}
			}
		})
	}
}

// BenchmarkJSONLWriter measures writing non-JSONL documents as JSONL.
func BenchmarkJSONLWriter(b *testing.B) {
	d := &Document{ID: "http://example.com/page", Body: bytes.Repeat([]byte("some \"quoted\" text\n"), 50), Format: FormatHTML}
	w := NewJSONLWriter(io.Discard)
	b.SetBytes(int64(len(d.Body)))
	b.ReportAllocs()
	for b.Loop() {
		w.Write(d)
	}
	w.Close()
}

// BenchmarkValidJSON measures the JSON check of a JSONL line of about
// 7 KB, most of it one string (a document's text): the scan of string
// bytes is what it costs.
func BenchmarkValidJSON(b *testing.B) {
	s := rng.New(rng.Key(7))
	var line []byte
	line = append(line, `{"id":"doc-1","text":"`...)
	for i := 0; len(line) < 7000; i++ {
		if i > 0 {
			line = append(line, ' ')
		}
		for range 3 + s.Uint64()%7 {
			line = append(line, byte('a'+s.Uint64()%26))
		}
	}
	line = append(line, `","url":"http://example.com/a"}`...)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !validJSON(line) {
			b.Fatal("invalid")
		}
	}
}
