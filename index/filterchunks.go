package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/neardup/neardup/store"
)

// A large fingerprint filter is recorded in chunks. Recorded as one value
// (formats 1 and 2), a filter of a few million fingerprints is a value of
// megabytes, which the store copies whole at every step — its batch, a
// memtable, each table it is flushed and compacted into — several times
// its size at once (300k documents: a 5.5 MB filter held about 30 MB of
// Pebble's buffers while it was flushed). Past filterChunkBytes, Flush
// writes the encoding of formats 1 and 2 in pieces of filterChunkBytes
// under filterChunkName(0), (1), …, each in its own batch, encoded from the
// filter's words piece by piece, and then, in the batch that removes the
// marker, the head (format 3) under filterMeta: the total length, the
// number of chunks and the encoding's CRC-32C. The chunks are written while
// the marker says the recorded filter is stale, so a crash between them
// leaves an index that rebuilds its filter on opening, never one that reads
// a mixture; reading joins the chunks and checks the length and checksum.
const (
	filterChunked    = 3
	filterChunkBytes = 256 << 10
)

// filterChunkName is the metadata name of a chunked filter's chunk i.
func filterChunkName(i uint64) string { return filterMeta + "." + strconv.FormatUint(i, 10) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// chunkHead is the value recorded under filterMeta for a chunked filter.
type chunkHead struct {
	length, chunks uint64
	crc            uint32
}

func (h chunkHead) encode() []byte {
	b := []byte{filterChunked}
	b = binary.AppendUvarint(b, h.length)
	b = binary.AppendUvarint(b, h.chunks)
	return binary.LittleEndian.AppendUint32(b, h.crc)
}

// parseChunkHead parses the value under filterMeta as a chunked filter's
// head; chunked is false when it is a filter of format 1 or 2.
func parseChunkHead(raw []byte) (h chunkHead, chunked bool, err error) {
	if len(raw) == 0 || raw[0] != filterChunked {
		return h, false, nil
	}
	bad := fmt.Errorf("%w: fingerprint filter: bad chunked head", ErrCorrupt)
	raw = raw[1:]
	var w int
	if h.length, w = binary.Uvarint(raw); w <= 0 {
		return h, true, bad
	}
	raw = raw[w:]
	if h.chunks, w = binary.Uvarint(raw); w <= 0 || len(raw[w:]) != 4 ||
		h.chunks != (h.length+filterChunkBytes-1)/filterChunkBytes {
		return h, true, bad
	}
	h.crc = binary.LittleEndian.Uint32(raw[w:])
	return h, true, nil
}

// readFilterValue returns the encoding of the recorded filter whose value
// under filterMeta is raw: raw itself (formats 1 and 2), or a chunked
// filter's chunks joined and checked.
func readFilterValue(ctx context.Context, st store.Store, raw []byte) ([]byte, error) {
	h, chunked, err := parseChunkHead(raw)
	if err != nil || !chunked {
		return raw, err
	}
	data := make([]byte, 0, h.length)
	for i := range h.chunks {
		n := len(data)
		var ok bool
		if data, ok, err = st.Meta(ctx, filterChunkName(i), data); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("%w: fingerprint filter: chunk %d of %d missing", ErrCorrupt, i, h.chunks)
		}
		if want := min(uint64(filterChunkBytes), h.length-uint64(n)); uint64(len(data)-n) != want {
			return nil, fmt.Errorf("%w: fingerprint filter: chunk %d of %d holds %d bytes, want %d", ErrCorrupt, i, h.chunks, len(data)-n, want)
		}
	}
	if crc32.Checksum(data, castagnoli) != h.crc {
		return nil, fmt.Errorf("%w: fingerprint filter: checksum mismatch over %d chunks", ErrCorrupt, h.chunks)
	}
	return data, nil
}

// encodePieces calls emit with the filter's encoding (what encode
// returns) in consecutive pieces of at most about filterChunkBytes: a
// blocked filter's words are encoded a piece at a time, so the encoding is
// never held whole.
func (f *filter) encodePieces(emit func([]byte) error) error {
	bb, ok := f.bf.(*blockBloom)
	if !ok {
		data, err := f.encode()
		if err != nil {
			return err
		}
		return emit(data)
	}
	b := make([]byte, 0, filterChunkBytes+64)
	b = append(b, bb.version())
	b = binary.AppendUvarint(b, uint64(f.capacity))
	b = binary.AppendUvarint(b, f.n)
	b = bb.appendHead(b)
	const step = filterChunkBytes / 8
	for lo := 0; lo < len(bb.words); lo += step {
		b = appendWords(b, bb.words[lo:min(lo+step, len(bb.words))])
		if err := emit(b); err != nil {
			return err
		}
		b = b[:0]
	}
	return emit(b)
}

// record writes the filter into the store (Flush): as one value under
// filterMeta when its encoding fits in a chunk, otherwise in chunks, each
// committed in its own batch, then the head. The last batch also removes
// the marker and the chunks of an earlier, larger chunked filter. Called
// with f.mu held, while the store holds the marker.
func (f *filter) record(ctx context.Context, x *Index) error {
	var old chunkHead // the recorded filter's chunks, deleted past the new ones
	if raw, ok, err := x.st.Meta(ctx, filterMeta, nil); err != nil {
		return err
	} else if ok {
		old, _, _ = parseChunkHead(raw) // an unreadable head leaves no chunks to delete
	}
	var (
		chunk  = make([]byte, 0, filterChunkBytes)
		head   chunkHead
		crc    uint32
		length uint64
	)
	put := func() error { // a full chunk, with more to follow: a batch of its own
		b := x.st.NewBatch()
		defer b.Close()
		b.PutMeta(filterChunkName(head.chunks), chunk)
		if err := b.Commit(ctx); err != nil {
			return err
		}
		head.chunks++
		chunk = chunk[:0]
		return nil
	}
	err := f.encodePieces(func(p []byte) error {
		crc = crc32.Update(crc, castagnoli, p)
		length += uint64(len(p))
		for len(p) > 0 {
			if len(chunk) == cap(chunk) {
				if err := put(); err != nil {
					return err
				}
			}
			n := copy(chunk[len(chunk):cap(chunk)], p)
			chunk, p = chunk[:len(chunk)+n], p[n:]
		}
		return nil
	})
	if err != nil {
		return err
	}
	b := x.st.NewBatch()
	defer b.Close()
	if head.chunks == 0 {
		b.PutMeta(filterMeta, chunk) // formats 1 and 2, as one value
	} else {
		b.PutMeta(filterChunkName(head.chunks), chunk) // the last chunk (never empty)
		head.chunks++
		head.length, head.crc = length, crc
		b.PutMeta(filterMeta, head.encode())
	}
	for i := head.chunks; i < old.chunks; i++ {
		b.DeleteMeta(filterChunkName(i))
	}
	b.DeleteMeta(dirtyMeta)
	return b.Commit(ctx)
}
