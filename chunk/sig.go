package chunk

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"

	"github.com/zeebo/blake3"
)

// Sum is a strong 256-bit hash: of a chunk's bytes (BLAKE3-256 of the
// chunk) or of a node of a signature tree (keyed BLAKE3 of its children).
type Sum [32]byte

// String returns the hex form of s.
func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// Short returns the first 8 bytes of s as an integer (little-endian): the
// 64-bit feature a chunk contributes to file-similarity sketches.
func (s Sum) Short() uint64 { return binary.LittleEndian.Uint64(s[:8]) }

// SumChunk returns the strong hash of a chunk's bytes: BLAKE3-256.
func SumChunk(data []byte) Sum { return blake3.Sum256(data) }

// nodeKey separates node hashes from chunk hashes (a keyed BLAKE3).
var nodeKey = blake3.Sum256([]byte("neardup/chunk signature node v1"))

// Ref is a chunk of a file: where it is and its strong hash.
type Ref struct {
	Offset int64
	Length int
	Sum    Sum
}

// Node is an inner node of a signature tree: the hash of a run of children
// of the level below it (Lo up to Hi, exclusive), covering Length bytes.
type Node struct {
	Lo, Hi int
	Length int64
	Sum    Sum
}

// Fan-out of signature trees: level k+1 groups the hashes of level k by
// winnowing over them (the rightmost minimum of each hash's first 8 bytes in
// a window of MinFanout..MaxFanout children), as RDC cuts its recursive
// signatures.
const (
	MinFanout = 4
	MaxFanout = 12
)

// Signature is the recursive signature of a file (book 6.2, RDC): its chunk
// list and the tree over it whose root identifies the whole file. The zero
// value is the signature of nothing; use Sign or a Signer. A Signature is a
// plain value, safe to share once built.
type Signature struct {
	// Size is the file's length in bytes.
	Size int64
	// Chunks lists the chunks in order.
	Chunks []Ref
	// Levels holds the tree above the chunks: Levels[0] groups Chunks,
	// Levels[k] groups Levels[k-1]; the last level has one node. It is empty
	// when the file has at most one chunk.
	Levels [][]Node
	// Root identifies the file: the hash of the single top node, the hash of
	// the only chunk, or the node hash of nothing for an empty file. Two
	// files have equal roots exactly when they have equal bytes (up to
	// BLAKE3 collisions).
	Root Sum
}

// Signer computes signatures. The zero value is not usable; make one with
// NewSigner. Not safe for concurrent use; it reuses its buffers.
type Signer struct {
	ck  *Chunker
	cut *Cutter
	buf []byte
}

// NewSigner returns a Signer cutting chunks with opts.
func NewSigner(opts Options) (*Signer, error) {
	ck, err := NewChunker(nil, opts)
	if err != nil {
		return nil, err
	}
	cut, _ := NewCutter(opts)
	return &Signer{ck: ck, cut: cut, buf: make([]byte, 0, ck.max)}, nil
}

// Sign reads r to the end and returns its signature. Memory is constant in
// the length of r except for the chunk list (about 60 bytes per chunk).
// If visit is not nil it is called with each chunk's Ref and bytes (valid
// only during the call) before the next is read.
func (s *Signer) Sign(r io.Reader, visit func(Ref, []byte)) (*Signature, error) {
	s.ck.Reset(r)
	sig := &Signature{}
	for {
		c, err := s.ck.Next(s.buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		s.buf = c.Data
		ref := Ref{Offset: c.Offset, Length: len(c.Data), Sum: SumChunk(c.Data)}
		sig.Chunks = append(sig.Chunks, ref)
		sig.Size += int64(ref.Length)
		if visit != nil {
			visit(ref, c.Data)
		}
	}
	sig.buildTree()
	return sig, nil
}

// SignBytes returns the signature of data.
func (s *Signer) SignBytes(data []byte) *Signature {
	cuts := s.cut.Cuts(nil, data)
	sig := &Signature{Size: int64(len(data)), Chunks: make([]Ref, 0, len(cuts))}
	prev := 0
	for _, e := range cuts {
		sig.Chunks = append(sig.Chunks, Ref{Offset: int64(prev), Length: e - prev, Sum: SumChunk(data[prev:e])})
		prev = e
	}
	sig.buildTree()
	return sig
}

// Sign returns the signature of data with default options.
func Sign(data []byte) *Signature {
	s, _ := NewSigner(Options{})
	return s.SignBytes(data)
}

func (sig *Signature) buildTree() {
	sig.Levels = nil
	switch len(sig.Chunks) {
	case 0:
		sig.Root = nodeSum(nil)
		return
	case 1:
		sig.Root = sig.Chunks[0].Sum
		return
	}
	sums := make([]Sum, len(sig.Chunks))
	lens := make([]int64, len(sig.Chunks))
	for i, c := range sig.Chunks {
		sums[i], lens[i] = c.Sum, int64(c.Length)
	}
	for len(sums) > 1 {
		var level []Node
		lo := 0
		for _, hi := range groupCuts(sums) {
			n := Node{Lo: lo, Hi: hi, Sum: nodeSum(sums[lo:hi])}
			for _, l := range lens[lo:hi] {
				n.Length += l
			}
			level = append(level, n)
			lo = hi
		}
		sig.Levels = append(sig.Levels, level)
		sums, lens = sums[:0], lens[:0]
		for _, n := range level {
			sums = append(sums, n.Sum)
			lens = append(lens, n.Length)
		}
	}
	sig.Root = sums[0]
}

// nodeSum is the keyed BLAKE3 of the concatenated child sums.
func nodeSum(children []Sum) Sum {
	h, _ := blake3.NewKeyed(nodeKey[:])
	for i := range children {
		h.Write(children[i][:])
	}
	var s Sum
	h.Sum(s[:0])
	return s
}

// groupCuts winnows a sequence of sums into groups of MinFanout to
// MaxFanout children, keyed by each child's Short().
func groupCuts(sums []Sum) []int {
	return winnowSeq(nil, len(sums), MinFanout, MaxFanout, func(i int) uint64 { return sums[i].Short() })
}

// winnowSeq is chained winnowing over a sequence of n keys: each group
// starting at c ends after the rightmost minimum of key(e-1) over e in
// [c+min, c+max]; once at most max remain they form the last group. It
// appends the group ends to dst.
func winnowSeq(dst []int, n, min, max int, key func(int) uint64) []int {
	var r ring
	next := 0 // boundaries below next have been pushed
	for c := 0; c < n; {
		if n-c <= max {
			return append(dst, n)
		}
		lo, hi := c+min, c+max
		r.dropBefore(lo)
		if next < lo {
			next = lo
		}
		for ; next <= hi; next++ {
			r.push(next, key(next-1))
		}
		e := r.popFront().pos
		dst = append(dst, e)
		c = e
	}
	return dst
}
