// Package corpus provides streaming readers and writers for the document
// collections neardup works on: single files, directory trees, JSONL, JSON,
// WARC and Parquet, each optionally gzip- or zstd-compressed, and standard
// input. A Reader turns any mix of these into one stream of Documents {ID,
// Body, Meta}, holding at most one record in memory at a time, so a
// multi-gigabyte JSONL.zst or a Common Crawl WARC.gz reads in constant
// memory.
//
// This is the first stage of the pipeline of "Efficient Determination of
// Most Near Neighbors" (Manasse; chapter 2: corpora "contain billions of
// pages and petabytes of content", hence streaming; section 2.1 builds
// features from the page's HTML, hence Body keeps the markup and
// Document.HTML says so). Bad input never stops a run and is never
// silent: a bad JSON line, a truncated compressed stream, a WARC record
// whose Content-Length is wrong, a record over the size cap, a corrupt
// Parquet page, an unreadable file — each becomes a *RecordError naming
// the file, the record's id when known, its line or byte offset and the
// reason, is passed to Options.OnReject, skipped and counted, and the
// reader goes on. Stats always satisfies Read == Yielded + Rejected, with
// Rejected broken down by reason. Sizes that an input claims (a WARC
// Content-Length, a Parquet footer or page) are checked against the
// record cap and the file before anything is allocated for them.
//
// # Formats
//
// Options.Format picks the container format of every input, or FormatAuto
// detects it per input (magic bytes, then extension, then content; see
// Options.Format). A file found by walking a directory is a container
// (JSONL, JSON, WARC, Parquet) only when its magic bytes or extension say
// so; any other walked file is one document, so a source tree reads as
// one document per file. FormatFile reads every input as one document.
// A .json file is a JSON document — one object, an array of objects, or
// objects one after another — whose objects are records; .jsonl and
// .ndjson hold one object per line.
//
// # Output inside an input
//
// Options.ExcludePaths names paths that a directory walk skips, so that a
// command whose output directory lies inside an input directory passes it
// there and never reads its own output (or an earlier run's) back.
//
// # Ids of files
//
// A document read from a whole file (HTML, text, or any file with Format
// FormatFile) is named by the file's path relative to the common root of
// all inputs given to Open: the deepest directory that holds every input,
// where an input directory counts as itself and an input file as its
// parent (paths are compared after filepath.Abs, lexically, without
// resolving symbolic links; standard input does not count). So one
// directory gives ids relative to it ("sub/page.html"), one file gives its
// base name, and Open([]string{"crawl1", "crawl2"}) with crawl1/page.html
// and crawl2/page.html gives "crawl1/page.html" and "crawl2/page.html":
// distinct inputs never share an id or an output name (Document.Name is
// the same relative path). The same file given twice yields two documents
// with one id; a consumer that needs unique ids must reject the second.
//
// # Character sets
//
// Body is always UTF-8. HTML in another encoding is decoded here (the
// HTML-to-text conversion of package feature reads UTF-8 only): the
// encoding comes from a byte order mark, the HTTP Content-Type of a WARC
// response, a <meta charset> or http-equiv in the page, or the web's
// default windows-1252, as golang.org/x/net/html/charset determines it;
// Document.Charset says what was decoded. See charset.go for the details
// (valid UTF-8 is kept even when it declares otherwise).
//
// # Writers
//
// Writers (JSONLWriter, MirrorWriter) write kept documents back out, in
// the input's own format with every field, from the raw record bytes
// (Document.Raw) that every document carries: we keep the bytes rather
// than an offset to re-read because inputs may be compressed or standard
// input, where re-reading is impossible or costly, and the bytes are in
// memory anyway while the record is current. Parquet rows, which are
// columnar, are copied from the input file with its schema instead. A
// filter writes its output by streaming the inputs a second time and
// saying keep or drop per document number: CopyKept does that, and gives
// a FilterWriter the dropped documents and the records that are not
// documents too, so that MirrorWriter writes a WARC crawl's kept
// responses with their request, metadata and warcinfo records.
//
// The package is not a normalizer and not a parser of document contents:
// Body is the text field of a JSON record, the payload of a WARC response
// (HTTP header stripped) or the bytes of a file, untouched apart from
// character set decoding and the replacement of invalid UTF-8 (see
// Options.RejectInvalidUTF8). Turning it into visible text and features is
// package feature's job. It is not a WARC library either: it reads the
// records a deduplicator needs (response and resource records with HTML or
// plain-text payloads) and copies records verbatim; it does not write new
// WARC records or index them.
package corpus

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Errors returned by Open and the Reader. Errors about single records are
// *RecordError values (which wrap the underlying cause).
var (
	// ErrOptions reports invalid Options (a bad glob pattern, a negative
	// cap); Open wraps it with the details.
	ErrOptions = errors.New("corpus: invalid options")
	// ErrTooManyRejects stops a Reader once Options.MaxRejects records
	// have been rejected.
	ErrTooManyRejects = errors.New("corpus: too many rejected records")
	// ErrClosed is returned by Reader.Err after Close and by writers used
	// after Close.
	ErrClosed = errors.New("corpus: closed")
)

