package corpus

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
)

// parquetSource reads the id, text and meta columns of a Parquet file row
// group by row group, one page per column in memory at a time, stepping
// the columns in lockstep (one value per row: only flat, non-repeated
// columns are accepted).
type parquetSource struct {
	o     *opened
	opts  *Options
	size  int64
	total *atomic.Int64

	rgs      []parquet.RowGroup
	rg       int
	rowsLeft int64
	row      int64

	textIdx, idIdx int   // leaf column indexes; idIdx -1 when absent
	metaIdx        []int // -1 when absent
	text, id       *colCursor
	metas          []*colCursor

	body []byte
	meta map[string]string
}

func newParquetSource(o *opened, opts *Options, size int64, total *atomic.Int64) (source, *RecordError) {
	fail := func(reason string, err error) (source, *RecordError) {
		o.close()
		return nil, o.errAt(0, -1, reason, err)
	}
	f, err := openParquet(o, size)
	if err != nil {
		return fail(ReasonParquet, err)
	}
	schema := f.Schema()
	leaf := func(col string) (int, error) {
		l, ok := schema.Lookup(strings.Split(col, ".")...)
		if !ok {
			return -1, nil
		}
		if l.MaxRepetitionLevel > 0 {
			return -1, fmt.Errorf("column %q is repeated", col)
		}
		return l.ColumnIndex, nil
	}
	s := &parquetSource{o: o, opts: opts, size: size, total: total, rgs: f.RowGroups()}
	if s.textIdx, err = leaf(opts.ParquetTextColumn); err != nil {
		return fail(ReasonParquet, err)
	}
	if s.textIdx < 0 {
		return fail(ReasonMissingText, fmt.Errorf("no column %q", opts.ParquetTextColumn))
	}
	if l, _ := schema.Lookup(strings.Split(opts.ParquetTextColumn, ".")...); l.Node.Type().Kind() != parquet.ByteArray {
		return fail(ReasonMissingText, fmt.Errorf("column %q is %s, not a string", opts.ParquetTextColumn, l.Node.Type()))
	}
	if s.idIdx, err = leaf(opts.ParquetIDColumn); err != nil {
		return fail(ReasonParquet, err)
	}
	for _, m := range opts.MetaFields {
		i, err := leaf(m)
		if err != nil {
			return fail(ReasonParquet, err)
		}
		s.metaIdx = append(s.metaIdx, i)
	}
	if len(opts.MetaFields) > 0 {
		s.meta = make(map[string]string, len(opts.MetaFields))
	}
	return s, nil
}

// openParquet opens the footer and schema, turning a library panic on a
// corrupt file into an error.
func openParquet(o *opened, size int64) (f *parquet.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("corrupt parquet file: %v", p)
		}
	}()
	return parquet.OpenFile(o.file, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
}

func (s *parquetSource) closeCursors() {
	for _, c := range append([]*colCursor{s.text, s.id}, s.metas...) {
		if c != nil {
			c.close()
		}
	}
	s.text, s.id, s.metas = nil, nil, s.metas[:0]
}

func (s *parquetSource) close() error {
	s.closeCursors()
	if s.total != nil {
		// The file was read through ReadAt: count it whole, once.
		s.total.Add(s.size - s.o.cr.local)
		s.total = nil
	}
	return s.o.close()
}

func (s *parquetSource) next(d *Document) (err error) {
	defer func() {
		if p := recover(); p != nil {
			e := s.o.errAt(s.row, -1, ReasonParquet, fmt.Errorf("corrupt parquet data: %v", p))
			e.stop = true
			err = e
		}
	}()
	for s.rowsLeft == 0 {
		s.closeCursors()
		if s.rg >= len(s.rgs) {
			return io.EOF
		}
		rg := s.rgs[s.rg]
		s.rg++
		s.rowsLeft = rg.NumRows()
		chunks := rg.ColumnChunks()
		open := func(i int) *colCursor {
			if i < 0 || i >= len(chunks) {
				return nil
			}
			return &colCursor{pages: chunks[i].Pages(), buf: make([]parquet.Value, 64)}
		}
		s.text, s.id = open(s.textIdx), open(s.idIdx)
		for _, i := range s.metaIdx {
			s.metas = append(s.metas, open(i))
		}
	}
	s.rowsLeft--
	s.row++
	fail := func(err error) error {
		e := s.o.errAt(s.row, -1, ReasonParquet, err)
		e.stop = true
		return e
	}
	// Advance every cursor for this row before deciding anything, so that
	// the columns stay aligned after a rejected row.
	tv, err := s.text.next()
	if err != nil {
		return fail(err)
	}
	var idv parquet.Value
	if s.id != nil {
		if idv, err = s.id.next(); err != nil {
			return fail(err)
		}
	}
	if s.meta != nil {
		clear(s.meta)
	}
	for i, c := range s.metas {
		if c == nil {
			continue
		}
		v, err := c.next()
		if err != nil {
			return fail(err)
		}
		if !v.IsNull() {
			s.meta[s.opts.MetaFields[i]] = v.String()
		}
	}
	if tv.IsNull() {
		return s.o.errAt(s.row, -1, ReasonMissingText, fmt.Errorf("column %q is null", s.opts.ParquetTextColumn))
	}
	text := tv.ByteArray()
	if int64(len(text)) > s.opts.MaxRecordBytes {
		return s.o.errAt(s.row, -1, ReasonTooLarge, fmt.Errorf("text of %d bytes is over the %d-byte cap", len(text), s.opts.MaxRecordBytes))
	}
	s.body = append(s.body[:0], text...)
	if s.id != nil && !idv.IsNull() {
		d.ID = idv.String()
	} else {
		d.ID = s.o.in.path + ":" + strconv.FormatInt(s.row, 10)
	}
	if len(s.meta) > 0 {
		d.Meta = s.meta
	}
	d.Body = s.body
	d.Source = s.o.in.path
	d.Name = s.o.in.name
	d.Line = s.row
	d.Format = FormatParquet
	return nil
}

// colCursor yields the values of one column chunk, one page at a time.
type colCursor struct {
	pages parquet.Pages
	page  parquet.Page
	vals  parquet.ValueReader
	buf   []parquet.Value
	i, n  int
}

var errShortColumn = errors.New("column has fewer values than the row group has rows")

func (c *colCursor) next() (parquet.Value, error) {
	for c.i >= c.n {
		if c.vals == nil {
			if c.page != nil {
				parquet.Release(c.page)
				c.page = nil
			}
			p, err := c.pages.ReadPage()
			if err == io.EOF {
				return parquet.Value{}, errShortColumn
			}
			if err != nil {
				return parquet.Value{}, err
			}
			c.page, c.vals = p, p.Values()
		}
		n, err := c.vals.ReadValues(c.buf)
		c.i, c.n = 0, n
		if err == io.EOF || (n == 0 && err == nil) {
			c.vals = nil
		} else if err != nil {
			return parquet.Value{}, err
		}
	}
	v := c.buf[c.i]
	c.i++
	return v, nil
}

func (c *colCursor) close() {
	c.pages.Close()
	c.page, c.vals = nil, nil
}
