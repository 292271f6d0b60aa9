package feature

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/neardup/neardup/internal/rng"
)

// IDFTable holds document frequencies: the number of documents of a corpus
// and, for each feature id, how many of them contain it. TF-IDF weighting
// (Options.IDFTable) divides by it, so features every page shares
// (boilerplate, navigation, licence headers) weigh little.
//
// A table is immutable once built (IDFBuilder.Table) or read (ReadIDF,
// ParseIDF) and safe for concurrent use. It stores ids and frequencies in
// two sorted slices, 12 bytes per feature; DF is a binary search, O(log n).
// The zero value is an empty table of zero documents.
//
// The file format (version 1), all integers little-endian or unsigned
// varints:
//
//	magic    "ndidf\x00"  6 bytes
//	version  1            1 byte
//	config   uint64       Options.IDHash of the features counted
//	docs     uvarint      number of documents
//	count    uvarint      number of (id, df) entries
//	count ×  uvarint      id minus the previous id (the first: minus 0); ids strictly increase
//	         uvarint      df, 1 <= df <= docs
//	crc      uint32       CRC-32C (Castagnoli) of all preceding bytes
type IDFTable struct {
	config uint64
	docs   uint64
	ids    []uint64
	dfs    []uint32
	sum    uint64
}

// Errors of IDF tables.
var (
	// ErrIDFFormat is wrapped by every *IDFFormatError.
	ErrIDFFormat = errors.New("feature: malformed idf table")
	// ErrIDFVersion reports a table written by a newer format version.
	ErrIDFVersion = errors.New("feature: unsupported idf table version")
)

// IDFFormatError reports where an IDF table is malformed.
type IDFFormatError struct {
	Offset int64  // byte offset of the problem
	Reason string // what is wrong there
}

