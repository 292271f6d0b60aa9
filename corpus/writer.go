package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Writer writes Documents. Both writers of this package implement it.
type Writer interface {
	Write(d *Document) error
	Close() error
}

var (
	_ Writer = (*JSONLWriter)(nil)
	_ Writer = (*MirrorWriter)(nil)
)

// JSONLWriter writes one JSON object per line, streaming. A document read
// from JSONL is written as its original line (Document.Raw), byte for
// byte, and one read from a JSON document as its original object on one
// line (white space between tokens removed), so a filtered corpus keeps
// every field it had. Any other document becomes
// {"id":ID,"text":Body,"meta":{...}} (meta keys sorted, left out when
// empty), which a Reader with default Options reads back.
//
// The zero value is not usable; call NewJSONLWriter. Not safe for
// concurrent use. Write costs O(record size) and does not allocate in
// steady state.
type JSONLWriter struct {
	w      *bufio.Writer
	buf    []byte
	keys   []string
	closed bool
	// IDField and TextField name the fields written for documents that
	// are not JSONL lines. Defaults: "id" and "text".
	IDField, TextField string
}

// NewJSONLWriter returns a JSONLWriter writing to w. Close flushes it; it
// does not close w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	return &JSONLWriter{w: bufio.NewWriterSize(w, 64<<10), IDField: "id", TextField: "text"}
}

// Write writes d as one line.
func (w *JSONLWriter) Write(d *Document) error {
	if w.closed {
		return ErrClosed
	}
	w.buf = w.AppendLine(w.buf[:0], d)
	_, err := w.w.Write(w.buf)
	return err
}

// AppendLine appends the line Write would write for d, with its '\n'.
func (w *JSONLWriter) AppendLine(dst []byte, d *Document) []byte {
	if d.Format == FormatJSONL && d.Raw != nil {
		return append(append(dst, d.Raw...), '\n')
	}
	if d.Format == FormatJSON && d.Raw != nil {
		// A JSON record may span lines: compacted, it keeps every field.
		var b bytes.Buffer
		if json.Compact(&b, d.Raw) == nil {
			return append(append(dst, b.Bytes()...), '\n')
		}
	}
	dst = append(dst, '{')
	dst = appendJSONString(dst, w.IDField)
	dst = append(dst, ':')
	dst = appendJSONString(dst, d.ID)
	dst = append(dst, ',')
	dst = appendJSONString(dst, w.TextField)
	dst = append(dst, ':')
	dst = appendJSONString(dst, d.Body)
	if len(d.Meta) > 0 {
		w.keys = w.keys[:0]
		for k := range d.Meta {
			w.keys = append(w.keys, k)
		}
		slices.Sort(w.keys)
		dst = append(dst, `,"meta":{`...)
		for i, k := range w.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSONString(dst, d.Meta[k])
		}
		dst = append(dst, '}')
	}
	return append(dst, '}', '\n')
}

// Flush writes buffered lines to the underlying writer.
func (w *JSONLWriter) Flush() error { return w.w.Flush() }

