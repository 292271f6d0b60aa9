package rdc

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/neardup/neardup/chunk"
)

// Short is a hash cut to its first 32 bits, as hashes travel on the wire.
type Short uint32

// ShortOf cuts s to 32 bits.
func ShortOf(s chunk.Sum) Short { return Short(binary.LittleEndian.Uint32(s[:4])) }

// NodeReq asks for the children of node Index at Level of the signature
// of manifest entry File (Level 0 nodes have chunks as children).
type NodeReq struct {
	File, Level, Index int
}

// Child is a child of a requested node: its hash cut to 32 bits and the
// number of chunks under it (1 for a chunk).
type Child struct {
	Sum    Short
	Chunks int
}

// NodeResp is the answer to one NodeReq: the index of the first child in
// its level and the children in order.
type NodeResp struct {
	Lo       int
	Children []Child
}

// RangeReq asks for chunks Lo up to Hi (exclusive) of manifest entry File.
type RangeReq struct {
	File, Lo, Hi int
}

// ChunksReq is a chunks request: the chunk ranges to send and, to compress
// them better, Dict: ranges of the same served files that the receiver
// already holds (it rebuilt them from its own files). Both sides lay the
// bytes of Dict end to end, in order, and use them as the zstd dictionary
// of the reply, so that a changed chunk is coded against the unchanged
// rest of its file without the sender ever holding the receiver's files.
// DictSum, the first 8 bytes of the dictionary's checksum (DictSumOf),
// lets the server refuse a dictionary the receiver got wrong (ErrDict)
// rather than send a reply that would decode to garbage.
type ChunksReq struct {
	Ranges  []RangeReq
	Dict    []RangeReq
	DictSum uint64
}

// DictSumOf is the checksum of a dictionary a ChunksReq carries.
func DictSumOf(dict []byte) uint64 {
	s := chunk.SumChunk(dict)
	return binary.LittleEndian.Uint64(s[:8])
}

// Limits of one request.
const (
	// MaxNodeReqs bounds the nodes asked in one request.
	MaxNodeReqs = 1 << 16
	// MaxRangeChunks bounds the chunks asked in one request, and
	// MaxRangeBytes their total length.
	MaxRangeChunks = 1 << 16
	MaxRangeBytes  = 64 << 20
	// MaxDictBytes bounds the dictionary of one chunks request (and
	// MaxRangeChunks its chunks).
	MaxDictBytes = 8 << 20
	// maxReqBytes bounds a request body.
	maxReqBytes = 4 << 20
)

const (
	nodesMagic     = "NDRDC1N\n"
	chunksMagic    = "NDRDC1C\n" // a chunks request without a dictionary, and every chunks reply
	chunksDicMagic = "NDRDC1D\n" // a chunks request with a dictionary
)

type uvWriter struct {
	w   *bufio.Writer
	tmp [binary.MaxVarintLen64]byte
}

func (u *uvWriter) uv(x uint64) { u.w.Write(u.tmp[:binary.PutUvarint(u.tmp[:], x)]) }

// newFrame starts a message: its magic and its item count.
func newFrame(w io.Writer, magic string, n int) *uvWriter {
	u := &uvWriter{w: bufio.NewWriter(w)}
	u.w.WriteString(magic)
	u.uv(uint64(n))
	return u
}

// readFrame reads the start of a message: one of magics (it returns
// which) and the item count, at most max. Every message of the protocol
// but the manifest starts so.
func readFrame(r io.Reader, magics []string, max uint64, what string) (*bufio.Reader, int, int, error) {
	br := bufio.NewReader(r)
	b := make([]byte, len(magics[0]))
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	which := -1
	for i, m := range magics {
		if string(b) == m {
			which = i
		}
	}
	if which < 0 {
		return nil, 0, 0, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	n, err := readCount(br, max, what)
	if err != nil {
		return nil, 0, 0, err
	}
	return br, which, n, nil
}

func readCount(br *bufio.Reader, max uint64, what string) (int, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrFormat, what, err)
	}
	if n > max {
		return 0, fmt.Errorf("%w: %s %d over the limit %d", ErrFormat, what, n, max)
	}
	return int(n), nil
}

func atEOF(br *bufio.Reader) error {
	if _, err := br.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: trailing bytes", ErrFormat)
	}
	return nil
}

// EncodeNodeReqs writes a nodes request.
func EncodeNodeReqs(w io.Writer, reqs []NodeReq) error {
	u := newFrame(w, nodesMagic, len(reqs))
	for _, r := range reqs {
		u.uv(uint64(r.File))
		u.uv(uint64(r.Level))
		u.uv(uint64(r.Index))
	}
	return u.w.Flush()
}

// DecodeNodeReqs reads a nodes request (at most MaxNodeReqs items; the
// values are checked against the tree by the server).
func DecodeNodeReqs(r io.Reader) ([]NodeReq, error) {
	br, _, n, err := readFrame(r, []string{nodesMagic}, MaxNodeReqs, "node count")
	if err != nil {
		return nil, err
	}
	reqs := make([]NodeReq, n)
	for i := range reqs {
		var v [3]int
		for j := range v {
			if v[j], err = readCount(br, 1<<40, "node"); err != nil {
				return nil, err
			}
		}
		reqs[i] = NodeReq{v[0], v[1], v[2]}
	}
	return reqs, atEOF(br)
}

// EncodeNodeResps writes the answers to a nodes request, in its order:
// per node the first child's index and the child count, then per child its
// 32-bit hash and, for node children (leaf is false), its chunk count.
func EncodeNodeResps(w io.Writer, resps []NodeResp, leaf []bool) error {
	u := newFrame(w, nodesMagic, len(resps))
	var b [4]byte
	for i, r := range resps {
		u.uv(uint64(r.Lo))
		u.uv(uint64(len(r.Children)))
		for _, c := range r.Children {
			binary.LittleEndian.PutUint32(b[:], uint32(c.Sum))
			u.w.Write(b[:])
			if !leaf[i] {
				u.uv(uint64(c.Chunks))
			}
		}
	}
	return u.w.Flush()
}

