// Package bands holds the tests that run the band-key export's SQL
// self-join (package lsh/bandfile of the core module: the Parquet writer
// and the query text, shared by `neardup dedup --export-bands` and the
// Beam pipeline) in DuckDB, through the Go duckdb driver (cgo), and
// compare its pairs with the candidates of the pipeline and of
// `neardup dedup`. It lives in the beam module so that the core module
// links no cgo library; it exports nothing.
package bands
