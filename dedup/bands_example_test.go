package dedup_test

import (
	"bytes"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh/bandfile"
)

// Export the band keys of the indexed documents as Parquet, for the SQL
// self-join of package lsh/bandfile. The identical copy is not indexed, so
// it has no rows; each other document has one row per LSH key.
func ExampleOptions_exportBands() {
	text := words(50)
	docs := records(
		[2]string{"original", text},
		[2]string{"copy", text},
		[2]string{"edited", text + " and one more"},
	)
	var buf bytes.Buffer
	res, err := dedup.Run(ctx, docs, dedup.Options{Index: index.Config{Threshold: 0.8}, ExportBands: &buf})
	if err != nil {
		panic(err)
	}
	rows, err := parquet.Read[bandfile.Row](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	perDoc := map[string]int{}
	for _, r := range rows {
		perDoc[r.Doc]++
	}
	keys := res.Scheme.NumKeys()
	fmt.Println(perDoc["original"] == keys, perDoc["edited"] == keys, perDoc["copy"])
	// Output: true true 0
}
