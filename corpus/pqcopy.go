package corpus

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// pqCopier copies whole rows, every column, from a Parquet input to a
// Parquet output with the input's schema, key-value metadata and codec.
// Rows are asked for in increasing order (the order a Reader yields them);
// it steps through the row groups, checking each one's column chunks as
// the reader does (pqcheck.go) before parquet-go decodes them.
type pqCopier struct {
	src   *os.File
	file  *parquet.File
	rgs   []parquet.RowGroup
	flat  []bool // per leaf column: at most one value per row
	check chunkChecker
	w     *parquet.Writer

	rg      int   // current row group, -1 before the first
	rgStart int64 // index in the file of its first row
	rows    parquet.Rows
	next    int64 // index in the row group of the next row rows yields
	buf     []parquet.Row
}

// newPQCopier opens the Parquet file at path and a writer of its schema
// to out.
func newPQCopier(path string, out io.Writer) (c *pqCopier, err error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt parquet file %s: %v", path, p)
		}
		if err != nil {
			src.Close()
		}
	}()
	fi, err := src.Stat()
	if err != nil {
		return nil, err
	}
	lim := newPQLimits(DefaultMaxRecordBytes)
	footer, err := checkParquetFooter(src, fi.Size(), lim)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := parquet.OpenFile(src, fi.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	md := f.Metadata()
	if err := checkParquetMeta(md); err != nil {
		return nil, fmt.Errorf("%s: corrupt footer: %w", path, err)
	}
	c = &pqCopier{src: src, file: f, rgs: f.RowGroups(), rg: -1, buf: make([]parquet.Row, 1)}
	c.check = chunkChecker{r: src, dataEnd: fi.Size() - 8 - footer, lim: lim}
	for _, path := range f.Schema().Columns() {
		l, _ := f.Schema().Lookup(path...)
		c.flat = append(c.flat, l.MaxRepetitionLevel == 0)
	}
	opts := []parquet.WriterOption{f.Schema()}
	if len(md.RowGroups) > 0 && len(md.RowGroups[0].Columns) > 0 {
		if codec := parquet.LookupCompressionCodec(md.RowGroups[0].Columns[0].MetaData.Codec); codec != nil {
			opts = append(opts, parquet.Compression(codec))
		}
	}
	for _, kv := range md.KeyValueMetadata {
		opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
	}
	c.w = parquet.NewWriter(out, opts...)
	return c, nil
}

// copyRow copies row line (1-based, Document.Line) of the input.
func (c *pqCopier) copyRow(line int64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt parquet data in row %d: %v", line, p)
		}
	}()
	target := line - 1
	if target < 0 || c.rg >= 0 && target < c.rgStart+c.next {
		return fmt.Errorf("parquet row %d asked for out of order", line)
	}
	for c.rg < 0 || target >= c.rgStart+c.rgs[c.rg].NumRows() {
		if c.rg >= 0 {
			c.rgStart += c.rgs[c.rg].NumRows()
		}
		c.closeRows()
		c.rg++
		if c.rg >= len(c.rgs) {
			return fmt.Errorf("parquet row %d is past the end of the file", line)
		}
	}
	if c.rows == nil {
		md := &c.file.Metadata().RowGroups[c.rg]
		for i := range md.Columns {
			if err := c.check.chunk(&md.Columns[i], md.NumRows, i < len(c.flat) && c.flat[i]); err != nil {
				return fmt.Errorf("row group %d: %w", c.rg, err)
			}
		}
		c.rows, c.next = c.rgs[c.rg].Rows(), 0
	}
	local := target - c.rgStart
	if local != c.next {
		if err := c.rows.SeekToRow(local); err != nil {
			return err
		}
	}
	c.buf[0] = c.buf[0][:0]
	n, err := c.rows.ReadRows(c.buf)
	if n != 1 {
		if err == nil || err == io.EOF {
			err = errors.New("no row")
		}
		return fmt.Errorf("reading parquet row %d: %w", line, err)
	}
	c.next = local + 1
	_, err = c.w.WriteRows(c.buf)
	return err
}

func (c *pqCopier) closeRows() {
	if c.rows != nil {
		c.rows.Close()
		c.rows = nil
	}
}

// close writes the footer of the output and closes the input.
func (c *pqCopier) close() error {
	c.closeRows()
	err := c.w.Close()
	if cerr := c.src.Close(); err == nil {
		err = cerr
	}
	return err
}
