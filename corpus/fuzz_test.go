package corpus

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// fuzzCap bounds one record in the fuzz targets: with it, the reader's
// memory is a few buffers of at most this size whatever the input claims
// (a WARC Content-Length of 2^62 is skipped, never allocated).
const fuzzCap = 1 << 16

// fuzzRead reads data as one stdin input of the given format twice and
// checks the invariants: no panic, read = yielded + rejected, every
// rejection reported with a reason and a position, yielded bodies valid
// UTF-8 and within the cap, and the same result both times.
func fuzzRead(t *testing.T, data []byte, format Format) {
	run := func() (ids []string, reasons []string, st Stats) {
		opts := Options{
			Stdin:          bytes.NewReader(data),
			Format:         format,
			MaxRecordBytes: fuzzCap,
			MetaFields:     []string{"meta.url", "n"},
			OnReject: func(e *RecordError) {
				if e.Reason == "" || e.Path != "-" {
					t.Errorf("bad rejection %+v", e)
				}
				for range e.Records() {
					reasons = append(reasons, e.Reason)
				}
			},
		}
		r, err := Open([]string{"-"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			d := r.Doc()
			if int64(len(d.Body)) > fuzzCap*4 { // U+FFFD repair may triple the size
				t.Fatalf("body of %d bytes over the cap", len(d.Body))
			}
			if d.Offset < 0 || d.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside input of %d bytes", d.Offset, len(data))
			}
			ids = append(ids, d.ID)
		}
		if r.Err() != nil {
			t.Fatalf("Err: %v", r.Err())
		}
		r.Close()
		st = r.Stats()
		checkStats(t, st)
		if int64(len(ids)) != st.Yielded || int64(len(reasons)) != st.Rejected {
			t.Fatalf("counts: %d ids, %d reasons, stats %v", len(ids), len(reasons), st)
		}
		return ids, reasons, st
	}
	ids1, reasons1, st1 := run()
	ids2, reasons2, st2 := run()
	if len(ids1) != len(ids2) || len(reasons1) != len(reasons2) || st1.String() != st2.String() {
		t.Fatalf("nondeterministic: %v vs %v", st1, st2)
	}
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte(sampleJSONL))
	f.Add([]byte(`{"id":"x","text":"\ud800\udc00 \u00"}` + "\n" + `{"text":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, FormatJSONL)
		// Auto-detection (gzip/zstd magic, WARC, text) must hold up too.
		fuzzRead(t, data, FormatAuto)
	})
}

// FuzzJSON reads arbitrary bytes as a JSON document (objects, arrays of
// objects, garbage between them).
func FuzzJSON(f *testing.F) {
	f.Add([]byte("[\n {\"id\":\"a\",\"text\":\"x\"},\n {\"text\":\"y\",\"meta\":{\"url\":\"u\"}}\n]"))
	f.Add([]byte(sampleJSONL))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, FormatJSON)
	})
}

func FuzzWARC(f *testing.F) {
	data, _ := goodWARC(f)
	f.Add(data)
	f.Add(append(response("http://x/", "text/html", "<p>x</p>")[:70], "WARC/1.0\r\nContent-Length: 99999999999\r\n\r\n"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, FormatWARC)
	})
}

// pqSeedRows is the content of the Parquet fuzz seeds: short texts, a
// null, a repeated value for the dictionary.
func pqSeedRows() []pqRow {
	rows := []pqRow{{ID: "a", Text: ptr("first text"), Lang: "en"}, {ID: "b", Lang: "de"}, {ID: "c", Text: ptr("third"), Lang: "en"}}
	for i := range 20 {
		rows = append(rows, pqRow{ID: fmt.Sprint(i), Text: ptr("same text"), Lang: "fr"})
	}
	return rows
}

// FuzzParquet reads arbitrary bytes as a Parquet file and checks what
// fuzzRead checks (no panic, read = yielded + rejected, determinism) and
// that one read allocates less than 256 MiB whatever the sizes the file
// claims (records are capped at 64 KiB, so pages at 1 MiB + 64 KiB): the
// checks of pqcheck.go must catch every claim that would make parquet-go
// allocate for bytes the file does not hold. It then copies the rows read
// to a Parquet output (MirrorWriter), which may fail but must not panic
// or allocate more.
func FuzzParquet(f *testing.F) {
	for _, seed := range parquetSeeds(f) {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "f.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		run := func() (ids []string, st Stats) {
			opts := Options{
				Format:         FormatParquet,
				MaxRecordBytes: fuzzCap,
				MetaFields:     []string{"lang"},
				OnReject: func(e *RecordError) {
					if e.Reason == "" || e.Path != p || e.Count < 0 {
						t.Errorf("bad rejection %+v", e)
					}
				},
			}
			r, err := Open([]string{p}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				d := r.Doc()
				if int64(len(d.Body)) > fuzzCap*4 {
					t.Fatalf("body of %d bytes over the cap", len(d.Body))
				}
				ids = append(ids, d.ID)
			}
			if r.Err() != nil {
				t.Fatalf("Err: %v", r.Err())
			}
			r.Close()
			st = r.Stats()
			checkStats(t, st)
			if int64(len(ids)) != st.Yielded {
				t.Fatalf("%d ids, stats %v", len(ids), st)
			}
			return ids, st
		}
		var ids1, ids2 []string
		var st1, st2 Stats
		alloc := allocDuring(func() { ids1, st1 = run() })
		if alloc > 256<<20 {
			t.Fatalf("one read allocated %d MiB", alloc>>20)
		}
		ids2, st2 = run()
		if !slices.Equal(ids1, ids2) || st1.String() != st2.String() {
			t.Fatalf("nondeterministic: %v vs %v", st1, st2)
		}
		if len(ids1) == 0 {
			return
		}
		out := filepath.Join(dir, "out")
		os.RemoveAll(out)
		alloc = allocDuring(func() {
			m, err := NewMirrorWriter(out)
			if err != nil {
				t.Fatal(err)
			}
			_, err = CopyKept(context.Background(), []string{p}, Options{MaxRecordBytes: fuzzCap}, m, func(int64, *Document) bool { return true })
			if cerr := m.Close(); err == nil && cerr != nil {
				err = cerr
			}
			_ = err // corrupt columns that the reader did not read may fail the copy
		})
		if alloc > 256<<20 {
			t.Fatalf("copying the rows allocated %d MiB", alloc>>20)
		}
	})
}

// parquetSeeds returns small Parquet files in every codec parquet-go
// writes, with data pages v1 and v2 and a dictionary-encoded column.
func parquetSeeds(t testing.TB) [][]byte {
	rows := pqSeedRows()
	var seeds [][]byte
	for _, codec := range []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Zstd, &parquet.Brotli, &parquet.Lz4Raw} {
		seeds = append(seeds, parquetBytesOpts(t, rows, 10, parquet.Compression(codec)))
	}
	seeds = append(seeds, parquetBytesOpts(t, rows, 100, parquet.DataPageVersion(1), parquet.Compression(&parquet.Snappy)))
	type dictRow struct {
		ID   string  `parquet:"id"`
		Text *string `parquet:"text,optional,dict"`
		Lang string  `parquet:"lang,dict"`
	}
	var drows []dictRow
	for _, r := range rows {
		drows = append(drows, dictRow(r))
	}
	seeds = append(seeds, parquetBytesOpts(t, drows, 100, parquet.Compression(&parquet.Zstd)))
	return seeds
}
