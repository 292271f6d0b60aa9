package corpus

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// DefaultMaxRecordBytes is the default record size cap, 64 MiB.
const DefaultMaxRecordBytes = 64 << 20

// Options configure a Reader. The zero value reads every input with
// detected formats, JSONL fields "id" and "text", a 64 MiB record cap, and
// repairs invalid UTF-8.
//
// Whole files are named (Document.ID and Name) by their path relative to
// the common root of the inputs given to Open, as the package
// documentation describes under "Ids of files"; no option changes that.
type Options struct {
	// IDField is the JSONL field holding the document id, a dotted path
	// into nested objects ("meta.url"). The default is "id". A record
	// without it (or with null) gets the id "<source>:<line>". String
	// values are used as they are; numbers and other JSON values by their
	// JSON text.
	IDField string
	// TextField is the JSONL field holding the document text, a dotted
	// path. The default is "text". A record without it, or where it is
	// null or not a string, is rejected with ReasonMissingText.
	TextField string
	// MetaFields are further JSONL fields (dotted paths) or Parquet
	// columns to keep in Document.Meta, keyed by the path as given. Missing
	// or null fields are left out. The default is none.
	MetaFields []string
	// ParquetIDColumn and ParquetTextColumn name the Parquet columns for
	// the id and the text (dotted paths for nested columns). They default
	// to IDField and TextField.
	ParquetIDColumn, ParquetTextColumn string

	// Include and Exclude are glob patterns that select the files of a
	// directory walk, matched against the slash-separated path relative
	// to the directory given to Open. A pattern without "/" matches the
	// base name ("*.jsonl"); a pattern with "/" matches the whole relative
	// path, where "**" matches any number of directories
	// ("crawl/**/*.warc.gz"). A file is read when it matches some Include
	// pattern (or Include is empty) and no Exclude pattern; a directory
	// matching an Exclude pattern is not entered. Files named directly in
	// Open are always read. Defaults: none.
	Include, Exclude []string
	// ExcludePaths are paths (files or directories, as given on a command
	// line or absolute) that a directory walk skips, with everything under
	// them: a command passes its output directory (--out) so that, when
	// it lies inside an input directory, a run never reads its own output
	// (or a previous run's) back as input. A walked entry is excluded
	// when its path, made absolute, equals one of them, or when it is a
	// directory that is the same directory (os.SameFile, so a path
	// through a symbolic link matches too). Paths need not exist. Inputs
	// named directly in Open are always read, even when excluded.
	// Excluded entries are not counted anywhere. Default: none.
	ExcludePaths []string

	// MaxRecordBytes caps the size of one record: a JSONL line, a WARC
	// block (and its decoded payload), a whole file, a Parquet value.
	// Larger records are skipped without being held in memory and
	// rejected with ReasonTooLarge. It also bounds what a Parquet file
	// may claim: a footer may be max(MaxRecordBytes, 16 MiB) long and a
	// page MaxRecordBytes + 1 MiB (compressed or not); a file or row
	// group over these is rejected, see pqcheck.go. The default is
	// DefaultMaxRecordBytes (64 MiB).
	MaxRecordBytes int64

	// Format forces the container format of every input instead of
	// detecting it; compression is still detected from magic bytes.
	// FormatFile reads every input as one document. The default,
	// FormatAuto, detects, in this order:
	//
	//   - magic bytes: gzip and zstd (then detection goes on with the
	//     decompressed stream), "WARC/1.", "PAR1";
	//   - the extension, after stripping .gz/.zst: .jsonl .ndjson (JSONL),
	//     .json (JSON), .warc, .parquet .pq, .html .htm .xhtml (HTML),
	//     .txt .text .md (text);
	//   - for a file found by walking a directory, nothing more: any other
	//     file is one document (HTML if its first non-blank byte is '<',
	//     else text), so a source tree reads as one document per file;
	//   - for an input named directly or standard input, the content: a
	//     first non-blank byte '{' means JSONL, '<' HTML, else text.
	//
	// The extension is tried before the '{' sniff so that a text file
	// that happens to start with '{' stays one document.
	Format Format

	// RejectInvalidUTF8 rejects records whose body is not valid UTF-8
	// after character set decoding (ReasonInvalidUTF8). HTML is always
	// decoded, so what remains is text and JSON or Parquet strings with
	// invalid bytes, and pages that declare UTF-8 but are not. By default
	// such bodies are repaired instead: each invalid byte becomes U+FFFD,
	// the record is yielded, and a warning is counted and passed to
	// OnWarning. Repair is the default because web text in legacy
	// encodings is common and still worth deduplicating.
	RejectInvalidUTF8 bool

	// OnReject, if not nil, is called with every rejected record, before
	// the Reader moves on. The default only counts rejections in Stats;
	// a command should log them.
	OnReject func(*RecordError)
	// OnWarning, if not nil, is called for every record yielded after a
	// repair (invalid UTF-8, a missing WARC trailer at end of stream).
	OnWarning func(*RecordError)
	// OnSkip, if not nil, is called for every record inside an input
	// that is skipped as not a document (a WARC warcinfo, request,
	// metadata or revisit record, a response whose payload is not text),
	// with the record as a Document (ID, Raw, Source, Name, Offset,
	// Format, Compression; no Body), valid during the call, and the skip
	// reason (SkipWARCType, SkipWARCContent). Writers use it to copy the
	// records that belong to kept documents (see CopyKept). Skips met in
	// a directory walk (symbolic links) are not records and are only
	// counted.
	OnSkip func(d *Document, reason string)
	// MaxRejects stops the Reader with ErrTooManyRejects after that many
	// rejections. The default, 0, never stops.
	MaxRejects int64

	// Stdin is read for the path "-". The default is os.Stdin.
	Stdin io.Reader

	// OnInputEnd, if not nil, is called with the index (in Reader.Inputs)
	// of every input when the Reader is done with it: read to its end,
	// stopped by a broken record, or rejected as unreadable; after every
	// record of that input was yielded or rejected, and before any record
	// of a later input. A resumable run marks its checkpoints with it.
	OnInputEnd func(i int)
}

