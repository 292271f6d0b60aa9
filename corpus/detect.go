package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

const bufSize = 64 << 10

var (
	magicGzip    = []byte{0x1f, 0x8b}
	magicZstd    = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicWARC    = []byte("WARC/1.")
	magicParquet = []byte("PAR1")
	bom          = []byte("\xef\xbb\xbf")
)

// countingReader counts consumed input bytes and marks errors of the
// underlying file as I/O errors, so that they are not mistaken for
// corrupt compressed data.
type countingReader struct {
	r     io.Reader
	total *atomic.Int64
	local int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.local += int64(n)
	c.total.Add(int64(n))
	if err != nil && err != io.EOF {
		err = &ioError{err}
	}
	return n, err
}

// ioError is an error of the underlying file (not of a decompressor).
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// classify maps a read error to a rejection reason.
func classify(err error) string {
	var ie *ioError
	switch {
	case errors.As(err, &ie):
		return ReasonReadError
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ReasonTruncated
	}
	return ReasonCorrupt
}

// opened is what every source gets: the input, its decompressed stream,
// and what to release at the end.
type opened struct {
	in    *input
	br    *bufio.Reader // decompressed stream
	comp  Compression
	file  *os.File // nil for stdin
	cr    *countingReader
	under io.Reader    // what br reads from
	async *asyncReader // the decompressing goroutine, or nil
	r     *Reader
}

func (o *opened) close() error {
	if o.async != nil {
		// Files answer reads at once: wait for the goroutine, then the
		// decompressor and the blocks can serve the next input. Standard
		// input may block forever: leave the goroutine to end after its
		// read, and give it the decompressor for good.
		wait := o.file != nil
		if blocks := o.async.stop(wait); wait {
			o.r.blocks = blocks
		} else if o.comp == CompressionGzip {
			o.r.gz = nil
		} else {
			o.r.zd = nil
		}
		o.async = nil
	}
	if o.file != nil {
		err := o.file.Close()
		o.file = nil
		return err
	}
	return nil
}

func (o *opened) errAt(line, off int64, reason string, err error) *RecordError {
	return &RecordError{Path: o.in.path, Line: line, Offset: off, Reason: reason, Err: err}
}

// open opens in, detects compression and format and returns its source.
func (r *Reader) open(in *input) (source, *RecordError) {
	o := &opened{in: in, r: r}
	var f io.Reader
	if in.stdin {
		f = r.opts.Stdin
	} else {
		file, err := os.Open(in.path)
		if err != nil {
			e := o.errAt(0, -1, ReasonOpen, err)
			e.ID = in.id
			return nil, e
		}
		o.file, f = file, file
	}
	o.cr = &countingReader{r: f, total: &r.bytes}
	raw := r.rawBR
	if raw == nil {
		raw = bufio.NewReaderSize(o.cr, bufSize)
		r.rawBR = raw
	} else {
		raw.Reset(o.cr)
	}
	fail := func(reason string, err error) (source, *RecordError) {
		o.close()
		e := o.errAt(0, 0, reason, err)
		e.ID = in.id
		return nil, e
	}
	head, err := raw.Peek(len(magicZstd))
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return fail(classify(err), err)
	}
	o.br, o.under = raw, o.cr
	switch {
	case bytes.HasPrefix(head, magicGzip):
		o.comp = CompressionGzip
		if r.gz == nil {
			r.gz, err = gzip.NewReader(raw)
		} else {
			err = r.gz.Reset(raw)
		}
		if err != nil {
			return fail(classify(err), fmt.Errorf("gzip: %w", err))
		}
		r.gz.Multistream(true)
		o.async = startAsync(r.gz, r.takeBlocks())
		o.br, o.under = r.innerBR(o.async), o.async
	case bytes.HasPrefix(head, magicZstd):
		o.comp = CompressionZstd
		if r.zd == nil {
			r.zd, err = zstd.NewReader(raw, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
		} else {
			err = r.zd.Reset(raw)
		}
		if err != nil {
			return fail(classify(err), fmt.Errorf("zstd: %w", err))
		}
		o.async = startAsync(r.zd, r.takeBlocks())
		o.br, o.under = r.innerBR(o.async), o.async
	}
	format := r.opts.Format
	if format == FormatAuto || format == FormatFile {
		// Errors of the decompressed stream show up again when the
		// source reads; detection uses whatever bytes arrived.
		head, _ := o.br.Peek(512)
		if format == FormatFile {
			format = detectWhole(head, in.path)
		} else {
			format = detect(head, in.path, in.walked)
		}
	}
	switch format {
	case FormatJSONL:
		return newJSONLSource(o, &r.opts), nil
	case FormatJSON:
		return newJSONSource(o, &r.opts), nil
	case FormatWARC:
		return newWARCSource(o, &r.opts), nil
	case FormatParquet:
		if o.file == nil || o.comp != CompressionNone {
			return fail(ReasonUnsupported, errors.New("parquet needs an uncompressed, seekable file (not standard input, gzip or zstd)"))
		}
		return newParquetSource(o, &r.opts, in.size, &r.bytes)
	default:
		return newFileSource(o, &r.opts, format, &r.filebuf), nil
	}
}

