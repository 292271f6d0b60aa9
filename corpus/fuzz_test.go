package corpus

import (
	"bytes"
	"testing"
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
				reasons = append(reasons, e.Reason)
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

func FuzzWARC(f *testing.F) {
	data, _ := goodWARC(f)
	f.Add(data)
	f.Add(append(response("http://x/", "text/html", "<p>x</p>")[:70], "WARC/1.0\r\nContent-Length: 99999999999\r\n\r\n"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, FormatWARC)
	})
}
