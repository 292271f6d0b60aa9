package corpus

import (
	"bytes"
	"strings"
)

// warcFilter decides, record by record in input order, which records of
// one WARC input a filter writes: documents as the filter says, and the
// other records as the documents they belong to (see MirrorWriter). A
// record whose owner is not decided yet waits in a queue; records leave
// the queue, in input order, as soon as everything before them is
// decided, so the output keeps the input's order.
type warcFilter struct {
	emit    func(raw []byte) error
	q       []*warcEntry // undecided records and the decided ones behind them
	pending int          // bytes held in q
	drops   int          // dropped records still in q
	fate    map[string]bool
	byID    map[string]*warcEntry   // undecided records by WARC-Record-ID
	waitID  map[string][]*warcEntry // records waiting for a record id
	waitURI map[string][]*warcEntry // records waiting for a capture of a URI
	infos   []*warcEntry            // undecided warcinfo records

	lastURI  string // the latest capture (document, response, resource, revisit)
	lastFate bool
	hasLast  bool
}

const (
	maxWARCWaiting      = 256
	maxWARCWaitingBytes = 64 << 20
)

type entryState int8

const (
	undecided entryState = iota
	keepEntry
	dropEntry
)

type warcEntry struct {
	raw       []byte
	owned     bool // raw is a copy (else it is the caller's, valid during the call)
	id        string
	warcinfo  bool   // a warcinfo record
	infoRef   string // its WARC-Warcinfo-ID
	state     entryState
	followers []*warcEntry // records that share this one's fate
}

func newWARCFilter(emit func([]byte) error) *warcFilter {
	return &warcFilter{
		emit:    emit,
		fate:    map[string]bool{},
		byID:    map[string]*warcEntry{},
		waitID:  map[string][]*warcEntry{},
		waitURI: map[string][]*warcEntry{},
	}
}

// warcLinks are the header fields that associate records.
type warcLinks struct {
	typ, id, uri, warcinfo string
	refs                   []string // WARC-Concurrent-To and WARC-Refers-To
}

// parseWARCLinks reads the association fields from a record's header.
func parseWARCLinks(raw []byte) warcLinks {
	var l warcLinks
	if i := bytes.Index(raw, crlfcrlf); i >= 0 {
		raw = raw[:i]
	}
	_, rest, _ := bytes.Cut(raw, []byte("\n")) // the version line
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r"), []byte(":"))
		if !ok {
			continue
		}
		name, value = bytes.TrimSpace(name), bytes.TrimSpace(value)
		switch {
		case equalFold(name, "warc-type"):
			l.typ = strings.ToLower(string(value))
		case equalFold(name, "warc-record-id"):
			l.id = string(value)
		case equalFold(name, "warc-target-uri"):
			l.uri = string(bytes.Trim(value, "<>"))
		case equalFold(name, "warc-warcinfo-id"):
			l.warcinfo = string(value)
		case equalFold(name, "warc-concurrent-to"), equalFold(name, "warc-refers-to"):
			l.refs = append(l.refs, string(value))
		}
	}
	return l
}

// doc takes a document and whether it is kept.
func (f *warcFilter) doc(d *Document, keep bool) error {
	l := parseWARCLinks(d.Raw)
	e := f.add(d.Raw, l, keep)
	f.decide(e, keep)
	f.capture(l.uri, keep)
	return f.flush()
}

// companion takes a record that is not a document.
func (f *warcFilter) companion(d *Document) error {
	l := parseWARCLinks(d.Raw)
	switch l.typ {
	case "warcinfo":
		e := f.add(d.Raw, l, true)
		e.warcinfo = true
		f.infos = append(f.infos, e)
		return f.flush()
	case "response", "resource", "revisit":
		// A capture that was not judged (not text, or a revisit): it is
		// its own owner and is kept.
		e := f.add(d.Raw, l, true)
		f.decide(e, true)
		f.capture(l.uri, true)
		return f.flush()
	}
	e := f.add(d.Raw, l, true)
	f.associate(e, l)
	return f.flush()
}