func (o *Options) ensureDefaults() {
	if o.IDField == "" {
		o.IDField = "id"
	}
	if o.TextField == "" {
		o.TextField = "text"
	}
	if o.ParquetIDColumn == "" {
		o.ParquetIDColumn = o.IDField
	}
	if o.ParquetTextColumn == "" {
		o.ParquetTextColumn = o.TextField
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
}

// validate reports every problem with o at once.
func (o *Options) validate() error {
	var errs []error
	if o.MaxRecordBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxRecordBytes %d is negative", o.MaxRecordBytes))
	}
	if o.MaxRejects < 0 {
		errs = append(errs, fmt.Errorf("MaxRejects %d is negative", o.MaxRejects))
	}
	if o.Format > FormatFile {
		errs = append(errs, fmt.Errorf("unknown Format %d", o.Format))
	}
	for _, p := range o.ExcludePaths {
		if p == "" {
			errs = append(errs, errors.New("an ExcludePaths entry is empty"))
		}
	}
	for _, p := range append(append([]string(nil), o.Include...), o.Exclude...) {
		if err := checkGlob(p); err != nil {
			errs = append(errs, fmt.Errorf("glob %q: %v", p, err))
		}
	}
	for _, f := range append([]string{o.IDField, o.TextField, o.ParquetIDColumn, o.ParquetTextColumn}, o.MetaFields...) {
		if f == "" || strings.HasPrefix(f, ".") || strings.HasSuffix(f, ".") || strings.Contains(f, "..") {
			errs = append(errs, fmt.Errorf("field path %q is empty or has an empty segment", f))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrOptions, errors.Join(errs...))
}

// Reader streams the Documents of a list of inputs, one record at a time,
// in a deterministic order: inputs in the order given, each directory
// walked in lexical order.
//
// Use it like bufio.Scanner:
//
//	r, err := corpus.Open(paths, opts)
//	...
//	defer r.Close()
//	for r.Next() {
//		d := r.Doc() // valid until the next call to Next
//	}
//	if err := r.Err(); err != nil { ... }
//	fmt.Println(r.Stats())
//
// A Reader is not safe for concurrent use, except BytesRead and TotalBytes,
// which a progress display may call from another goroutine. Memory is one
// record plus fixed buffers (64 KiB read buffers, a decompressor window of
// at most 128 MiB for zstd, 1 MiB of blocks between a compressed input's
// decompressing goroutine and the parser, see async.go); Next costs
// O(record size). The zero value is not usable; call Open.
type Reader struct {
	opts   Options
	inputs []input
	next   int // index of the next input to open

	cur   source
	curIn *input
	doc   Document

	stats Stats
	bytes atomic.Int64 // consumed input bytes, readable concurrently
	total int64        // sum of input file sizes, -1 if unknown

	fix     []byte // UTF-8 repair buffer
	cs      []byte // charset decoding buffer
	filebuf []byte // whole-file buffer, reused
	rawBR   *bufio.Reader
	decBR   *bufio.Reader
	gz      *gzip.Reader
	zd      *zstd.Decoder
	blocks  []*asyncBlock // of the last decompressing goroutine
	err     error
	closed  bool
	skip    func(i int) bool // inputs not to read (Skip)
}

// InputInfo describes one input of a Reader.
type InputInfo struct {
	// Path is the input's path as given or walked ("-" for standard
	// input); Document.Source and RecordError.Path carry it.
	Path string
	// Size is its size when Open walked it, -1 for standard input or a
	// path that could not be read.
	Size int64
}

// Inputs lists the inputs in the order the Reader reads them: the files
// named and those found by walking directories. It is fixed by Open.
func (r *Reader) Inputs() []InputInfo {
	out := make([]InputInfo, len(r.inputs))
	for i, in := range r.inputs {
		out[i] = InputInfo{Path: in.path, Size: in.size}
		if in.err != nil {
			out[i].Size = -1
		}
	}
	return out
}

// Skip makes the Reader pass over the inputs i (indexes in Inputs) for
// which skip returns true: they are not opened, read or counted, and
// OnInputEnd is not called for them. A resumed run skips the inputs it
// finished before, a shard of a run those of other shards. Call it before
// the first Next.
func (r *Reader) Skip(skip func(i int) bool) { r.skip = skip }

// inputEnded reports the end of the current input (r.next-1).
func (r *Reader) inputEnded() {
	if r.opts.OnInputEnd != nil {
		r.opts.OnInputEnd(r.next - 1)
	}
}

// input is one file (or stdin, or a path that could not be walked) to read.
type input struct {
	path   string // as opened
	name   string // relative to its root
	id     string // document id for whole-file formats
	size   int64  // -1 for stdin
	stdin  bool
	walked bool  // found by walking a directory
	err    error // set when walking failed: the input is a rejection
}

// source reads the records of one opened input.
type source interface {
	// next fills d with the next record. It returns nil for a document,
	// a *RecordError for a rejected record (the source can go on unless
	// the error's stop flag is set), a skip for a record that is not a
	// document, io.EOF at the end.
	next(d *Document) error
	close() error
}

// skip is returned by a source for a record that is not a candidate
// document (counted in Stats.SkippedBy, not in Read).
type skip string

func (s skip) Error() string { return "corpus: skipped: " + string(s) }

// warning is wrapped by a source around a yielded record that needed a
// repair; Next yields it and counts the warning.
type warning struct{ e *RecordError }

func (w warning) Error() string { return w.e.Error() }

// Open returns a Reader over paths. Each path is a file, a directory (walked
// recursively in lexical order, without following symbolic links, filtered
// by Options.Include and Exclude) or "-" for Options.Stdin. Open walks the
// directories at once, so that TotalBytes is known; problems found there
// (a missing path, an unreadable directory) are reported as rejections when
// the Reader reaches them, not as errors from Open. Open fails only for
// invalid Options (ErrOptions). With no paths it reads standard input.
func Open(paths []string, opts Options) (*Reader, error) {
	opts.ensureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	r := &Reader{opts: opts}
	r.stats.RejectedBy = map[string]int64{}
	r.stats.WarningsBy = map[string]int64{}
	r.stats.SkippedBy = map[string]int64{}
	g, err := newGlobs(opts.Include, opts.Exclude)
	if err == nil {
		err = g.setPaths(opts.ExcludePaths)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	root := commonRoot(paths)
	for _, p := range paths {
		r.inputs = expand(r.inputs, p, root, g, &r.stats)
	}
	for _, in := range r.inputs {
		if in.size < 0 {
			r.total = -1
			break
		}
		r.total += in.size
	}
	return r, nil
}

// TotalBytes returns the sum of the sizes of the input files as found by
// Open (compressed sizes for compressed files), or -1 when an input is
// standard input. Safe for concurrent use.
func (r *Reader) TotalBytes() int64 { return r.total }

// BytesRead returns the number of input bytes consumed so far (compressed
// bytes for compressed inputs; whole files for Parquet). It moves towards
// TotalBytes and is meant for progress bars. Safe for concurrent use.
func (r *Reader) BytesRead() int64 { return r.bytes.Load() }

// Stats returns a copy of the counts so far. O(number of reasons).
func (r *Reader) Stats() Stats {
	s := r.stats.clone()
	s.Bytes = r.bytes.Load()
	return s
}

// Doc returns the current document. It and everything it refers to are
// valid until the next call to Next.
func (r *Reader) Doc() *Document { return &r.doc }

// Err returns the error that stopped the Reader early: ErrTooManyRejects,
// ErrClosed after Close, or nil when all inputs were read. Bad records are
// never returned here; they are rejections (see Stats and OnReject).
func (r *Reader) Err() error { return r.err }

// Close releases the current input. It is safe to call more than once.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var err error
	if r.cur != nil {
		err = r.cur.close()
		r.cur = nil
	}
	if r.zd != nil {
		r.zd.Close()
		r.zd = nil
	}
	if r.err == nil && r.next < len(r.inputs) {
		r.err = ErrClosed
	}
	return err
}

// Next advances to the next document and reports whether there is one.
// Rejected records are counted, reported to OnReject and skipped.
func (r *Reader) Next() bool {
	if r.err != nil || r.closed {
		return false
	}
	for {
		if r.cur == nil {
			if r.next >= len(r.inputs) {
				return false
			}
			in := &r.inputs[r.next]
			r.next++
			if r.skip != nil && r.skip(r.next-1) {
				continue
			}
			if in.err != nil {
				r.reject(&RecordError{ID: in.id, Path: in.path, Offset: -1, Reason: ReasonOpen, Err: in.err})
				r.inputEnded()
				if r.err != nil {
					return false
				}
				continue
			}
			src, rerr := r.open(in)
			if rerr != nil {
				r.reject(rerr)
				r.inputEnded()
				if r.err != nil {
					return false
				}
				continue
			}
			r.cur, r.curIn = src, in
			r.stats.Files++
		}
		d := &r.doc
		resetDoc(d)
		err := r.cur.next(d)
		var warn *RecordError
		if w, ok := err.(warning); ok {
			warn, err = w.e, nil
		}
		switch e := err.(type) {
		case nil:
			valid := utf8.Valid(d.Body)
			if d.Format != FormatJSONL && d.Format != FormatJSON && d.Format != FormatParquet && needsDecoding(d.Body, valid) {
				// JSON and Parquet text is UTF-8 by definition; files and
				// WARC payloads may declare another encoding.
				ct := ""
				if d.Format == FormatWARC {
					ct = d.Meta["content-type"]
				}
				if out, name := decodeCharset(r.cs, d.Body, ct, d.HTML); name != "" {
					r.cs, d.Body, d.Charset = out, out, name
					valid = utf8.Valid(out)
				}
			}
			if !valid {
				re := &RecordError{ID: d.ID, Path: d.Source, Line: d.Line, Offset: d.Offset, Reason: ReasonInvalidUTF8,
					Err: errors.New("body is not valid UTF-8")}
				if r.opts.RejectInvalidUTF8 {
					r.reject(re)
					if r.err != nil {
						return false
					}
					continue
				}
				r.fix = appendValidUTF8(r.fix[:0], d.Body)
				d.Body = r.fix
				r.warn(re)
			}
			if !utf8.ValidString(d.ID) {
				d.ID = strings.ToValidUTF8(d.ID, "\uFFFD")
			}
			if warn != nil {
				r.warn(warn)
			}
			r.stats.Read++
			r.stats.Yielded++
			return true
		case skip:
			r.stats.Skipped++
			r.stats.SkippedBy[string(e)]++
			if r.opts.OnSkip != nil && d.Raw != nil {
				r.opts.OnSkip(d, string(e))
			}
		case *RecordError:
			r.reject(e)
			if e.stop {
				r.closeCurrent()
			}
			if r.err != nil {
				return false
			}
		default:
			if err == io.EOF {
				r.closeCurrent()
				continue
			}
			// A source returned an unclassified error: treat it as a
			// read error that ends the input, never as a silent stop.
			r.reject(&RecordError{Path: r.curIn.path, Offset: -1, Reason: ReasonReadError, Err: err})
			r.closeCurrent()
			if r.err != nil {
				return false
			}
		}
	}
}

func (r *Reader) closeCurrent() {
	if r.cur != nil {
		if err := r.cur.close(); err != nil {
			r.reject(&RecordError{Path: r.curIn.path, Offset: -1, Reason: ReasonReadError, Err: err})
		}
		r.cur, r.curIn = nil, nil
		r.inputEnded()
	}
}

func (r *Reader) reject(e *RecordError) {
	n := e.Records()
	r.stats.Read += n
	r.stats.Rejected += n
	r.stats.RejectedBy[e.Reason] += n
	if r.opts.OnReject != nil {
		r.opts.OnReject(e)
	}
	if r.opts.MaxRejects > 0 && r.stats.Rejected >= r.opts.MaxRejects && r.err == nil {
		r.err = fmt.Errorf("%w: %d (last: %v)", ErrTooManyRejects, r.stats.Rejected, e)
	}
}

func (r *Reader) warn(e *RecordError) {
	r.stats.Warnings++
	r.stats.WarningsBy[e.Reason]++
	if r.opts.OnWarning != nil {
		r.opts.OnWarning(e)
	}
}

func resetDoc(d *Document) { *d = Document{} }

// appendValidUTF8 appends b to dst with every invalid byte replaced by
// U+FFFD (the same positions utf8.DecodeRune reports as RuneError width 1).
func appendValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] < utf8.RuneSelf {
			i++
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		if len(b) == 0 {
			break
		}
		c, size := utf8.DecodeRune(b)
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}
