package bandfile_test

import (
	"bytes"
	"fmt"

	"github.com/neardup/neardup/lsh/bandfile"
)

// Write the band keys of two documents as zstd Parquet.
func ExampleWriter() {
	var rows []bandfile.Row
	rows = bandfile.AppendRows(rows, "doc-1", 0, []uint64{0x1111, 0x2222})
	rows = bandfile.AppendRows(rows, "doc-2", 1, []uint64{0x1111, 0x3333})
	var buf bytes.Buffer
	w := bandfile.NewWriter(&buf)
	if err := w.Write(rows); err != nil {
		fmt.Println(err)
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(len(rows), "rows,", string(buf.Bytes()[:4]))
	// Output: 4 rows, PAR1
}

// The candidate-pair query over exported band keys, for DuckDB.
func ExampleQuery() {
	fmt.Println(bandfile.Query(bandfile.Source(bandfile.DuckDB, "out/bands/*.parquet"), 2048))
	// Output:
	// WITH runs AS (
	//   SELECT doc, seq, key,
	//          ROW_NUMBER() OVER (PARTITION BY key ORDER BY seq) AS pos
	//   FROM read_parquet('out/bands/*.parquet')
	// )
	// SELECT a.doc AS doc_a, b.doc AS doc_b, a.seq AS seq_a, b.seq AS seq_b,
	//        COUNT(*) AS shared_keys
	// FROM runs a
	// JOIN runs b
	//   ON a.key = b.key AND a.pos < b.pos AND b.pos - a.pos <= 2048
	// GROUP BY a.doc, b.doc, a.seq, b.seq
	// ORDER BY seq_b, seq_a
}