// Close flushes the writer. Later Writes fail with ErrClosed.
func (w *JSONLWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.w.Flush()
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// \ufffd, control characters are escaped.
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		var r rune
		var size int
		switch v := any(s).(type) {
		case string:
			r, size = utf8.DecodeRuneInString(v[i:])
		case []byte:
			r, size = utf8.DecodeRune(v[i:])
		}
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// FilterWriter is a Writer that is also told what a filter leaves out, so
// that it can keep or drop the records that belong to each document:
// MirrorWriter, for WARC. CopyKept drives it.
type FilterWriter interface {
	Writer
	// Drop is called for a document that is not kept, in input order
	// with Write.
	Drop(d *Document) error
	// Companion is called, in input order, for a record of an input that
	// is not a document (Options.OnSkip): a WARC warcinfo, request,
	// metadata or revisit record, or a response whose payload is not
	// text. Its Raw holds the record.
	Companion(d *Document) error
}

var _ FilterWriter = (*MirrorWriter)(nil)

// MirrorWriter writes documents under a directory in the format they were
// read in, so that a deduplicated corpus looks like its input: each
// document goes to Dir/Document.Name (the input's path relative to the
// common root of the inputs) with the same compression as its input.
//
//   - JSONL: the original line (Raw), so every field survives.
//   - JSON: the original objects (Raw); the kept elements of an array are
//     written as an array, top-level objects one per line.
//   - Parquet: the kept rows, every column, in a Parquet file with the
//     input's schema, key-value metadata and compression codec. The rows
//     are copied from the input file (Document.Source, Document.Line), so
//     it must still be there when Write is called.
//   - HTML and text files: the file's original bytes (Raw), one file per
//     document.
//   - WARC: the kept records verbatim (Raw plus CRLF CRLF); a gzipped WARC
//     is written with one gzip member per record, as the WARC standard
//     recommends. With Write alone only the documents (responses and
//     resources) are written. Used as a FilterWriter (see CopyKept), it
//     also writes the records that belong to kept documents and drops
//     those that belong to dropped ones: a request or metadata record
//     follows the record its WARC-Concurrent-To (or WARC-Refers-To)
//     names, or, lacking one, the capture of its WARC-Target-URI (a
//     metadata record the one just before it, a request the next one); a
//     warcinfo record is written when a kept record after it names it in
//     WARC-Warcinfo-ID or names none; records that belong to no document
//     (images, revisits, records without links) are written. Records wait
//     for their owner in memory, at most 256 records or 64 MiB, after
//     which the oldest is written.
//
// Documents from standard input go to Dir/stdin.<format>. An output file
// is created (truncated) the first time something is written to a Name in
// the life of the MirrorWriter and appended to after that (a Parquet
// output cannot be appended to: that is an error; a JSON array written in
// two parts becomes two arrays); the Reader yields the documents of one
// input together, so one output is open at a time. No output is created
// for an input of which nothing is kept.
//
// The zero value is not usable; call NewMirrorWriter. Not safe for
// concurrent use. Close must be called to flush the last output.
type MirrorWriter struct {
	dir     string
	created map[string]bool
	cur     string // name of the current output
	curComp Compression
	f       *os.File // the open output, nil until a byte is written
	bw      *bufio.Writer
	zw      io.WriteCloser // compressor over bw, or nil
	w       io.Writer      // where records go
	gzrec   *gzip.Writer   // per-record gzip members of a WARC output
	jsonl   *JSONLWriter
	line    []byte
	closed  bool

	json struct{ open, inArray bool } // state of a JSON output
	warc *warcFilter                  // state of a WARC output, nil for others
	pq   *pqCopier                    // state of a Parquet output, nil for others
}

// NewMirrorWriter returns a MirrorWriter writing under dir, which is
// created if needed.
func NewMirrorWriter(dir string) (*MirrorWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("corpus: mirror: %w", err)
	}
	return &MirrorWriter{dir: dir, created: map[string]bool{}, jsonl: &JSONLWriter{IDField: "id", TextField: "text"}}, nil
}

// outputName is where d goes under the directory.
func outputName(d *Document) string {
	name := d.Name
	if name == "" || name == "stdin" {
		name = "stdin." + d.Format.String()
	}
	return name
}

// Write writes d to its output file.
func (m *MirrorWriter) Write(d *Document) error {
	return m.record(d, actWrite)
}

// Drop tells the writer that d is not kept: nothing of it is written, nor
// (for WARC) the records that belong to it.
func (m *MirrorWriter) Drop(d *Document) error {
	return m.record(d, actDrop)
}

// Companion gives the writer a WARC record that is not a document (see
// FilterWriter); it is written if it belongs to a kept document or to none.
// Companions of other formats are ignored.
func (m *MirrorWriter) Companion(d *Document) error {
	return m.record(d, actCompanion)
}

type action int

const (
	actWrite action = iota
	actDrop
	actCompanion
)

func (m *MirrorWriter) record(d *Document, act action) error {
	if m.closed {
		return ErrClosed
	}
	name := outputName(d)
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("corpus: mirror: output name %q leaves the directory", name)
	}
	whole := d.Format == FormatHTML || d.Format == FormatText
	if act != actWrite && d.Format != FormatWARC {
		return nil
	}
	if name != m.cur || whole {
		if err := m.finish(); err != nil {
			return err
		}
		m.cur, m.curComp = name, d.Compression
		if d.Format == FormatWARC {
			m.warc = newWARCFilter(m.writeWARC)
		}
	}
	var err error
	switch d.Format {
	case FormatJSONL:
		m.line = m.jsonl.AppendLine(m.line[:0], d)
		err = m.write(m.line)
	case FormatJSON:
		err = m.writeJSON(d)
	case FormatParquet:
		err = m.writeParquet(d)
	case FormatWARC:
		switch act {
		case actWrite, actDrop:
			err = m.warc.doc(d, act == actWrite)
		case actCompanion:
			err = m.warc.companion(d)
		}
	default:
		if err = m.write(d.Raw); err == nil {
			err = m.finish()
		}
	}
	if err != nil {
		return fmt.Errorf("corpus: mirror: %s: %w", name, err)
	}
	return nil
}