// Format is a container format of an input. The zero value, FormatAuto,
// asks for detection (see Options.Format).
type Format uint8

// Formats. The values are stable (they are appended, never renumbered).
const (
	FormatAuto    Format = iota // detect from contents and name
	FormatJSONL                 // one JSON object per line
	FormatWARC                  // WARC/1.0 or WARC/1.1 records
	FormatParquet               // Apache Parquet file
	FormatHTML                  // one HTML document per file
	FormatText                  // one plain-text document per file
	// FormatJSON is a JSON document: one object, an array of objects, or
	// several top-level objects one after another (so JSON Lines saved
	// as .json reads too); each object is a record.
	FormatJSON
	// FormatFile reads every input as one document, whatever its name or
	// contents (HTML when its name or first byte says so, else text);
	// Documents read so have Format FormatHTML or FormatText. Options
	// only: no Document has it.
	FormatFile
)

var formatNames = [...]string{"auto", "jsonl", "warc", "parquet", "html", "text", "json", "file"}

// String returns the lower-case name of f ("jsonl", "warc", ...).
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat parses a format name as printed by Format.String ("auto",
// "jsonl", "json", "text", "html", "warc", "parquet", "file"; "ndjson",
// "txt", "plain" and "htm" are accepted aliases). It is meant for
// command-line flags.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return FormatAuto, nil
	case "jsonl", "ndjson":
		return FormatJSONL, nil
	case "json":
		return FormatJSON, nil
	case "warc":
		return FormatWARC, nil
	case "parquet":
		return FormatParquet, nil
	case "html", "htm":
		return FormatHTML, nil
	case "text", "txt", "plain":
		return FormatText, nil
	case "file":
		return FormatFile, nil
	}
	return FormatAuto, fmt.Errorf("%w: unknown format %q (want auto, jsonl, json, text, html, warc, parquet or file)", ErrOptions, s)
}

// Compression is the compression of an input stream, detected from its
// magic bytes (gzip 1f 8b, zstd 28 b5 2f fd), never from its name.
type Compression uint8

// Compressions.
const (
	CompressionNone Compression = iota
	CompressionGzip
	CompressionZstd
)

// String returns "none", "gzip" or "zstd".
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionZstd:
		return "zstd"
	}
	return "compression(" + strconv.Itoa(int(c)) + ")"
}

// Document is one record of a corpus.
//
// A Document returned by Reader.Doc, and every slice and map it holds, is
// valid only until the next call to Reader.Next: the Reader reuses its
// buffers. Use Clone to keep one. The zero value is an empty document.
type Document struct {
	// ID names the document: the JSONL id field (or "<source>:<line>"
	// when the record has none), the WARC-Target-URI (or WARC-Record-ID),
	// the Parquet id column (or "<source>:<row>"), or for a whole file its
	// name: its path relative to the common root of the inputs (see
	// "Ids of files" in the package documentation), "-" for standard
	// input.
	ID string
	// Body is the document's text: the JSON text field (escapes
	// decoded), the WARC payload with the HTTP header stripped, the
	// Parquet text column, or the file's bytes. It is valid UTF-8: HTML
	// and text in another encoding is decoded (see Charset), and what is
	// still invalid is repaired or rejected (see Options.RejectInvalidUTF8).
	Body []byte
	// Charset is the name of the encoding Body was decoded from
	// ("windows-1252", "iso-8859-2", "utf-16le", ...; WHATWG names, so a
	// page declaring ISO-8859-1 says "windows-1252"), or "" when the input
	// was UTF-8 (or repaired as such). See the package documentation,
	// "Character sets".
	Charset string
	// HTML reports whether Body is HTML markup (HTML files, WARC payloads
	// of type text/html or application/xhtml+xml) rather than plain text.
	HTML bool
	// Meta holds the selected extra fields (Options.MetaFields for JSONL
	// and Parquet; for WARC the fixed keys "warc-record-id", "warc-date",
	// "warc-target-uri", "content-type", "http-status"). It is nil when
	// there are none.
	Meta map[string]string
	// Source is the path of the input file as walked ("-" for standard
	// input).
	Source string
	// Name is the input's path relative to the common root of all inputs
	// (slash-separated, never leaving it; the ID of a whole file), "stdin"
	// for standard input. MirrorWriter writes a document's output to Name
	// under its directory, so two inputs never share an output.
	Name string
	// Line is the 1-based line of a JSONL record, the line where a JSON
	// record starts, or the 1-based row of a Parquet record; 0 for other
	// formats.
	Line int64
	// Offset is the byte offset of the record's first byte in the
	// decompressed stream (JSONL line start, JSON object start, WARC
	// version line); 0 for whole files and Parquet rows.
	Offset int64
	// Format is the container format the document was read from
	// (never FormatAuto or FormatFile).
	Format Format
	// Compression is the compression of the input it was read from.
	Compression Compression
	// Raw is the record exactly as it was in the (decompressed) input, so
	// that writers can copy it verbatim: the JSONL line without its line
	// ending, the WARC record from the version line through the end of
	// its block (without the trailing CRLF CRLF), the file's bytes before
	// any UTF-8 repair or charset decoding; a JSON record's object. It is
	// nil for Parquet rows, whose records are columnar: MirrorWriter
	// copies them from the input file (Source, row Line).
	Raw []byte

	inArray bool // a JSON record that is an element of a top-level array
}

