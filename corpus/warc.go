package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// WARC reading follows ISO 28500 (WARC/1.0 and 1.1): a record is a version
// line, header lines "Name: value", an empty line, a block of exactly
// Content-Length bytes, and CRLF CRLF. The reader validates that framing:
// a Content-Length that does not land on CRLF CRLF is a wrong length
// (ReasonWARCLength), anything that is not a version line where one is due
// is a framing error (ReasonWARCFraming) after which the reader scans
// forward to the next line starting with "WARC/1.". Gzipped WARCs
// (one gzip member per record) are read through the multistream gzip
// reader; offsets are in the decompressed stream.
//
// We wrote this small reader rather than use a Go WARC library: the
// maintained ones (internetarchive/gowarc, nlnwa/gowarc) are built for
// crawling and archiving, pull in large dependency trees, and do not give
// byte offsets of bad records or the raw record bytes a verbatim copy needs.

const (
	maxWARCLine   = 64 << 10 // longest header line
	maxWARCHeader = 1 << 20  // largest header block
)

var (
	crlfcrlf        = []byte("\r\n\r\n")
	nextRecordStart = []byte("\r\n\r\nWARC/1.")
)

type warcSource struct {
	o    *opened
	opts *Options

	off  int64  // bytes of the decompressed stream consumed
	lbuf []byte // long-line accumulation
	raw  []byte // current record: header and block
	dec  []byte // dechunked payload
	dec2 []byte // gunzipped payload

	pending    bool  // raw already holds the next record's version line
	pendingOff int64 // its offset
	quiet      bool  // scan silently to the next version line
	pb         *pushback
	gz         *gzip.Reader
	meta       map[string]string
}

func newWARCSource(o *opened, opts *Options) *warcSource {
	return &warcSource{o: o, opts: opts, meta: make(map[string]string, 5)}
}

func (s *warcSource) close() error { return s.o.close() }

// pushback serves bytes put back by the reader before its underlying stream.
type pushback struct {
	pending []byte
	r       io.Reader
}