func (e *IDFFormatError) Error() string {
	return fmt.Sprintf("feature: malformed idf table at byte %d: %s", e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrIDFFormat) true.
func (e *IDFFormatError) Is(target error) bool { return target == ErrIDFFormat }

const (
	idfMagic   = "ndidf\x00"
	idfVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// newIDFTable makes a table of sorted ids and computes its checksum.
func newIDFTable(config, docs uint64, ids []uint64, dfs []uint32) *IDFTable {
	t := &IDFTable{config: config, docs: docs, ids: ids, dfs: dfs}
	h := rng.Key(config, docs, uint64(len(ids)))
	for i, id := range ids {
		h = rng.Hash2(h, id, uint64(dfs[i]))
	}
	t.sum = h
	return t
}

// Docs returns the number of documents counted.
func (t *IDFTable) Docs() uint64 { return t.docs }

// Len returns the number of distinct features in the table.
func (t *IDFTable) Len() int { return len(t.ids) }

// FeatureConfig returns the Options.IDHash of the features the table
// counted; Options.Validate rejects a table whose value differs.
func (t *IDFTable) FeatureConfig() uint64 { return t.config }

// Checksum returns a stable 64-bit hash of the table's contents
// (configuration, document count and every entry). Options.ConfigHash
// includes it. Cost O(1): it is computed when the table is made.
func (t *IDFTable) Checksum() uint64 { return t.sum }

// DF returns the number of documents that contain id, 0 for an id not in
// the table. Cost: a binary search, no allocation.
func (t *IDFTable) DF(id uint64) uint32 {
	lo, hi := 0, len(t.ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t.ids) && t.ids[lo] == id {
		return t.dfs[lo]
	}
	return 0
}

// AppendBinary appends the table's encoding (see IDFTable) to b.
func (t *IDFTable) AppendBinary(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, idfMagic...)
	b = append(b, idfVersion)
	b = binary.LittleEndian.AppendUint64(b, t.config)
	b = binary.AppendUvarint(b, t.docs)
	b = binary.AppendUvarint(b, uint64(len(t.ids)))
	prev := uint64(0)
	for i, id := range t.ids {
		b = binary.AppendUvarint(b, id-prev)
		b = binary.AppendUvarint(b, uint64(t.dfs[i]))
		prev = id
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// MarshalBinary returns the table's encoding (see IDFTable).
func (t *IDFTable) MarshalBinary() ([]byte, error) { return t.AppendBinary(nil) }

// WriteTo writes the table's encoding to w.
func (t *IDFTable) WriteTo(w io.Writer) (int64, error) {
	b, _ := t.AppendBinary(nil)
	n, err := w.Write(b)
	return int64(n), err
}

// ReadIDF reads a whole table written by WriteTo from r.
func ReadIDF(r io.Reader) (*IDFTable, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("feature: reading idf table: %w", err)
	}
	return ParseIDF(b)
}

// ParseIDF decodes a table from its encoding. A malformed input gives an
// *IDFFormatError with the offending offset; a newer version ErrIDFVersion.
func ParseIDF(b []byte) (*IDFTable, error) {
	bad := func(off int, format string, args ...any) error {
		return &IDFFormatError{Offset: int64(off), Reason: fmt.Sprintf(format, args...)}
	}
	const head = len(idfMagic) + 1 + 8
	if len(b) < head+2+4 {
		return nil, bad(0, "too short (%d bytes)", len(b))
	}
	if string(b[:len(idfMagic)]) != idfMagic {
		return nil, bad(0, "bad magic %q", b[:len(idfMagic)])
	}
	if v := b[len(idfMagic)]; v != idfVersion {
		return nil, fmt.Errorf("%w: version %d (this build reads %d)", ErrIDFVersion, v, idfVersion)
	}
	body := len(b) - 4
	if got, want := crc32.Checksum(b[:body], castagnoli), binary.LittleEndian.Uint32(b[body:]); got != want {
		return nil, bad(body, "checksum %08x, stored %08x", got, want)
	}
	config := binary.LittleEndian.Uint64(b[len(idfMagic)+1:])
	p := head
	uv := func(what string) (uint64, error) {
		v, n := binary.Uvarint(b[p:body])
		if n <= 0 || (n > 1 && b[p+n-1] == 0) { // overlong encodings too: one encoding per table
			return 0, bad(p, "bad varint (%s)", what)
		}
		p += n
		return v, nil
	}
	docs, err := uv("document count")
	if err != nil {
		return nil, err
	}
	cntOff := p
	count, err := uv("entry count")
	if err != nil {
		return nil, err
	}
	if count > uint64(body-p)/2 {
		return nil, bad(cntOff, "entry count %d exceeds what %d bytes can hold", count, body-p)
	}
	ids := make([]uint64, count)
	dfs := make([]uint32, count)
	prev := uint64(0)
	for i := range ids {
		off := p
		d, err := uv("id delta")
		if err != nil {
			return nil, err
		}
		if i > 0 && d == 0 {
			return nil, bad(off, "ids not strictly increasing at entry %d", i)
		}
		id := prev + d
		if id < prev {
			return nil, bad(off, "id overflows at entry %d", i)
		}
		off = p
		df, err := uv("df")
		if err != nil {
			return nil, err
		}
		if df == 0 || df > docs || df > math.MaxUint32 {
			return nil, bad(off, "df %d of entry %d not in 1..%d", df, i, docs)
		}
		ids[i], dfs[i], prev = id, uint32(df), id
	}
	if p != body {
		return nil, bad(p, "%d trailing bytes before the checksum", body-p)
	}
	return newIDFTable(config, docs, ids, dfs), nil
}

// IDFBuilder counts document frequencies over a corpus pass: Add each
// document's features, then Table. Memory: one map entry (about 40 bytes)
// per distinct feature. Not safe for concurrent use; the zero value is not
// usable: use NewIDFBuilder.
type IDFBuilder struct {
	config uint64
	docs   uint64
	df     map[uint64]dfCount
}

type dfCount struct {
	df   uint32
	last uint64 // document number of the last Add that counted it
}

// NewIDFBuilder returns a builder for features of the given
// Options.IDHash.
func NewIDFBuilder(idHash uint64) *IDFBuilder {
	return &IDFBuilder{config: idHash, df: make(map[uint64]dfCount)}
}

// Add counts one document: each distinct id in features once, whatever its
// weight or repetitions. Cost: one map update per feature.
func (b *IDFBuilder) Add(features []Feature) {
	b.docs++
	for _, f := range features {
		c := b.df[f.ID]
		if c.last == b.docs {
			continue
		}
		if c.df < math.MaxUint32 {
			c.df++
		}
		c.last = b.docs
		b.df[f.ID] = c
	}
}

// Docs returns the number of documents added.
func (b *IDFBuilder) Docs() uint64 { return b.docs }

// Table returns the table of the documents added so far, leaving out
// features with df < minDF (they look up as df 0, which smoothed idf treats
// as the rarest; minDF 2 drops the many features seen once and shrinks the
// table a lot). minDF 0 or 1 keeps everything. Cost O(n log n).
func (b *IDFBuilder) Table(minDF uint32) *IDFTable {
	ids := make([]uint64, 0, len(b.df))
	for id, c := range b.df {
		if c.df >= minDF {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	dfs := make([]uint32, len(ids))
	for i, id := range ids {
		dfs[i] = b.df[id].df
	}
	return newIDFTable(b.config, b.docs, ids, dfs)
}
