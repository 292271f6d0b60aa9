package corpus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// Parquet limits. parquet-go trusts the sizes a file claims: it allocates a
// footer of the length the trailer states, a byte slice of every length a
// Thrift field states, a list of every size a list header states, a page of
// the size its header states, and a decompression buffer of the size a
// Snappy or Zstandard header states, each before reading the bytes that
// would back it. A 112-byte file can so ask for 2 GiB. The checks below
// run before parquet-go sees a footer or a column chunk and accept only
// claims that the bytes of the file can back:
//
//   - the footer fits in the file and in the footer cap, and walking its
//     Thrift encoding finds every string and list no longer than the bytes
//     left, nesting no deeper than maxThriftDepth, and an estimated decoded
//     size (list elements times the largest Go struct a list can hold)
//     within the footer's budget;
//   - every column chunk lies between the header magic and the footer;
//   - every page header of a chunk to be read decodes within the chunk, its
//     compressed size fits in what is left of the chunk, its uncompressed
//     size is within the page cap, its value count within maxPageValues and
//     the row group's rows, and its compressed bytes cannot expand past the
//     page cap (Snappy and Zstandard headers read, LZ4 and Brotli decoded
//     into a bounded buffer, Gzip bounded by the deflate ratio or decoded).
//
// What passes can still be corrupt (bad encodings, wrong checksums), but
// decoding it allocates at most a small multiple of the page cap.

const (
	maxThriftDepth = 32
	// thriftStructCost bounds the Go size of one decoded list element of
	// struct type (format.ColumnChunk, the largest, is 560 bytes).
	thriftStructCost = 640
	// thriftValueCost bounds the Go size of any other list element.
	thriftValueCost = 24
	// maxPageValues caps the values one page may claim (a decoded page
	// costs a few bytes per value for levels, offsets and indexes).
	maxPageValues = 1 << 22
	// deflateMaxRatio is the largest expansion of deflate (258-byte
	// matches coded in two bits, plus slack).
	deflateMaxRatio = 1032
	// zstdMaxBlock is the largest decoded Zstandard block.
	zstdMaxBlock = 128 << 10
)

var errThriftShort = errors.New("thrift value runs past the end of its bytes")

// thriftWalk checks a Thrift compact-protocol struct without decoding it.
type thriftWalk struct {
	b      []byte
	i      int
	depth  int
	cost   int64 // estimated bytes a decoder allocates
	budget int64
}

func (w *thriftWalk) byte1() (byte, error) {
	if w.i >= len(w.b) {
		return 0, errThriftShort
	}
	c := w.b[w.i]
	w.i++
	return c, nil
}

func (w *thriftWalk) varint() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c, err := w.byte1()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("thrift varint is over 10 bytes")
}

func (w *thriftWalk) skip(n uint64) error {
	if n > uint64(len(w.b)-w.i) {
		return errThriftShort
	}
	w.i += int(n)
	return nil
}

func (w *thriftWalk) charge(n uint64) error {
	w.cost += int64(min(n, 1<<40))
	if w.cost > w.budget {
		return fmt.Errorf("thrift data would decode to more than %d bytes", w.budget)
	}
	return nil
}

// structFields walks the fields of a struct up to its stop byte.
func (w *thriftWalk) structFields() error {
	if w.depth++; w.depth > maxThriftDepth {
		return fmt.Errorf("thrift structs nest deeper than %d", maxThriftDepth)
	}
	defer func() { w.depth-- }()
	for {
		h, err := w.byte1()
		if err != nil {
			return err
		}
		t := h & 0x0f
		if t == 0 {
			return nil
		}
		if h>>4 == 0 { // long form: the field id follows
			if _, err := w.varint(); err != nil {
				return err
			}
		}
		if t == 1 || t == 2 {
			continue // a boolean field carries its value in its type
		}
		if err := w.value(t); err != nil {
			return err
		}
	}
}