// associate decides a request or metadata record by its links, or makes
// it wait for them.
func (f *warcFilter) associate(e *warcEntry, l warcLinks) {
	for _, ref := range l.refs {
		if keep, ok := f.fate[ref]; ok {
			f.decide(e, keep)
			return
		}
	}
	for _, ref := range l.refs {
		if o := f.byID[ref]; o != nil {
			o.followers = append(o.followers, e)
			return
		}
	}
	switch {
	case len(l.refs) > 0:
		for _, ref := range l.refs {
			f.waitID[ref] = append(f.waitID[ref], e)
		}
	case l.uri == "":
		f.decide(e, true) // belongs to no document
	case l.typ != "request" && f.hasLast && f.lastURI == l.uri:
		f.decide(e, f.lastFate) // metadata after its capture
	default:
		f.waitURI[l.uri] = append(f.waitURI[l.uri], e) // a request before its capture
	}
}

// add queues a record; an undecided record is findable by its id.
func (f *warcFilter) add(raw []byte, l warcLinks, keep bool) *warcEntry {
	e := &warcEntry{raw: raw, id: l.id, infoRef: l.warcinfo}
	f.q = append(f.q, e)
	f.pending += len(raw)
	if l.id != "" {
		f.byID[l.id] = e
	}
	return e
}

// decide gives e its fate, and with it to every record waiting for it.
func (f *warcFilter) decide(e *warcEntry, keep bool) {
	if e.state != undecided {
		return
	}
	e.state = dropEntry
	if keep {
		e.state = keepEntry
	} else {
		f.drops++
	}
	if e.id != "" {
		f.fate[e.id] = keep
		delete(f.byID, e.id)
		for _, w := range f.waitID[e.id] {
			f.decide(w, keep)
		}
		delete(f.waitID, e.id)
	}
	for _, w := range e.followers {
		f.decide(w, keep)
	}
	e.followers = nil
	if keep && !e.warcinfo {
		// A kept record keeps the warcinfo it names, or all before it.
		var claimed, rest []*warcEntry
		for _, info := range f.infos {
			if e.infoRef == "" || e.infoRef == info.id {
				claimed = append(claimed, info)
			} else if info.state == undecided {
				rest = append(rest, info)
			}
		}
		f.infos = rest
		for _, info := range claimed {
			f.decide(info, true)
		}
	}
}

// capture records the fate of a capture of uri, deciding the requests
// that waited for it.
func (f *warcFilter) capture(uri string, keep bool) {
	if uri == "" {
		return
	}
	f.lastURI, f.lastFate, f.hasLast = uri, keep, true
	for _, w := range f.waitURI[uri] {
		f.decide(w, keep)
	}
	delete(f.waitURI, uri)
}

// flush writes the decided records at the head of the queue, forces the
// oldest undecided one (kept) when too much waits, and copies the record
// just added if it has to wait. Dropped records leave the queue wherever
// they are: they are never written, so they cannot change the order.
func (f *warcFilter) flush() error {
	if f.drops > 0 {
		q := f.q[:0]
		for _, e := range f.q {
			if e.state == dropEntry {
				f.pending -= len(e.raw)
			} else {
				q = append(q, e)
			}
		}
		clear(f.q[len(q):])
		f.q, f.drops = q, 0
	}
	for len(f.q) > 0 {
		e := f.q[0]
		if e.state == undecided {
			if len(f.q) <= maxWARCWaiting && f.pending <= maxWARCWaitingBytes {
				break
			}
			f.decide(e, true)
		}
		f.q[0] = nil
		f.q = f.q[1:]
		f.pending -= len(e.raw)
		if e.state == keepEntry {
			if err := f.emit(e.raw); err != nil {
				return err
			}
		}
	}
	if len(f.q) == 0 {
		f.q = f.q[:0:0]
	}
	// Records that wait must own their bytes; only the last one can be
	// the caller's.
	if n := len(f.q); n > 0 && !f.q[n-1].owned {
		e := f.q[n-1]
		e.raw = append([]byte(nil), e.raw...)
		e.owned = true
	}
	return nil
}

// finish decides what still waits at the end of the input: a warcinfo
// record that no kept record claimed is dropped, any other record belongs
// to no document seen and is kept.
func (f *warcFilter) finish() error {
	for _, info := range f.infos {
		f.decide(info, false)
	}
	f.infos = nil
	for _, e := range f.q {
		f.decide(e, true)
	}
	return f.flush()
}
