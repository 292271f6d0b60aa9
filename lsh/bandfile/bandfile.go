// Package bandfile provides the export of LSH band keys as zstd-compressed
// Parquet rows (doc, seq, band, key), and the SQL self-join that turns
// such a table into candidate pairs in the engines users already run:
// DuckDB, Spark SQL, Trino and BigQuery.
//
// A document's band keys are the C(b, m) lookup keys of its supershingles
// (the "m of b" keys of the Manasse, "On the Efficient Determination of Most
// Near Neighbors" (the book)'s section 2.5; AltaVista's (supershingle,
// document) records of section 3.1): two documents are candidate
// near-duplicates when they share a key. The export is the join's input
// written once — by `neardup dedup --export-bands` (package dedup,
// Options.ExportBands) and by the Beam pipeline's --export-bands (module
// beam/) — and the join itself is plain SQL with a window function:
// within each key, documents are ranked by seq and each is paired with at
// most MaxRun documents before it, the hot-key guard of index.MaxRun, so a
// key shared by boilerplate costs MaxRun pairs per document instead of a
// quadratic number. The query's result equals the candidate pairs of the
// writer (beam/bands/duckdb_test.go checks it in DuckDB for both writers).
//
// The package writes and explains; it does not compute keys (package lsh
// does: lsh.Scheme.Key or Keys), it writes no store (only package index
// does) and it does not verify pairs.
package bandfile

import (
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Row is one band key of one document.
type Row struct {
	// Doc is the document's id.
	Doc string `parquet:"doc"`
	// Seq is the document's position in input order (dedup's Seq, the
	// pipeline's Order); the join ranks documents by it.
	Seq int64 `parquet:"seq"`
	// Band is the key's number, 0 <= Band < C(b, m).
	Band int32 `parquet:"band"`
	// Key is the 64-bit band key, its bits stored as a signed integer
	// (Trino, BigQuery and Spark have no unsigned 64-bit type; equality is
	// unaffected).
	Key int64 `parquet:"key"`
}

// AppendRows appends the rows of one document, whose band keys are keys
// (keys[c] is band key number c), to dst.
func AppendRows(dst []Row, doc string, seq int64, keys []uint64) []Row {
	for c, k := range keys {
		dst = append(dst, Row{Doc: doc, Seq: seq, Band: int32(c), Key: int64(k)})
	}
	return dst
}

// Writer writes rows as one Parquet file with zstd-compressed pages. The
// zero value is not usable; call NewWriter. Not safe for concurrent use.
// Rows are buffered in row groups (parquet-go's default size) until Close.
type Writer struct {
	w *parquet.GenericWriter[Row]
}

// NewWriter returns a Writer writing to w. Close finishes the file; it
// does not close w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: parquet.NewGenericWriter[Row](w, parquet.Compression(&parquet.Zstd))}
}

// Write writes rows.
func (w *Writer) Write(rows []Row) error {
	_, err := w.w.Write(rows)
	return err
}

// Close flushes the last row group and writes the footer.
func (w *Writer) Close() error { return w.w.Close() }

// Dialect is an SQL engine the join is written for.
type Dialect int

// Dialects.
const (
	DuckDB Dialect = iota
	SparkSQL
	Trino
	BigQuery
)

// String returns the engine's name.
func (d Dialect) String() string {
	switch d {
	case DuckDB:
		return "duckdb"
	case SparkSQL:
		return "spark"
	case Trino:
		return "trino"
	case BigQuery:
		return "bigquery"
	}
	return fmt.Sprintf("dialect(%d)", int(d))
}

// Source returns the FROM-clause table expression that reads the Parquet
// files at location in dialect d: a glob for DuckDB
// (read_parquet('out/bands/*.parquet')) and Spark SQL
// (parquet.`out/bands/`), a table name for Trino and BigQuery, where the
// files are first declared as an external table (see docs/beam.md), so
// location is that table's name.
func Source(d Dialect, location string) string {
	switch d {
	case DuckDB:
		return "read_parquet('" + strings.ReplaceAll(location, "'", "''") + "')"
	case SparkSQL:
		return "parquet.`" + location + "`"
	}
	return location
}

// Query returns the SQL that turns the band-key table source (see Source)
// into candidate pairs: one row (doc_a, doc_b, seq_a, seq_b, shared_keys)
// per distinct pair, doc_a the earlier document, each document paired with
// at most maxRun documents before it within a key. The text is ANSI SQL
// with window functions, the same in all four dialects.
func Query(source string, maxRun int) string {
	return fmt.Sprintf(`WITH runs AS (
  SELECT doc, seq, key,
         ROW_NUMBER() OVER (PARTITION BY key ORDER BY seq) AS pos
  FROM %s
)
SELECT a.doc AS doc_a, b.doc AS doc_b, a.seq AS seq_a, b.seq AS seq_b,
       COUNT(*) AS shared_keys
FROM runs a
JOIN runs b
  ON a.key = b.key AND a.pos < b.pos AND b.pos - a.pos <= %d
GROUP BY a.doc, b.doc, a.seq, b.seq
ORDER BY seq_b, seq_a`, source, maxRun)
}