func (p *pushback) Read(b []byte) (int, error) {
	if len(p.pending) > 0 {
		n := copy(b, p.pending)
		p.pending = p.pending[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// unread puts data back in front of the stream.
func (s *warcSource) unread(data []byte) {
	br := s.o.br
	buffered, _ := br.Peek(br.Buffered())
	if s.pb == nil {
		s.pb = &pushback{r: s.o.under}
	}
	p := make([]byte, 0, len(data)+len(buffered)+len(s.pb.pending))
	p = append(append(append(p, data...), buffered...), s.pb.pending...)
	s.pb.pending = p
	br.Reset(s.pb)
	s.off -= int64(len(data))
}

func (s *warcSource) stopErr(off int64, err error) *RecordError {
	e := s.o.errAt(0, off, classify(err), err)
	e.stop = true
	return e
}

// readVersion finds the next record's version line and leaves it in s.raw.
// It returns the line's offset, io.EOF at a clean end, or an error.
func (s *warcSource) readVersion() (int64, error) {
	if s.pending {
		s.pending = false
		return s.pendingOff, nil
	}
	var badAt int64 = -1
	for {
		at := s.off
		line, n, tooLong, err := readLine(s.o.br, &s.lbuf, maxWARCLine)
		s.off += n
		if n == 0 && err == io.EOF {
			if badAt >= 0 {
				s.quiet = false
				return 0, s.o.errAt(0, badAt, ReasonWARCFraming, errors.New("no WARC version line before end of stream"))
			}
			return 0, io.EOF
		}
		if err != nil && err != io.EOF {
			return 0, s.stopErr(at, err)
		}
		if !tooLong && bytes.HasPrefix(line, magicWARC) {
			s.raw = append(s.raw[:0], line...)
			if badAt >= 0 {
				// Report the garbage; the record found is next.
				s.pending, s.pendingOff = true, at
				return 0, s.o.errAt(0, badAt, ReasonWARCFraming, errors.New("expected a WARC version line"))
			}
			s.quiet = false
			return at, nil
		}
		if !tooLong && len(bytes.TrimLeft(trimEOL(line), " \t")) == 0 && badAt < 0 {
			continue // blank lines between records
		}
		if s.quiet {
			continue // the rest of a record already rejected
		}
		if badAt < 0 {
			badAt = at
		}
	}
}

// warcHeader is what the reader uses of a record's header.
type warcHeader struct {
	length                          int64
	typ, uri, id, date, contentType string
}

func (s *warcSource) next(d *Document) error {
	for {
		start, err := s.readVersion()
		if err != nil {
			return err
		}
		// Header lines up to the empty line.
		for {
			at := s.off
			line, n, tooLong, err := readLine(s.o.br, &s.lbuf, maxWARCLine)
			s.off += n
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return s.stopErr(start, fmt.Errorf("in WARC header: %w", err))
			}
			if tooLong || len(s.raw)+len(line) > maxWARCHeader {
				s.quiet = true
				return s.o.errAt(0, start, ReasonWARCFraming, fmt.Errorf("WARC header line at offset %d is too long", at))
			}
			s.raw = append(s.raw, line...)
			if len(trimEOL(line)) == 0 {
				break
			}
		}
		h, herr := parseWARCHeader(s.raw)
		if herr != nil {
			s.quiet = true
			return s.o.errAt(0, start, ReasonWARCFraming, herr)
		}
		hlen := len(s.raw)
		if h.length > s.opts.MaxRecordBytes {
			n, err := io.CopyN(io.Discard, s.o.br, h.length)
			s.off += n
			if err != nil {
				return s.stopErr(start, fmt.Errorf("WARC block: %w", unexpected(err)))
			}
			s.trailer() // a wrong length here shows up as framing next
			return h.errAt(s.o, start, ReasonTooLarge, fmt.Errorf("WARC block of %d bytes is over the %d-byte cap", h.length, s.opts.MaxRecordBytes))
		}
		s.raw = grow(s.raw, int(h.length))
		n, err := io.ReadFull(s.o.br, s.raw[hlen:hlen+int(h.length)])
		s.off += int64(n)
		if err != nil {
			return s.stopErr(start, fmt.Errorf("WARC block of Content-Length %d ends after %d bytes: %w", h.length, n, unexpected(err)))
		}
		s.raw = s.raw[:hlen+int(h.length)]
		var warn *RecordError
		switch s.trailer() {
		case trailerMissing:
			warn = h.errAt(s.o, start, ReasonWARCTrailer, errors.New("last record lacks its CRLF CRLF"))
		case trailerWrong:
			block := s.raw[hlen:]
			if i := bytes.Index(block, nextRecordStart); i >= 0 {
				s.unread(block[i+4:]) // Content-Length too long
			} else {
				s.quiet = true // too short: skip to the next record
			}
			return h.errAt(s.o, start, ReasonWARCLength, fmt.Errorf("block of Content-Length %d is not followed by CRLF CRLF", h.length))
		}
		err = s.document(d, &h, start, hlen)
		if err == nil && warn != nil {
			return warning{warn}
		}
		return err
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

type trailerState int

const (
	trailerOK trailerState = iota
	trailerMissing
	trailerWrong
)

// trailer consumes the CRLF CRLF after a block.
func (s *warcSource) trailer() trailerState {
	p, err := s.o.br.Peek(4)
	if bytes.Equal(p, crlfcrlf) {
		s.o.br.Discard(4)
		s.off += 4
		return trailerOK
	}
	if err != nil && bytes.HasPrefix(crlfcrlf, p) {
		s.o.br.Discard(len(p))
		s.off += int64(len(p))
		return trailerMissing
	}
	return trailerWrong
}

// docID is the id a document of this record gets: its target URI, or its
// record id.
func (h *warcHeader) docID() string {
	if h.uri != "" {
		return h.uri
	}
	return h.id
}

// errAt is a rejection of the record with this header.
func (h *warcHeader) errAt(o *opened, off int64, reason string, err error) *RecordError {
	e := o.errAt(0, off, reason, err)
	e.ID = h.docID()
	return e
}

func parseWARCHeader(raw []byte) (warcHeader, error) {
	h := warcHeader{length: -1}
	first := true
	for rest := raw; len(rest) > 0; {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		if first {
			first = false // the version line
			continue
		}
		l = bytes.TrimRight(l, "\r")
		if len(l) == 0 || l[0] == ' ' || l[0] == '\t' {
			continue // end, or a folded continuation (not used for our fields)
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			return h, fmt.Errorf("WARC header line %q has no colon", truncate(l))
		}
		name, value = bytes.TrimSpace(name), bytes.TrimSpace(value)
		switch {
		case equalFold(name, "content-length"):
			n, err := parseLength(value)
			if err != nil {
				return h, err
			}
			h.length = n
		case equalFold(name, "warc-type"):
			h.typ = strings.ToLower(string(value))
		case equalFold(name, "warc-target-uri"):
			h.uri = string(bytes.Trim(value, "<>"))
		case equalFold(name, "warc-record-id"):
			h.id = string(value)
		case equalFold(name, "warc-date"):
			h.date = string(value)
		case equalFold(name, "content-type"):
			h.contentType = string(value)
		}
	}
	if h.length < 0 {
		return h, errors.New("no Content-Length")
	}
	return h, nil
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// parseLength parses a decimal Content-Length without allocating.
func parseLength(v []byte) (int64, error) {
	if len(v) == 0 || len(v) > 18 {
		return 0, fmt.Errorf("bad Content-Length %q", truncate(v))
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad Content-Length %q", truncate(v))
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// document turns a well-framed record into a Document or a skip. For a
// skip, d still describes the record (ID, Raw, Source, Name, Offset,
// Format, Compression) for Options.OnSkip.
func (s *warcSource) document(d *Document, h *warcHeader, start int64, hlen int) error {
	d.ID = h.docID()
	d.Raw = s.raw
	d.Source = s.o.in.path
	d.Name = s.o.in.name
	d.Offset = start
	d.Format = FormatWARC
	d.Compression = s.o.comp
	block := s.raw[hlen:]
	payload := block
	ctype := h.contentType
	status := ""
	switch h.typ {
	case "response":
		if !strings.HasPrefix(strings.ToLower(ctype), "application/http") && !bytes.HasPrefix(block, []byte("HTTP/")) {
			return skip(SkipWARCContent) // dns:, ftp:, ...
		}
		hr, err := parseHTTP(block)
		if err != nil {
			return h.errAt(s.o, start, ReasonHTTP, err)
		}
		payload, ctype, status = hr.payload, hr.contentType, hr.status
		if hr.chunked {
			s.dec = s.dec[:0]
			b, err := readCapped(httputil.NewChunkedReader(bytes.NewReader(payload)), s.dec, s.opts.MaxRecordBytes)
			s.dec = b
			if err != nil {
				return h.errAt(s.o, start, ReasonHTTP, fmt.Errorf("chunked payload: %w", err))
			}
			payload = b
		}
		switch hr.encoding {
		case "", "identity":
		case "gzip", "x-gzip":
			var err error
			if s.gz == nil {
				s.gz, err = gzip.NewReader(bytes.NewReader(payload))
			} else {
				err = s.gz.Reset(bytes.NewReader(payload))
			}
			var b []byte
			if err == nil {
				// A second buffer: payload may be s.dec (chunked).
				b, err = readCapped(s.gz, s.dec2[:0], s.opts.MaxRecordBytes)
				s.dec2 = b
			}
			if err != nil {
				return h.errAt(s.o, start, ReasonHTTP, fmt.Errorf("gzip payload: %w", err))
			}
			payload = b
		default:
			return h.errAt(s.o, start, ReasonHTTP, fmt.Errorf("unsupported Content-Encoding %q", hr.encoding))
		}
	case "resource":
	default:
		return skip(SkipWARCType)
	}
	html, ok := textKind(ctype, payload)
	if !ok {
		return skip(SkipWARCContent)
	}
	clear(s.meta)
	s.meta["warc-record-id"] = h.id
	s.meta["warc-date"] = h.date
	s.meta["warc-target-uri"] = h.uri
	s.meta["content-type"] = ctype
	if status != "" {
		s.meta["http-status"] = status
	}
	d.Meta = s.meta
	d.Body = payload
	d.HTML = html
	return nil
}

// readCapped reads r to its end, appending to dst, failing past max bytes.
func readCapped(r io.Reader, dst []byte, max int64) ([]byte, error) {
	lr := &io.LimitedReader{R: r, N: max + 1}
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := lr.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return dst, err
		}
	}
	if int64(len(dst)) > max {
		return dst, fmt.Errorf("decoded payload is over the %d-byte cap", max)
	}
	return dst, nil
}

// textKind reports whether a payload of the given Content-Type is HTML
// (true) or plain text (false); ok is false for anything else. Without a
// Content-Type the payload is sniffed.
func textKind(contentType string, payload []byte) (html, ok bool) {
	mt := mediaType(contentType)
	if mt == "" {
		mt = mediaType(http.DetectContentType(payload))
	}
	switch {
	case strings.EqualFold(mt, "text/html"), strings.EqualFold(mt, "application/xhtml+xml"):
		return true, true
	case strings.EqualFold(mt, "text/plain"):
		return false, true
	}
	return false, false
}

// mediaType returns the media type of a Content-Type value, without
// parameters.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(ct)
}

// statusString returns common status codes without allocating.
func statusString(code []byte) string {
	switch string(code) {
	case "200":
		return "200"
	case "301":
		return "301"
	case "302":
		return "302"
	case "404":
		return "404"
	}
	return string(code)
}

type httpResponse struct {
	status, contentType, encoding string
	chunked                       bool
	payload                       []byte
}

// parseHTTP splits an HTTP response into header fields and payload.
func parseHTTP(block []byte) (httpResponse, error) {
	var r httpResponse
	end, sep := bytes.Index(block, crlfcrlf), 4
	if i := bytes.Index(block, []byte("\n\n")); i >= 0 && (end < 0 || i < end) {
		end, sep = i, 2
	}
	if end < 0 {
		return r, errors.New("no end of HTTP header")
	}
	head := block[:end]
	r.payload = block[end+sep:]
	status, rest, _ := bytes.Cut(head, []byte("\n"))
	status = bytes.TrimRight(status, "\r")
	if !bytes.HasPrefix(status, []byte("HTTP/")) {
		return r, fmt.Errorf("bad HTTP status line %q", truncate(status))
	}
	if _, code, ok := bytes.Cut(status, []byte(" ")); ok {
		code, _, _ = bytes.Cut(bytes.TrimLeft(code, " "), []byte(" "))
		r.status = statusString(code)
	}
	for len(rest) > 0 {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		name, value, ok := bytes.Cut(bytes.TrimRight(l, "\r"), []byte(":"))
		if !ok {
			continue
		}
		name, value = bytes.TrimSpace(name), bytes.TrimSpace(value)
		switch {
		case equalFold(name, "content-type"):
			r.contentType = string(value)
		case equalFold(name, "content-encoding"):
			r.encoding = strings.ToLower(string(value))
		case equalFold(name, "transfer-encoding"):
			r.chunked = bytes.Contains(bytes.ToLower(value), []byte("chunked"))
		}
	}
	return r, nil
}
