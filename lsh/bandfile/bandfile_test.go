package bandfile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestWriterRoundTrip writes rows and reads them back with parquet-go,
// checking the values (the key's sign bit included) and the zstd codec.
func TestWriterRoundTrip(t *testing.T) {
	var rows []Row
	rows = AppendRows(rows, "a", 0, []uint64{1, 1 << 63, ^uint64(0)})
	rows = AppendRows(rows, "b", 7, []uint64{42})
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.Read[Row](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if got[i] != rows[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], rows[i])
		}
	}
	if uint64(got[1].Key) != 1<<63 || got[2].Band != 2 || got[3].Seq != 7 {
		t.Errorf("rows %+v", got)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec.String() != "ZSTD" {
				t.Errorf("column %v: codec %v, want ZSTD", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
}

// TestQueryDialects checks that every dialect's source is quoted and that
// the query carries the window bound.
func TestQueryDialects(t *testing.T) {
	for d, want := range map[Dialect]string{
		DuckDB:   "read_parquet('it''s/*.parquet')",
		SparkSQL: "parquet.`it's/*.parquet`",
		Trino:    "it's/*.parquet",
		BigQuery: "it's/*.parquet",
	} {
		if got := Source(d, "it's/*.parquet"); got != want {
			t.Errorf("%v: Source = %s, want %s", d, got, want)
		}
	}
	q := Query("t", 17)
	for _, want := range []string{"FROM t", "b.pos - a.pos <= 17", "PARTITION BY key ORDER BY seq", "GROUP BY a.doc, b.doc, a.seq, b.seq"} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %q:\n%s", want, q)
		}
	}
}