// write writes b to the current output, opening it first if needed.
func (m *MirrorWriter) write(b []byte) error {
	if m.f == nil {
		if err := m.open(); err != nil {
			return err
		}
	}
	_, err := m.w.Write(b)
	return err
}

// open creates (or reopens for appending) the file of the current output.
func (m *MirrorWriter) open() error {
	name := m.cur
	path := filepath.Join(m.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if m.created[name] {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return err
	}
	m.created[name] = true
	m.f = f
	if m.bw == nil {
		m.bw = bufio.NewWriterSize(f, 64<<10)
	} else {
		m.bw.Reset(f)
	}
	m.w, m.zw = m.bw, nil
	switch m.curComp {
	case CompressionGzip:
		if m.warc == nil {
			m.zw = gzip.NewWriter(m.bw)
		}
	case CompressionZstd:
		// zstd's fastest level: the kept corpus of a large stream is most of
		// what the run writes, and the default level took 2.1 CPU-s for the
		// 213 MB kept of 100,000 documents of 300 words (1.5 s at the
		// fastest, for 6% more bytes). Frames of 1 MiB encoded on every
		// core (zstdFrames), with a window of 1 MiB in the encoder's
		// lower-memory mode: the kept corpus of 1M generated documents of
		// 200 words took 533.1 MB, against 528.4 MB as one stream.
		zw, err := newZstdFrames(m.bw, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return err
		}
		m.zw = zw
	}
	if m.zw != nil {
		m.w = m.zw
	}
	return nil
}

// writeWARC writes one WARC record (without its trailing CRLF CRLF); a
// gzipped output gets one gzip member per record.
func (m *MirrorWriter) writeWARC(raw []byte) error {
	if m.f == nil {
		if err := m.open(); err != nil {
			return err
		}
	}
	if m.curComp != CompressionGzip {
		if _, err := m.w.Write(raw); err != nil {
			return err
		}
		_, err := m.w.Write(crlfcrlf)
		return err
	}
	if m.gzrec == nil {
		m.gzrec = gzip.NewWriter(m.bw)
	} else {
		m.gzrec.Reset(m.bw)
	}
	if _, err := m.gzrec.Write(raw); err != nil {
		return err
	}
	if _, err := m.gzrec.Write(crlfcrlf); err != nil {
		return err
	}
	return m.gzrec.Close()
}

// writeJSON writes a JSON record, opening or closing an array as the
// input had them.
func (m *MirrorWriter) writeJSON(d *Document) error {
	var sep []byte
	switch {
	case d.inArray && !m.json.inArray:
		sep = []byte("[\n")
		m.json.inArray = true
	case d.inArray:
		sep = []byte(",\n")
	case m.json.inArray:
		sep = []byte("\n]\n")
		m.json.inArray = false
	}
	m.json.open = true
	if err := m.write(sep); err != nil {
		return err
	}
	if err := m.write(d.Raw); err != nil {
		return err
	}
	if !d.inArray {
		return m.write([]byte{'\n'})
	}
	return nil
}

// writeParquet copies the row of d from its input file.
func (m *MirrorWriter) writeParquet(d *Document) error {
	if m.pq == nil {
		if m.created[m.cur] {
			return errors.New("a Parquet output cannot be appended to (its documents were not written together)")
		}
		if err := m.open(); err != nil {
			return err
		}
		pq, err := newPQCopier(d.Source, m.w)
		if err != nil {
			return err
		}
		m.pq = pq
	}
	return m.pq.copyRow(d.Line)
}

// finish ends the current output: pending WARC records, the end of a JSON
// array, the Parquet footer, the compressor and the file.
func (m *MirrorWriter) finish() error {
	var errs []error
	if m.warc != nil {
		errs = append(errs, m.warc.finish())
		m.warc = nil
	}
	if m.json.inArray {
		errs = append(errs, m.write([]byte("\n]\n")))
	}
	m.json.open, m.json.inArray = false, false
	if m.pq != nil {
		errs = append(errs, m.pq.close())
		m.pq = nil
	}
	if m.f != nil {
		if m.zw != nil {
			errs = append(errs, m.zw.Close())
		}
		errs = append(errs, m.bw.Flush(), m.f.Close())
		m.f, m.zw, m.w = nil, nil, nil
	}
	m.cur = ""
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("corpus: mirror: %w", err)
	}
	return nil
}

// Close writes what is pending and closes the open output.
func (m *MirrorWriter) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	return m.finish()
}
