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

// Limits of one request.
const (
	// MaxNodeReqs bounds the nodes asked in one request.
	MaxNodeReqs = 1 << 16
	// MaxRangeChunks bounds the chunks asked in one request, and
	// MaxRangeBytes their total length.
	MaxRangeChunks = 1 << 16
	MaxRangeBytes  = 64 << 20
	// maxReqBytes bounds a request body.
	maxReqBytes = 4 << 20
)

const (
	nodesMagic  = "NDRDC1N\n"
	chunksMagic = "NDRDC1C\n"
)

type uvWriter struct {
	w   *bufio.Writer
	tmp [binary.MaxVarintLen64]byte
}

func (u *uvWriter) uv(x uint64) { u.w.Write(u.tmp[:binary.PutUvarint(u.tmp[:], x)]) }

// EncodeNodeReqs writes a nodes request.
func EncodeNodeReqs(w io.Writer, reqs []NodeReq) error {
	u := &uvWriter{w: bufio.NewWriter(w)}
	u.w.WriteString(nodesMagic)
	u.uv(uint64(len(reqs)))
	for _, r := range reqs {
		u.uv(uint64(r.File))
		u.uv(uint64(r.Level))
		u.uv(uint64(r.Index))
	}
	return u.w.Flush()
}

func readMagic(br *bufio.Reader, magic string) error {
	b := make([]byte, len(magic))
	if _, err := io.ReadFull(br, b); err != nil || string(b) != magic {
		return fmt.Errorf("%w: bad magic", ErrFormat)
	}
	return nil
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

// DecodeNodeReqs reads a nodes request (at most MaxNodeReqs items; the
// values are checked against the tree by the server).
func DecodeNodeReqs(r io.Reader) ([]NodeReq, error) {
	br := bufio.NewReader(r)
	if err := readMagic(br, nodesMagic); err != nil {
		return nil, err
	}
	n, err := readCount(br, MaxNodeReqs, "node count")
	if err != nil {
		return nil, err
	}
	reqs := make([]NodeReq, n)
	for i := range reqs {
		var v [3]uint64
		for j := range v {
			if v[j], err = binary.ReadUvarint(br); err != nil || v[j] > 1<<40 {
				return nil, fmt.Errorf("%w: node %d", ErrFormat, i)
			}
		}
		reqs[i] = NodeReq{int(v[0]), int(v[1]), int(v[2])}
	}
	return reqs, atEOF(br)
}

// EncodeNodeResps writes the answers to a nodes request, in its order:
// per node the first child's index and the child count, then per child its
// 32-bit hash and, for node children (leaf is false), its chunk count.
func EncodeNodeResps(w io.Writer, resps []NodeResp, leaf []bool) error {
	u := &uvWriter{w: bufio.NewWriter(w)}
	u.w.WriteString(nodesMagic)
	u.uv(uint64(len(resps)))
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
	br := bufio.NewReader(r)
	if err := readMagic(br, nodesMagic); err != nil {
		return nil, err
	}
	n, err := readCount(br, MaxNodeReqs, "node count")
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

// EncodeRangeReqs writes a chunks request.
func EncodeRangeReqs(w io.Writer, reqs []RangeReq) error {
	u := &uvWriter{w: bufio.NewWriter(w)}
	u.w.WriteString(chunksMagic)
	u.uv(uint64(len(reqs)))
	for _, r := range reqs {
		u.uv(uint64(r.File))
		u.uv(uint64(r.Lo))
		u.uv(uint64(r.Hi - r.Lo))
	}
	return u.w.Flush()
}

// DecodeRangeReqs reads a chunks request: at most MaxRangeChunks chunks
// in all, every range non-empty.
func DecodeRangeReqs(r io.Reader) ([]RangeReq, error) {
	br := bufio.NewReader(r)
	if err := readMagic(br, chunksMagic); err != nil {
		return nil, err
	}
	n, err := readCount(br, MaxRangeChunks, "range count")
	if err != nil {
		return nil, err
	}
	reqs := make([]RangeReq, n)
	total := 0
	for i := range reqs {
		var v [3]int
		for j := range v {
			if v[j], err = readCount(br, 1<<40, "range"); err != nil {
				return nil, err
			}
		}
		if v[2] == 0 {
			return nil, fmt.Errorf("%w: empty range", ErrFormat)
		}
		total += v[2]
		if total > MaxRangeChunks {
			return nil, fmt.Errorf("%w: more than %d chunks asked", ErrFormat, MaxRangeChunks)
		}
		reqs[i] = RangeReq{v[0], v[1], v[1] + v[2]}
	}
	return reqs, atEOF(br)
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
		if err := readMagic(c.br, chunksMagic); err != nil {
			return nil, err
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

func putUvarint(b []byte, x uint64) int { return binary.PutUvarint(b, x) }