// Clone returns a deep copy of d that stays valid after the Reader moves on.
// It allocates one block for all byte slices plus the Meta map.
func (d *Document) Clone() *Document {
	c := *d
	buf := make([]byte, 0, len(d.Body)+len(d.Raw))
	if d.Raw != nil {
		buf = append(buf, d.Raw...)
		c.Raw = buf[:len(d.Raw):len(d.Raw)]
	}
	if d.Body != nil {
		start := len(buf)
		buf = append(buf, d.Body...)
		c.Body = buf[start:len(buf):len(buf)]
	}
	if d.Meta != nil {
		c.Meta = make(map[string]string, len(d.Meta))
		for k, v := range d.Meta {
			c.Meta[k] = v
		}
	}
	return &c
}

// Rejection and warning reasons: the keys of Stats.RejectedBy,
// Stats.WarningsBy and Stats.SkippedBy, and RecordError.Reason.
const (
	// ReasonOpen: a file or directory could not be opened or read
	// (missing, permission denied). Counts as one rejected record.
	ReasonOpen = "open"
	// ReasonReadError: an I/O error while reading an open file.
	ReasonReadError = "read-error"
	// ReasonTruncated: a compressed stream or a WARC block ended early.
	ReasonTruncated = "truncated"
	// ReasonCorrupt: a compressed stream is not valid gzip/zstd.
	ReasonCorrupt = "corrupt"
	// ReasonTooLarge: the record is over Options.MaxRecordBytes.
	ReasonTooLarge = "too-large"
	// ReasonBadJSON: a JSONL line or a JSON record is not a JSON object
	// (invalid JSON, another kind of value, bytes between records, a
	// value cut short by the end of the input).
	ReasonBadJSON = "bad-json"
	// ReasonMissingText: the record has no text field/column, or it is
	// null or not a string.
	ReasonMissingText = "missing-text"
	// ReasonInvalidUTF8: the body is not valid UTF-8. A warning (repaired
	// with U+FFFD) unless Options.RejectInvalidUTF8 makes it a rejection.
	ReasonInvalidUTF8 = "invalid-utf8"
	// ReasonWARCFraming: a WARC version line or header is malformed or
	// lacks a valid Content-Length; the reader resynchronizes on the
	// next "WARC/1." line.
	ReasonWARCFraming = "warc-framing"
	// ReasonWARCLength: a WARC block is not followed by CRLF CRLF, so its
	// Content-Length is wrong.
	ReasonWARCLength = "warc-length"
	// ReasonWARCTrailer: warning: the last WARC record of a stream lacks
	// its trailing CRLF CRLF.
	ReasonWARCTrailer = "warc-trailer"
	// ReasonHTTP: a WARC response whose HTTP header cannot be parsed, or
	// whose payload uses an unsupported Content-Encoding or chunking.
	ReasonHTTP = "http"
	// ReasonParquet: a Parquet file cannot be read (bad magic bytes, a
	// footer that claims more than the file holds or fails to decode, a
	// schema that does not fit: repeated id/text column), or a row group
	// fails the size checks or a page in it is corrupt: then its rows
	// from there on are rejected with one RecordError whose Count says
	// how many.
	ReasonParquet = "parquet"
	// ReasonUnsupported: an input that cannot be read in this form
	// (Parquet from standard input or inside gzip/zstd).
	ReasonUnsupported = "unsupported"

	// SkipSymlink: a symbolic link met during a directory walk (never
	// followed). Counted in Stats.SkippedBy, not a record.
	SkipSymlink = "symlink"
	// SkipNotRegular: a device, socket or pipe met during a walk.
	SkipNotRegular = "not-regular"
	// SkipWARCType: a WARC record that is not a document (warcinfo,
	// request, metadata, revisit, ...).
	SkipWARCType = "warc-type"
	// SkipWARCContent: a WARC response or resource whose payload is not
	// HTML or plain text (images, PDFs, ...).
	SkipWARCContent = "warc-content"
)

