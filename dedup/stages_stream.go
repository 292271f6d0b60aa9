package dedup

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
)

// Stream items: a byte kind, then
//
//	'D' uvarint seq | str name | uvarint bytes | str key | u64 fingerprint |
//	    uvarint shingles | uvarint nvals | f64 size | str path | varint line |
//	    varint offset | byte flags | [features: uvarint n, n delta uvarints] |
//	    [weighted: uvarint n, n × (u64 id, f64 weight)]
//	'R' uvarint at | str JSON of the rejected record
//	'E' uvarint input | uvarint warnings | uvarint skipped
//
// where str is a uvarint length and the bytes, and fixed-width numbers are
// little-endian.
const (
	flagFeatures = 1
	flagWeighted = 2
)

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func (st *stages) put(b []byte) {
	st.sw.Write(b) // errors surface at Flush
	st.soff += int64(len(b))
	st.items++
}

// streamDoc is what the stream holds of a document besides its Doc.
type streamDoc struct {
	nvals int     // its sketch values (in the sketch file)
	size  float64 // its sketch's Size
	place recordPlace
	feats featureSet
}

func (st *stages) writeDoc(d *Doc, x *streamDoc) {
	b := append(st.buf[:0], 'D')
	b = appendDoc(b, d, d.Seq, x)
	st.buf = b
	st.put(b)
}

// appendDoc encodes a document (after its kind byte) with seq.
func appendDoc(b []byte, d *Doc, seq int, x *streamDoc) []byte {
	b = binary.AppendUvarint(b, uint64(seq))
	b = appendStr(b, d.Name)
	b = binary.AppendUvarint(b, uint64(d.Bytes))
	b = appendStr(b, d.Key)
	b = binary.LittleEndian.AppendUint64(b, d.Fingerprint.Hi) // its Len is Bytes
	b = binary.LittleEndian.AppendUint64(b, d.Fingerprint.Lo)
	b = binary.AppendUvarint(b, uint64(d.Shingles))
	b = binary.AppendUvarint(b, uint64(x.nvals))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.size))
	p := x.place
	b = appendStr(b, p.path)
	b = binary.AppendVarint(b, p.line)
	b = binary.AppendVarint(b, p.offset)
	return appendFeatureSet(b, &x.feats)
}

// rejectJSON is a rejected record in the stream.
type rejectJSON struct {
	ID     string   `json:"id,omitempty"`
	Path   string   `json:"path,omitempty"`
	Line   int64    `json:"line,omitempty"`
	Offset int64    `json:"offset"`
	Reason string   `json:"reason"`
	Err    *string  `json:"err,omitempty"`
	Fields []string `json:"fields,omitempty"`
	Count  int64    `json:"count,omitempty"`
}

func appendMark(b []byte, m streamMark, at int) []byte {
	if m.end != nil {
		b = append(b, 'E')
		b = binary.AppendUvarint(b, uint64(m.end.Input))
		b = binary.AppendUvarint(b, uint64(m.end.Warnings))
		return binary.AppendUvarint(b, uint64(m.end.Skipped))
	}
	e := m.rej
	j := rejectJSON{ID: e.ID, Path: e.Path, Line: e.Line, Offset: e.Offset, Reason: e.Reason, Fields: e.Fields, Count: e.Count}
	if e.Err != nil {
		s := e.Err.Error()
		j.Err = &s
	}
	js, _ := json.Marshal(j)
	b = append(b, 'R')
	b = binary.AppendUvarint(b, uint64(at))
	return appendStr(b, string(js))
}

func (st *stages) writeMark(m streamMark) {
	if m.end != nil {
		st.inputs = m.end.Input + 1
		st.warn += m.end.Warnings
		st.skp += m.end.Skipped
	}
	b := appendMark(st.buf[:0], m, m.at)
	st.buf = b
	st.put(b)
}

// streamItem is one decoded item of a stream.
type streamItem struct {
	doc *Doc
	x   streamDoc // of doc
	rej *corpus.RecordError
	at  int
	end *InputEnd
}

// readStream decodes n items of a stream.
func readStream(rd io.Reader, n int64, hdr sketch.Header, fn func(*streamItem) error) error {
	br := bufio.NewReaderSize(rd, 1<<16)
	var it streamItem
	uv := func() uint64 {
		v, err := binary.ReadUvarint(br)
		if err != nil {
			panic(errCorruptStream)
		}
		return v
	}
	sv := func() int64 {
		v, err := binary.ReadVarint(br)
		if err != nil {
			panic(errCorruptStream)
		}
		return v
	}
	u64 := func() uint64 {
		var b [8]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			panic(errCorruptStream)
		}
		return binary.LittleEndian.Uint64(b[:])
	}
	str := func() string {
		l := uv()
		if l > 1<<30 {
			panic(errCorruptStream)
		}
		if l > 1<<16 { // grown as the bytes come: a damaged length allocates nothing
			var sb strings.Builder
			if n, err := io.CopyN(&sb, br, int64(l)); err != nil || n != int64(l) {
				panic(errCorruptStream)
			}
			return sb.String()
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			panic(errCorruptStream)
		}
		return string(b)
	}
	one := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				if p != errCorruptStream {
					panic(p)
				}
				err = errCorruptStream
			}
		}()
		kind, err := br.ReadByte()
		if err != nil {
			return errCorruptStream
		}
		it = streamItem{}
		switch kind {
		case 'D':
			d := &Doc{ExactOf: -1}
			d.Seq = int(uv())
			d.Name = str()
			d.Bytes = int(uv())
			d.Key = str()
			d.Fingerprint.Hi = u64()
			d.Fingerprint.Lo = u64()
			d.Fingerprint.Len = uint64(d.Bytes)
			d.Shingles = int(uv())
			nv := uv()
			if nv > 1<<24 {
				return errCorruptStream
			}
			it.x.nvals = int(nv)
			it.x.size = math.Float64frombits(u64())
			it.x.place = recordPlace{path: str(), line: sv(), offset: sv()}
			flags, err := br.ReadByte()
			if err != nil {
				return errCorruptStream
			}
			if flags&flagFeatures != 0 {
				nf := uv()
				if nf > 1<<32 {
					return errCorruptStream
				}
				fs := make([]uint64, 0, min(nf, 1<<12))
				var prev uint64
				for range nf {
					prev += uv()
					fs = append(fs, prev)
				}
				it.x.feats.features = fs
			}
			if flags&flagWeighted != 0 {
				nf := uv()
				if nf > 1<<32 {
					return errCorruptStream
				}
				ws := make([]feature.Feature, 0, min(nf, 1<<12))
				for range nf {
					id := u64()
					ws = append(ws, feature.Feature{ID: id, Weight: math.Float64frombits(u64())})
				}
				it.x.feats.weighted = ws
			}
			it.doc = d
		case 'R':
			it.at = int(uv())
			var j rejectJSON
			if err := json.Unmarshal([]byte(str()), &j); err != nil {
				return errCorruptStream
			}
			e := &corpus.RecordError{ID: j.ID, Path: j.Path, Line: j.Line, Offset: j.Offset, Reason: j.Reason, Fields: j.Fields, Count: j.Count}
			if j.Err != nil {
				e.Err = errors.New(*j.Err)
			}
			it.rej = e
		case 'E':
			it.end = &InputEnd{Input: int(uv()), Warnings: int64(uv()), Skipped: int64(uv())}
		default:
			return errCorruptStream
		}
		return nil
	}
	for range n {
		if err := one(); err != nil {
			return err
		}
		if err := fn(&it); err != nil {
			return err
		}
	}
	return nil
}

var errCorruptStream = errors.New("corrupt stage file")