// maxZstdWindow is the largest zstd window the reader accepts, 128 MiB: the
// reference decoder's default limit (zstd --long=27), which every stream
// compressed without an explicit larger --long fits. It bounds the memory
// a crafted frame header can claim.
const maxZstdWindow = 128 << 20

// takeBlocks returns the blocks of the last decompressing goroutine for
// the next one (nil the first time).
func (r *Reader) takeBlocks() []*asyncBlock {
	b := r.blocks
	r.blocks = nil
	return b
}

// innerBR returns the Reader's reusable buffer over a decompressed stream.
func (r *Reader) innerBR(z io.Reader) *bufio.Reader {
	if r.decBR == nil {
		r.decBR = bufio.NewReaderSize(z, bufSize)
	} else {
		r.decBR.Reset(z)
	}
	return r.decBR
}

// detect picks the format of a (decompressed) stream from its first bytes
// and its name: magic bytes, then extension, then, for an input that was
// not found by walking a directory, a content sniff. A walked file that
// neither says is a whole document.
func detect(head []byte, path string, walked bool) Format {
	switch {
	case bytes.HasPrefix(head, magicWARC):
		return FormatWARC
	case bytes.HasPrefix(head, magicParquet):
		return FormatParquet
	}
	if f := formatFromName(path); f != FormatAuto {
		return f
	}
	if walked {
		return detectWhole(head, path)
	}
	if h := trimHead(head); len(h) > 0 && h[0] == '{' {
		return FormatJSONL
	}
	return detectWhole(head, path)
}

// detectWhole picks HTML or text for a file read as one document: HTML by
// extension or a first non-blank byte '<'.
func detectWhole(head []byte, path string) Format {
	if formatFromName(path) == FormatHTML {
		return FormatHTML
	}
	if h := trimHead(head); len(h) > 0 && h[0] == '<' {
		return FormatHTML
	}
	return FormatText
}

func trimHead(head []byte) []byte {
	head = bytes.TrimPrefix(head, bom)
	return bytes.TrimLeft(head, " \t\r\n")
}

// formatFromName maps a file extension (after .gz/.zst) to a format.
func formatFromName(path string) Format {
	name := strings.ToLower(filepath.Base(path))
	for _, ext := range []string{".gz", ".gzip", ".zst", ".zstd"} {
		name = strings.TrimSuffix(name, ext)
	}
	switch filepath.Ext(name) {
	case ".jsonl", ".ndjson":
		return FormatJSONL
	case ".json":
		return FormatJSON
	case ".warc":
		return FormatWARC
	case ".parquet", ".pq":
		return FormatParquet
	case ".html", ".htm", ".xhtml":
		return FormatHTML
	case ".txt", ".text", ".md":
		return FormatText
	}
	return FormatAuto
}
