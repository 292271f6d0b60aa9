package corpus

import (
	"bufio"
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
// byte, so a filtered JSONL corpus keeps every field it had. Any other
// document becomes {"id":ID,"text":Body,"meta":{...}} (meta keys sorted,
// left out when empty), which a Reader with default Options reads back.
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

// MirrorWriter writes documents under a directory in the format they were
// read in, so that a deduplicated corpus looks like its input: each
// document goes to Dir/Document.Name, with the same compression as its
// input.
//
//   - JSONL: the original line (Raw), so every field survives.
//   - WARC: the record copied verbatim (Raw plus CRLF CRLF). Only the
//     records that are documents are copied; warcinfo, request and
//     metadata records are not.
//   - HTML and text files: the file's original bytes (Raw), one file per
//     document.
//   - Parquet: JSONL lines {"id","text","meta"} in Dir/Name + ".jsonl".
//     Writing Parquet back would need every column of every kept row, but
//     the Reader decodes only the id, text and meta columns; JSONL keeps
//     what was read without that cost.
//
// Documents from standard input go to Dir/stdin.<format>. An output file
// is created (truncated) the first time a Name is written in the life of
// the MirrorWriter and appended to after that; the Reader yields the
// documents of one input together, so one output is open at a time.
//
// The zero value is not usable; call NewMirrorWriter. Not safe for
// concurrent use. Close must be called to flush the last output.
type MirrorWriter struct {
	dir     string
	created map[string]bool
	cur     string // name of the open output
	f       *os.File
	bw      *bufio.Writer
	zw      io.WriteCloser // compressor over bw, or nil
	w       io.Writer      // where records go
	jsonl   *JSONLWriter
	line    []byte
	closed  bool
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
	if d.Format == FormatParquet {
		name += ".jsonl"
	}
	return name
}

// Write writes d to its output file.
func (m *MirrorWriter) Write(d *Document) error {
	if m.closed {
		return ErrClosed
	}
	name := outputName(d)
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("corpus: mirror: output name %q leaves the directory", name)
	}
	whole := d.Format == FormatHTML || d.Format == FormatText
	if name != m.cur || whole {
		if err := m.switchTo(name, d.Compression); err != nil {
			return err
		}
	}
	var err error
	switch d.Format {
	case FormatJSONL, FormatParquet:
		m.line = m.jsonl.AppendLine(m.line[:0], d)
		_, err = m.w.Write(m.line)
	case FormatWARC:
		if _, err = m.w.Write(d.Raw); err == nil {
			_, err = m.w.Write(crlfcrlf)
		}
	default:
		_, err = m.w.Write(d.Raw)
	}
	if err == nil && whole {
		err = m.closeCurrent()
	}
	if err != nil {
		return fmt.Errorf("corpus: mirror: %s: %w", name, err)
	}
	return nil
}

func (m *MirrorWriter) switchTo(name string, comp Compression) error {
	if err := m.closeCurrent(); err != nil {
		return err
	}
	path := filepath.Join(m.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("corpus: mirror: %w", err)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if m.created[name] {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return fmt.Errorf("corpus: mirror: %w", err)
	}
	m.created[name] = true
	m.cur, m.f = name, f
	if m.bw == nil {
		m.bw = bufio.NewWriterSize(f, 64<<10)
	} else {
		m.bw.Reset(f)
	}
	m.w, m.zw = m.bw, nil
	switch comp {
	case CompressionGzip:
		m.zw = gzip.NewWriter(m.bw)
	case CompressionZstd:
		zw, err := zstd.NewWriter(m.bw, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return fmt.Errorf("corpus: mirror: %w", err)
		}
		m.zw = zw
	}
	if m.zw != nil {
		m.w = m.zw
	}
	return nil
}

func (m *MirrorWriter) closeCurrent() error {
	if m.f == nil {
		return nil
	}
	var errs []error
	if m.zw != nil {
		errs = append(errs, m.zw.Close())
	}
	errs = append(errs, m.bw.Flush(), m.f.Close())
	m.f, m.zw, m.w, m.cur = nil, nil, nil, ""
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("corpus: mirror: %w", err)
	}
	return nil
}

// Close flushes and closes the open output.
func (m *MirrorWriter) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	return m.closeCurrent()
}