func (w *thriftWalk) value(t byte) error {
	switch t {
	case 1, 2, 3: // bool (in a list: one byte), byte
		return w.skip(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := w.varint()
		return err
	case 7: // double
		return w.skip(8)
	case 8: // binary
		n, err := w.varint()
		if err != nil {
			return err
		}
		if err := w.skip(n); err != nil {
			return err
		}
		return w.charge(n)
	case 9, 10: // list, set
		h, err := w.byte1()
		if err != nil {
			return err
		}
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = w.varint(); err != nil {
				return err
			}
		}
		// Every element takes at least one byte.
		if n > uint64(len(w.b)-w.i) {
			return errThriftShort
		}
		cost := uint64(thriftValueCost)
		if et == 12 {
			cost = thriftStructCost
		}
		if err := w.charge(n * cost); err != nil {
			return err
		}
		for range n {
			if err := w.value(et); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := w.varint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte1()
		if err != nil {
			return err
		}
		if n > uint64(len(w.b)-w.i)/2 {
			return errThriftShort
		}
		if err := w.charge(n * 2 * thriftStructCost); err != nil {
			return err
		}
		for range n {
			if err := w.value(kv >> 4); err != nil {
				return err
			}
			if err := w.value(kv & 0x0f); err != nil {
				return err
			}
		}
		return nil
	case 12:
		return w.structFields()
	case 13: // uuid
		return w.skip(16)
	}
	return fmt.Errorf("unknown thrift type %d", t)
}

// pqLimits are the caps of one parquetSource.
type pqLimits struct {
	footer int64 // largest footer
	page   int64 // largest page, compressed or not, and largest page header
}

func newPQLimits(maxRecord int64) pqLimits {
	// A page holds at least one value, which may be as large as a record;
	// allow 1 MiB for levels, offsets and headers beside it.
	page := maxRecord + 1<<20
	return pqLimits{footer: max(maxRecord, 16<<20), page: page}
}

// checkParquetFooter checks the trailer, magic bytes and footer of a
// Parquet file of the given size before parquet-go reads them. It returns
// the footer length.
func checkParquetFooter(r io.ReaderAt, size int64, lim pqLimits) (int64, error) {
	if size < 12 {
		return 0, fmt.Errorf("file of %d bytes is too short for parquet", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return 0, &ioError{err}
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return 0, &ioError{err}
	}
	switch {
	case string(tail[4:]) == "PARE":
		return 0, errors.New("parquet file has an encrypted footer (not supported)")
	case string(tail[4:]) != "PAR1" || string(head[:4]) != "PAR1":
		return 0, errors.New("no parquet magic bytes PAR1 at both ends")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return 0, fmt.Errorf("footer claims %d bytes, but the file has %d", n, size)
	}
	if n > lim.footer {
		return 0, fmt.Errorf("footer of %d bytes is over the %d-byte cap", n, lim.footer)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return 0, &ioError{err}
	}
	w := thriftWalk{b: footer, budget: max(64<<20, 16*n)}
	if err := w.structFields(); err != nil {
		if err == errThriftShort {
			err = errors.New("footer metadata runs past the end of the footer")
		}
		return 0, fmt.Errorf("corrupt footer: %w", err)
	}
	return n, nil
}

// checkParquetMeta checks the row counts of the footer: the rows of the
// row groups add up to the file's rows, and none is negative.
func checkParquetMeta(md *format.FileMetaData) error {
	var sum int64
	for i := range md.RowGroups {
		n := md.RowGroups[i].NumRows
		if n < 0 || sum+n < sum {
			return fmt.Errorf("row group %d claims %d rows", i, n)
		}
		sum += n
	}
	if sum != md.NumRows {
		return fmt.Errorf("row groups hold %d rows, the footer claims %d", sum, md.NumRows)
	}
	return nil
}

// chunkChecker checks column chunks before parquet-go reads them.
type chunkChecker struct {
	r       io.ReaderAt
	dataEnd int64 // first byte of the footer
	lim     pqLimits
	buf     []byte // page bytes (Zstandard, LZ4)
	out     []byte // LZ4 output
	hdr     []byte
	gz      *gzip.Reader
}

// chunk checks one column chunk of a row group of rows rows. A flat
// column (neither repeated nor nested in a repeated group) holds at most
// one value per row.
func (c *chunkChecker) chunk(cc *format.ColumnChunk, rows int64, flat bool) error {
	if cc.FilePath != "" {
		return fmt.Errorf("column chunk in another file %q (not supported)", cc.FilePath)
	}
	md := &cc.MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	if start < 4 || md.TotalCompressedSize < 0 || end < start || end > c.dataEnd {
		return fmt.Errorf("column chunk at %d of %d bytes lies outside the data of the file (bytes 4 to %d)", start, md.TotalCompressedSize, c.dataEnd)
	}
	switch md.Codec {
	case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
	default:
		return fmt.Errorf("compression codec %s is not supported", md.Codec)
	}
	maxValues := int64(maxPageValues)
	if flat {
		maxValues = min(maxValues, rows)
	}
	if md.NumValues < 0 || flat && md.NumValues > rows {
		return fmt.Errorf("column chunk claims %d values for %d rows", md.NumValues, rows)
	}
	var values int64
	for pos := start; pos < end && values < md.NumValues; {
		h, n, err := c.header(pos, end)
		if err != nil {
			return fmt.Errorf("page header at %d: %w", pos, err)
		}
		pos += n
		if err := c.page(&h, md.Codec, pos, end, maxValues); err != nil {
			return fmt.Errorf("page at %d: %w", pos, err)
		}
		switch h.Type {
		case format.DataPage:
			values += int64(h.DataPageHeader.V.NumValues)
		case format.DataPageV2:
			values += int64(h.DataPageHeaderV2.V.NumValues)
		}
		pos += int64(h.CompressedPageSize)
	}
	return nil
}

// header reads and checks the page header at pos, returning it and its
// encoded length.
func (c *chunkChecker) header(pos, end int64) (format.PageHeader, int64, error) {
	var h format.PageHeader
	avail := min(end-pos, c.lim.page)
	for n := min(avail, 256); ; n = min(avail, 4*n) {
		c.hdr = grow(c.hdr[:0], int(n))
		if _, err := c.r.ReadAt(c.hdr, pos); err != nil {
			return h, 0, &ioError{err}
		}
		w := thriftWalk{b: c.hdr, budget: c.lim.page}
		err := w.structFields()
		if err == errThriftShort && n < avail {
			continue
		}
		if err != nil {
			return h, 0, err
		}
		if err := thrift.Unmarshal(&thrift.CompactProtocol{}, c.hdr[:w.i], &h); err != nil {
			return h, 0, err
		}
		return h, int64(w.i), nil
	}
}

// page checks the sizes and counts of one page whose compressed bytes
// start at pos.
func (c *chunkChecker) page(h *format.PageHeader, codec format.CompressionCodec, pos, end, maxValues int64) error {
	comp, uncomp := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
	switch {
	case comp < 0 || uncomp < 0:
		return fmt.Errorf("negative page size (%d compressed, %d uncompressed)", comp, uncomp)
	case comp > end-pos:
		return fmt.Errorf("page of %d bytes runs past the end of its column chunk (%d bytes left)", comp, end-pos)
	case comp > c.lim.page || uncomp > c.lim.page:
		return fmt.Errorf("page of %d bytes (%d uncompressed) is over the %d-byte page cap", comp, uncomp, c.lim.page)
	}
	var nv int64
	skip := int64(0) // bytes of levels before the compressed values (v2)
	compressed := codec != format.Uncompressed
	switch h.Type {
	case format.DataPage:
		if !h.DataPageHeader.Valid {
			return errors.New("data page without its header")
		}
		nv = int64(h.DataPageHeader.V.NumValues)
	case format.DataPageV2:
		if !h.DataPageHeaderV2.Valid {
			return errors.New("data page v2 without its header")
		}
		v := &h.DataPageHeaderV2.V
		nv = int64(v.NumValues)
		if int64(v.NumRows) > maxValues || v.NumRows < 0 || v.NumNulls < 0 || v.NumNulls > v.NumValues {
			return fmt.Errorf("data page v2 claims %d rows, %d nulls, %d values", v.NumRows, v.NumNulls, v.NumValues)
		}
		skip = int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
		if v.RepetitionLevelsByteLength < 0 || v.DefinitionLevelsByteLength < 0 || skip > comp {
			return fmt.Errorf("data page v2 levels of %d and %d bytes in a page of %d", v.RepetitionLevelsByteLength, v.DefinitionLevelsByteLength, comp)
		}
		if v.IsCompressed.Valid && !v.IsCompressed.V {
			compressed = false
		}
	case format.DictionaryPage:
		if !h.DictionaryPageHeader.Valid {
			return errors.New("dictionary page without its header")
		}
		nv = int64(h.DictionaryPageHeader.V.NumValues)
		maxValues = maxPageValues
	case format.IndexPage:
		return nil
	default:
		return fmt.Errorf("unknown page type %d", h.Type)
	}
	if nv < 0 || nv > maxValues {
		return fmt.Errorf("page claims %d values (at most %d allowed here)", nv, maxValues)
	}
	if !compressed {
		return nil
	}
	return c.payload(codec, pos+skip, comp-skip, uncomp-skip)
}

// payload checks that the compressed bytes of a page cannot expand past
// the page cap when parquet-go decompresses them.
func (c *chunkChecker) payload(codec format.CompressionCodec, pos, n, uncomp int64) error {
	switch codec {
	case format.Snappy:
		var b [10]byte
		k := min(n, 10)
		if _, err := c.r.ReadAt(b[:k], pos); err != nil {
			return &ioError{err}
		}
		w := thriftWalk{b: b[:k]}
		size, err := w.varint()
		if err != nil {
			return errors.New("snappy block without its length")
		}
		if int64(size) > c.lim.page || size > uint64(max(uncomp, 0)) {
			return fmt.Errorf("snappy block claims %d bytes, the page %d", size, uncomp)
		}
	case format.Zstd:
		if err := c.read(pos, n); err != nil {
			return err
		}
		out, err := zstdBound(c.buf)
		if err != nil {
			return err
		}
		if out > c.lim.page {
			return fmt.Errorf("zstandard frames may decode to %d bytes, over the %d-byte page cap", out, c.lim.page)
		}
	case format.Lz4Raw:
		// parquet-go doubles its buffer until the block decodes, which
		// never ends for a corrupt block: decode it here, once.
		if err := c.read(pos, n); err != nil {
			return err
		}
		c.out = grow(c.out[:0], int(max(uncomp, 0)))
		if _, err := lz4.UncompressBlock(c.buf, c.out); err != nil {
			return fmt.Errorf("lz4 block is corrupt or larger than the %d bytes its page claims: %v", uncomp, err)
		}
	case format.Gzip:
		if n*deflateMaxRatio+(1<<10) <= c.lim.page {
			return nil
		}
		var err error
		sr := io.NewSectionReader(c.r, pos, n)
		if c.gz == nil {
			c.gz, err = gzip.NewReader(sr)
		} else {
			err = c.gz.Reset(sr)
		}
		if err != nil {
			return fmt.Errorf("gzip page: %w", err)
		}
		c.gz.Multistream(true)
		return c.bounded(c.gz)
	case format.Brotli:
		return c.bounded(brotli.NewReader(io.NewSectionReader(c.r, pos, n)))
	}
	return nil
}

// bounded decodes a stream to its end, failing past the page cap.
func (c *chunkChecker) bounded(r io.Reader) error {
	n, err := io.Copy(io.Discard, io.LimitReader(r, c.lim.page+1))
	if err != nil {
		return fmt.Errorf("compressed page: %w", err)
	}
	if n > c.lim.page {
		return fmt.Errorf("compressed page decodes to more than the %d-byte page cap", c.lim.page)
	}
	return nil
}

func (c *chunkChecker) read(pos, n int64) error {
	c.buf = grow(c.buf[:0], int(n))
	if _, err := c.r.ReadAt(c.buf, pos); err != nil {
		return &ioError{err}
	}
	return nil
}

// zstdBound returns an upper bound of the decoded size of the Zstandard
// frames in b (RFC 8878, section 3.1), from frame and block headers only:
// a frame's content size when it states one, else the sum of its blocks'
// largest outputs.
func zstdBound(b []byte) (int64, error) {
	var total int64
	for len(b) > 0 {
		if len(b) < 4 {
			return 0, errors.New("zstandard data ends inside a frame magic number")
		}
		magic := binary.LittleEndian.Uint32(b)
		if magic&0xfffffff0 == 0x184d2a50 { // skippable frame
			if len(b) < 8 {
				return 0, errors.New("zstandard skippable frame is truncated")
			}
			n := uint64(binary.LittleEndian.Uint32(b[4:]))
			if n > uint64(len(b)-8) {
				return 0, errors.New("zstandard skippable frame is truncated")
			}
			b = b[8+n:]
			continue
		}
		if magic != 0xfd2fb528 {
			return 0, fmt.Errorf("not a zstandard frame (magic %#x)", magic)
		}
		if len(b) < 5 {
			return 0, errors.New("zstandard frame header is truncated")
		}
		fhd := b[4]
		fcsFlag, single, checksum, dictFlag := fhd>>6, fhd>>5&1 == 1, fhd>>2&1 == 1, fhd&3
		i := 5
		if !single {
			i++ // window descriptor
		}
		i += [4]int{0, 1, 2, 4}[dictFlag]
		fcsLen := [4]int{0, 2, 4, 8}[fcsFlag]
		if fcsFlag == 0 && single {
			fcsLen = 1
		}
		if len(b) < i+fcsLen {
			return 0, errors.New("zstandard frame header is truncated")
		}
		fcs := int64(-1)
		switch fcsLen {
		case 1:
			fcs = int64(b[i])
		case 2:
			fcs = int64(binary.LittleEndian.Uint16(b[i:])) + 256
		case 4:
			fcs = int64(binary.LittleEndian.Uint32(b[i:]))
		case 8:
			v := binary.LittleEndian.Uint64(b[i:])
			fcs = int64(min(v, 1<<62))
		}
		i += fcsLen
		var blocks int64
		for {
			if len(b) < i+3 {
				return 0, errors.New("zstandard block header is truncated")
			}
			bh := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
			i += 3
			last, typ, size := bh&1 == 1, bh>>1&3, int(bh>>3)
			switch typ {
			case 0: // raw
				blocks += int64(size)
				i += size
			case 1: // RLE
				blocks += int64(size)
				i++
			case 2: // compressed
				blocks += zstdMaxBlock
				i += size
			default:
				return 0, errors.New("zstandard block of the reserved type")
			}
			if i > len(b) {
				return 0, errors.New("zstandard block is truncated")
			}
			if last {
				break
			}
		}
		if checksum {
			i += 4
		}
		if i > len(b) {
			return 0, errors.New("zstandard frame checksum is truncated")
		}
		// The decoder preallocates a stated content size; it decodes
		// what the blocks hold.
		total += max(fcs, blocks)
		if total > 1<<40 {
			return total, nil
		}
		b = b[i:]
	}
	return total, nil
}