// DecodeNodeResps reads the answers to reqs; leaf[i] says whether request
// i asked for a level-0 node (whose children are chunks).
func DecodeNodeResps(r io.Reader, leaf []bool) ([]NodeResp, error) {
	br, _, n, err := readFrame(r, []string{nodesMagic}, MaxNodeReqs, "node count")
	if err != nil {
		return nil, err
	}
	if n != len(leaf) {
		return nil, fmt.Errorf("%w: %d answers to %d nodes", ErrFormat, n, len(leaf))
	}
	resps := make([]NodeResp, n)
	var b [4]byte
	for i := range resps {
		lo, err := readCount(br, 1<<40, "first child")
		if err != nil {
			return nil, err
		}
		nc, err := readCount(br, chunk.MaxFanout, "child count")
		if err != nil {
			return nil, err
		}
		resps[i].Lo = lo
		resps[i].Children = make([]Child, nc)
		for j := range resps[i].Children {
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return nil, fmt.Errorf("%w: child hash: %v", ErrFormat, err)
			}
			c := Child{Sum: Short(binary.LittleEndian.Uint32(b[:])), Chunks: 1}
			if !leaf[i] {
				if c.Chunks, err = readCount(br, 1<<40, "chunk count"); err != nil {
					return nil, err
				}
				if c.Chunks == 0 {
					return nil, fmt.Errorf("%w: empty node", ErrFormat)
				}
			}
			resps[i].Children[j] = c
		}
	}
	return resps, atEOF(br)
}

// EncodeChunksReq writes a chunks request: the ranges, then (only with a
// dictionary, under its own magic) the dictionary's ranges and checksum.
func EncodeChunksReq(w io.Writer, q *ChunksReq) error {
	magic := chunksMagic
	if len(q.Dict) > 0 {
		magic = chunksDicMagic
	}
	u := newFrame(w, magic, len(q.Ranges))
	ranges := func(rs []RangeReq) {
		for _, r := range rs {
			u.uv(uint64(r.File))
			u.uv(uint64(r.Lo))
			u.uv(uint64(r.Hi - r.Lo))
		}
	}
	ranges(q.Ranges)
	if len(q.Dict) > 0 {
		u.uv(uint64(len(q.Dict)))
		ranges(q.Dict)
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], q.DictSum)
		u.w.Write(b[:])
	}
	return u.w.Flush()
}

// DecodeChunksReq reads a chunks request: at most MaxRangeChunks chunks
// asked and as many in the dictionary, every range non-empty (the server
// checks the ranges against the tree, and the dictionary's bytes).
func DecodeChunksReq(r io.Reader) (*ChunksReq, error) {
	br, which, n, err := readFrame(r, []string{chunksMagic, chunksDicMagic}, MaxRangeChunks, "range count")
	if err != nil {
		return nil, err
	}
	q := &ChunksReq{}
	if q.Ranges, err = readRanges(br, n, "chunks"); err != nil {
		return nil, err
	}
	if which == 1 {
		if n, err = readCount(br, MaxRangeChunks, "dictionary range count"); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: empty dictionary", ErrFormat)
		}
		if q.Dict, err = readRanges(br, n, "dictionary"); err != nil {
			return nil, err
		}
		var b [8]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("%w: dictionary checksum: %v", ErrFormat, err)
		}
		q.DictSum = binary.LittleEndian.Uint64(b[:])
	}
	return q, atEOF(br)
}

// readRanges reads n ranges of at most MaxRangeChunks chunks in all.
func readRanges(br *bufio.Reader, n int, what string) ([]RangeReq, error) {
	reqs := make([]RangeReq, n)
	total := 0
	for i := range reqs {
		var v [3]int
		for j := range v {
			var err error
			if v[j], err = readCount(br, 1<<40, what+" range"); err != nil {
				return nil, err
			}
		}
		if v[2] == 0 {
			return nil, fmt.Errorf("%w: empty %s range", ErrFormat, what)
		}
		total += v[2]
		if total > MaxRangeChunks {
			return nil, fmt.Errorf("%w: more than %d %s chunks", ErrFormat, MaxRangeChunks, what)
		}
		reqs[i] = RangeReq{v[0], v[1], v[1] + v[2]}
	}
	return reqs, nil
}

// ChunkReader reads the chunks of a chunks reply (after the stream's zstd
// decompression): the magic, then every chunk of every range as a length
// and its bytes.
type ChunkReader struct {
	br  *bufio.Reader
	max int
	hdr bool
}

// NewChunkReader reads chunks of at most max bytes each from r.
func NewChunkReader(r io.Reader, max int) *ChunkReader {
	return &ChunkReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next appends the next chunk to dst[:0].
func (c *ChunkReader) Next(dst []byte) ([]byte, error) {
	if !c.hdr {
		b := make([]byte, len(chunksMagic))
		if _, err := io.ReadFull(c.br, b); err != nil || string(b) != chunksMagic {
			return nil, fmt.Errorf("%w: bad magic", ErrFormat)
		}
		c.hdr = true
	}
	n, err := readCount(c.br, uint64(c.max), "chunk length")
	if err != nil {
		return nil, err
	}
	dst = append(dst[:0], make([]byte, n)...)
	if _, err := io.ReadFull(c.br, dst); err != nil {
		return nil, fmt.Errorf("%w: chunk: %v", ErrFormat, err)
	}
	return dst, nil
}