// RecordError describes one rejected (or, for warnings, repaired) record:
// where it is and why. Err is the underlying cause, if any.
type RecordError struct {
	// ID is the record's id when the reader got as far as reading it (the
	// JSON id field, the WARC-Target-URI or WARC-Record-ID, the Parquet id
	// column, a whole file's id); "" when unknown.
	ID string
	// Path is the input the record comes from, as walked ("-" for
	// standard input).
	Path string
	// Line is the 1-based line of a JSONL or JSON record, or the 1-based
	// row of a Parquet record (the first row when Count > 1); 0 when
	// lines do not apply.
	Line int64
	// Offset is the byte offset of the record's first byte in the
	// decompressed stream, -1 when unknown (Parquet rows).
	Offset int64
	// Reason is one of the Reason* constants.
	Reason string
	// Err is the underlying cause.
	Err error
	// Fields lists, for ReasonMissingText, the fields the record does
	// have: the keys of the JSON object (of the deepest object the
	// dotted path reached, with its prefix), or the columns of the
	// Parquet file; so that a command can say "no field "text"; the
	// record has: content, url". At most 32 names; nil otherwise.
	Fields []string
	// Count is the number of records this error rejects. It is 1 (or 0,
	// read as 1) except when a whole Parquet row group, or its rows from
	// a corrupt page on, are rejected at once: then Line is the first of
	// Count rows. Stats counts every one; use Records to read it.
	Count int64

	stop bool // the source cannot go on after this error
}

// maxFieldNames caps RecordError.Fields.
const maxFieldNames = 32

// Records returns the number of records e rejects: Count, or 1 when Count
// is 0.
func (e *RecordError) Records() int64 {
	if e.Count > 1 {
		return e.Count
	}
	return 1
}

// Error formats the error as "corpus: PATH:LINE: REASON: ERR" or
// "corpus: PATH@OFFSET: REASON: ERR", with " (N records)" after REASON
// when it rejects more than one.
func (e *RecordError) Error() string {
	var b strings.Builder
	b.WriteString("corpus: ")
	b.WriteString(e.Path)
	switch {
	case e.Line > 0:
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(e.Line, 10))
	case e.Offset >= 0:
		b.WriteByte('@')
		b.WriteString(strconv.FormatInt(e.Offset, 10))
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if n := e.Records(); n > 1 {
		b.WriteString(" (")
		b.WriteString(strconv.FormatInt(n, 10))
		b.WriteString(" records)")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *RecordError) Unwrap() error { return e.Err }

// Stats counts what a Reader has seen. Every record attempted is counted in
// Read (a RecordError that rejects several records, see RecordError.Count,
// counts each), and Read == Yielded + Rejected always holds; RejectedBy breaks
// Rejected down by reason (the Reason* constants) and sums to it.
// Warnings are records that were yielded after a repair (invalid UTF-8
// replaced). Skipped are things that are not candidate documents and so are
// not in Read: symlinks and special files met in a walk, WARC records that
// are not responses, non-text payloads.
//
// Bytes is the number of bytes consumed from the inputs so far, before
// decompression; compare it with Reader.TotalBytes for progress.
type Stats struct {
	Read, Yielded, Rejected int64
	RejectedBy              map[string]int64
	Warnings                int64
	WarningsBy              map[string]int64
	Skipped                 int64
	SkippedBy               map[string]int64
	Files                   int64 // inputs opened (files and stdin)
	Bytes                   int64
}

func (s *Stats) clone() Stats {
	c := *s
	c.RejectedBy = cloneCounts(s.RejectedBy)
	c.WarningsBy = cloneCounts(s.WarningsBy)
	c.SkippedBy = cloneCounts(s.SkippedBy)
	return c
}

func cloneCounts(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// String summarizes the stats on one line, reasons sorted by name.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "read %d, yielded %d, rejected %d", s.Read, s.Yielded, s.Rejected)
	writeCounts(&b, s.RejectedBy)
	if s.Warnings > 0 {
		fmt.Fprintf(&b, ", warnings %d", s.Warnings)
		writeCounts(&b, s.WarningsBy)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(&b, ", skipped %d", s.Skipped)
		writeCounts(&b, s.SkippedBy)
	}
	return b.String()
}

func writeCounts(b *strings.Builder, m map[string]int64) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteString(" (")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s %d", k, m[k])
	}
	b.WriteString(")")
}
