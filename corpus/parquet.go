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
//
// Sizes the file claims are checked before parquet-go allocates for them
// (pqcheck.go): the footer when the file is opened, the pages of the
// columns read when a row group is entered. A row group that fails the
// checks, or whose pages turn out corrupt while it is read, rejects its
// rows (all of them, or those from the bad page on) with one RecordError
// that counts them, and reading goes on with the next row group.
type parquetSource struct {
	o     *opened
	opts  *Options
	size  int64
	total *atomic.Int64

	file     *parquet.File
	check    chunkChecker
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

func newParquetSource(o *opened, opts *Options, size int64, total *atomic.Int64) (src source, rerr *RecordError) {
	fail := func(reason string, err error) (source, *RecordError) {
		o.close()
		return nil, o.errAt(0, -1, reason, err)
	}
	defer func() {
		if p := recover(); p != nil {
			src, rerr = fail(ReasonParquet, fmt.Errorf("corrupt parquet schema: %v", p))
		}
	}()
	lim := newPQLimits(opts.MaxRecordBytes)
	footer, err := checkParquetFooter(o.file, size, lim)
	if err != nil {
		return fail(parquetReason(err), err)
	}
	f, err := openParquet(o, size)
	if err != nil {
		return fail(ReasonParquet, err)
	}
	if err := checkParquetMeta(f.Metadata()); err != nil {
		return fail(ReasonParquet, fmt.Errorf("corrupt footer: %w", err))
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
	s := &parquetSource{o: o, opts: opts, size: size, total: total, file: f, rgs: f.RowGroups()}
	s.check = chunkChecker{r: o.file, dataEnd: size - 8 - footer, lim: lim}
	if s.textIdx, err = leaf(opts.ParquetTextColumn); err != nil {
		return fail(ReasonParquet, err)
	}
	if s.textIdx < 0 {
		cols := columnNames(schema)
		_, e := fail(ReasonMissingText, fmt.Errorf("no column %q; the file has: %s", opts.ParquetTextColumn, fieldList(cols)))
		e.Fields = cols
		return nil, e
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

// parquetReason is the rejection reason of a failed footer check.
func parquetReason(err error) string {
	var ie *ioError
	if errors.As(err, &ie) {
		return ReasonReadError
	}
	if strings.Contains(err.Error(), "-byte cap") {
		return ReasonTooLarge
	}
	return ReasonParquet
}

// columnNames returns the dotted paths of the leaf columns of a schema, at
// most 32 of them.
func columnNames(schema *parquet.Schema) []string {
	var names []string
	for _, path := range schema.Columns() {
		if len(names) == maxFieldNames {
			break
		}
		names = append(names, strings.Join(path, "."))
	}
	return names
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

// rejectRows rejects the rows of the current row group from the current
// one on (n of them) and moves on to the next row group.
func (s *parquetSource) rejectRows(n int64, err error) *RecordError {
	s.closeCursors()
	e := s.o.errAt(s.row, -1, ReasonParquet, err)
	e.Count = n
	s.row += n - 1
	s.rowsLeft = 0
	return e
}

// enter opens the cursors of row group s.rg after checking the column
// chunks they read. It returns a rejection of the group's rows if the
// checks fail.
func (s *parquetSource) enter() (err error) {
	rg := s.rgs[s.rg]
	idx := s.rg
	s.rg++
	s.rowsLeft = rg.NumRows()
	if s.rowsLeft == 0 {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			s.row++
			err = s.rejectRows(s.rowsLeft, fmt.Errorf("row group %d: corrupt parquet data: %v", idx, p))
		}
	}()
	md := &s.file.Metadata().RowGroups[idx]
	cols := append([]int{s.textIdx, s.idIdx}, s.metaIdx...)
	for _, i := range cols {
		if i < 0 {
			continue
		}
		if i >= len(md.Columns) {
			s.row++
			return s.rejectRows(s.rowsLeft, fmt.Errorf("row group %d has %d columns, not %d", idx, len(md.Columns), i+1))
		}
		if err := s.check.chunk(&md.Columns[i], md.NumRows, true); err != nil {
			s.row++
			return s.rejectRows(s.rowsLeft, fmt.Errorf("row group %d, column %q: %w", idx, strings.Join(md.Columns[i].MetaData.PathInSchema, "."), err))
		}
	}
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
	return nil
}

func (s *parquetSource) next(d *Document) (err error) {
	for s.rowsLeft == 0 {
		s.closeCursors()
		if s.rg >= len(s.rgs) {
			return io.EOF
		}
		if err := s.enter(); err != nil {
			return err
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = s.rejectRows(s.rowsLeft+1, fmt.Errorf("row group %d: corrupt parquet data: %v", s.rg-1, p))
		}
	}()
	s.rowsLeft--
	s.row++
	fail := func(err error) error {
		return s.rejectRows(s.rowsLeft+1, fmt.Errorf("row group %d: %w", s.rg-1, err))
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
	id, hasID := "", s.id != nil && !idv.IsNull()
	if hasID {
		id = idv.String()
	}
	if tv.IsNull() {
		e := s.o.errAt(s.row, -1, ReasonMissingText, fmt.Errorf("column %q is null", s.opts.ParquetTextColumn))
		e.ID = id
		return e
	}
	text := tv.ByteArray()
	if int64(len(text)) > s.opts.MaxRecordBytes {
		e := s.o.errAt(s.row, -1, ReasonTooLarge, fmt.Errorf("text of %d bytes is over the %d-byte cap", len(text), s.opts.MaxRecordBytes))
		e.ID = id
		return e
	}
	s.body = append(s.body[:0], text...)
	if hasID {
		d.ID = id
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
