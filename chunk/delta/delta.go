// Package delta provides sync plans and delta files between chunked files:
// which chunks of a new file are already present in old ones, the bytes that
// must be sent, and the rebuilding of the new file from the old ones plus a
// delta, verified by the new file's signature root (Manasse, "On the
// Efficient Determination of Most Near Neighbors" (the book) 6.2, Remote
// Differential Compression).
//
// A plan matches the new file's chunks (package chunk) against every chunk
// of the old files by strong hash; matched chunks become copy operations
// from an old file, unmatched ones literal bytes, and adjacent operations
// are merged. Because winnowing cut points move with the data, an edit
// costs only the chunks it touches. A delta file carries the operations,
// the literal bytes, and the new file's size and signature root; Apply
// streams the rebuilt file to a writer in constant memory and fails with
// ErrVerify unless the result has exactly that root.
//
// This is not a network protocol (RDC's recursive signature exchange is
// summarized by Plan.SignatureBytes, not implemented), and it does not
// compress literals.
package delta

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/chunk"
)

// Errors.
var (
	ErrFormat = errors.New("delta: malformed delta file")
	ErrVerify = errors.New("delta: rebuilt file does not match the signature root")
	ErrSource = errors.New("delta: old file does not match the delta")
)

// Source is an old file a plan may copy from.
type Source struct {
	// Name identifies the file in the delta (a path relative to the old
	// directory, or the old file's name).
	Name string
	Sig  *chunk.Signature
}

// Op is one operation of a plan: copy Length bytes from old file Source at
// Offset, or, when Source is -1, send the Length bytes of the new file at
// Offset literally.
type Op struct {
	Source int
	Offset int64
	Length int64
}

// Plan says how to build a new file from old ones. A plain value.
type Plan struct {
	// Sources are the old files the operations copy from (only those).
	Sources []Source
	Ops     []Op
	// NewSize and NewRoot describe the new file.
	NewSize int64
	NewRoot chunk.Sum
	// Chunks counts the new file's chunks and Present those found in an
	// old file; CopyBytes and LiteralBytes split NewSize accordingly.
	Chunks, Present         int
	CopyBytes, LiteralBytes int64
	// SignatureBytes is what an RDC-style exchange of the new file's
	// recursive signature would send: the root, then the child hashes of
	// every tree node not known on the old side (32 bytes each).
	SignatureBytes int64
}

type loc struct {
	src int
	off int64
}

// NewPlan plans the new file (signature nsig) against old sources. Cost:
// O(old chunks + new chunks), with a hash map of all old chunks.
func NewPlan(sources []Source, nsig *chunk.Signature) *Plan {
	have := make(map[chunk.Sum]loc)
	nodes := make(map[chunk.Sum]bool)
	for i, s := range sources {
		for _, c := range s.Sig.Chunks {
			if _, ok := have[c.Sum]; !ok {
				have[c.Sum] = loc{i, c.Offset}
			}
		}
		for _, l := range s.Sig.Levels {
			for _, n := range l {
				nodes[n.Sum] = true
			}
		}
		nodes[s.Sig.Root] = true
	}
	p := &Plan{Sources: sources, NewSize: nsig.Size, NewRoot: nsig.Root, Chunks: len(nsig.Chunks)}
	for _, c := range nsig.Chunks {
		op := Op{Source: -1, Offset: c.Offset, Length: int64(c.Length)}
		if l, ok := have[c.Sum]; ok {
			op.Source, op.Offset = l.src, l.off
			p.Present++
			p.CopyBytes += op.Length
		} else {
			p.LiteralBytes += op.Length
		}
		if n := len(p.Ops); n > 0 {
			last := &p.Ops[n-1]
			if last.Source == op.Source && last.Offset+last.Length == op.Offset {
				last.Length += op.Length
				continue
			}
		}
		p.Ops = append(p.Ops, op)
	}
	// Keep only the sources the operations use, renumbered.
	used := make(map[int]int)
	p.Sources = nil
	for i := range p.Ops {
		s := p.Ops[i].Source
		if s < 0 {
			continue
		}
		j, ok := used[s]
		if !ok {
			j = len(p.Sources)
			used[s] = j
			p.Sources = append(p.Sources, sources[s])
		}
		p.Ops[i].Source = j
	}
	p.SignatureBytes = signatureBytes(nsig, nodes, have)
	return p
}

// signatureBytes walks the new tree from the root: a known node costs
// nothing more, an unknown one sends its children's hashes.
func signatureBytes(sig *chunk.Signature, nodes map[chunk.Sum]bool, have map[chunk.Sum]loc) int64 {
	total := int64(32) // the root
	if nodes[sig.Root] || len(sig.Levels) == 0 {
		return total
	}
	var walk func(level, i int)
	walk = func(level, i int) {
		n := sig.Levels[level][i]
		if nodes[n.Sum] {
			return
		}
		total += 32 * int64(n.Hi-n.Lo)
		if level > 0 {
			for c := n.Lo; c < n.Hi; c++ {
				walk(level-1, c)
			}
		}
	}
	top := len(sig.Levels) - 1
	for i := range sig.Levels[top] {
		walk(top, i)
	}
	return total
}

const magic = "NDDELTA1"

// Write writes the delta of plan p to w, reading literal bytes from the new
// file newData. Format: magic, new size and root, the sources (name and
// size), then the operations (copy: source, offset, length; literal:
// length and bytes), all integers as uvarints.
func Write(w io.Writer, p *Plan, newData io.ReaderAt) error {
	bw := bufio.NewWriter(w)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(x uint64) { bw.Write(tmp[:binary.PutUvarint(tmp[:], x)]) }
	bw.WriteString(magic)
	uv(uint64(p.NewSize))
	bw.Write(p.NewRoot[:])
	uv(uint64(len(p.Sources)))
	for _, s := range p.Sources {
		uv(uint64(len(s.Name)))
		bw.WriteString(s.Name)
		uv(uint64(s.Sig.Size))
	}
	uv(uint64(len(p.Ops)))
	for _, op := range p.Ops {
		if op.Source >= 0 {
			bw.WriteByte(0)
			uv(uint64(op.Source))
			uv(uint64(op.Offset))
			uv(uint64(op.Length))
			continue
		}
		bw.WriteByte(1)
		uv(uint64(op.Length))
		if _, err := io.Copy(bw, io.NewSectionReader(newData, op.Offset, op.Length)); err != nil {
			return fmt.Errorf("delta: reading new file at %d: %w", op.Offset, err)
		}
	}
	return bw.Flush()
}

// Header is the start of a delta file.
type Header struct {
	NewSize     int64
	NewRoot     chunk.Sum
	Names       []string
	SourceSizes []int64
}

// maxName bounds source names read from a delta.
const maxName = 1 << 16

func readHeader(br *bufio.Reader) (*Header, error) {
	m := make([]byte, len(magic))
	if _, err := io.ReadFull(br, m); err != nil || string(m) != magic {
		return nil, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	h := &Header{}
	size, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	h.NewSize = int64(size)
	if _, err := io.ReadFull(br, h.NewRoot[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxName {
		return nil, fmt.Errorf("%w: source count", ErrFormat)
	}
	for i := uint64(0); i < n; i++ {
		l, err := binary.ReadUvarint(br)
		if err != nil || l > maxName {
			return nil, fmt.Errorf("%w: source name", ErrFormat)
		}
		name := make([]byte, l)
		if _, err := io.ReadFull(br, name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		sz, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		h.Names = append(h.Names, string(name))
		h.SourceSizes = append(h.SourceSizes, int64(sz))
	}
	return h, nil
}

// Opener opens old file i (named name in the delta) for reading; Apply
// checks its size against the delta's record. Returning a nil ReaderAt
// means the file is missing.
type Opener func(i int, name string) (r io.ReaderAt, size int64, err error)

// Apply rebuilds the new file from delta and the old files given by open,
// writing it to dst, and verifies that the result has the delta's size and
// signature root (computed with opts, which must be the options the plan's
// signatures were made with). It returns the header read. Memory is
// constant in the file sizes.
func Apply(dst io.Writer, delta io.Reader, open Opener, opts chunk.Options) (*Header, error) {
	br := bufio.NewReader(delta)
	h, err := readHeader(br)
	if err != nil {
		return nil, err
	}
	srcs := make([]io.ReaderAt, len(h.Names))
	for i, name := range h.Names {
		r, size, err := open(i, name)
		if err != nil {
			return h, err
		}
		if size != h.SourceSizes[i] {
			return h, fmt.Errorf("%w: %s has %d bytes, delta expects %d", ErrSource, name, size, h.SourceSizes[i])
		}
		srcs[i] = r
	}
	signer, err := chunk.NewSigner(opts)
	if err != nil {
		return h, err
	}
	pr, pw := io.Pipe()
	type result struct {
		sig *chunk.Signature
		err error
	}
	done := make(chan result, 1)
	go func() {
		sig, err := signer.Sign(pr, nil)
		pr.CloseWithError(err)
		done <- result{sig, err}
	}()
	written, err := applyOps(io.MultiWriter(dst, pw), br, srcs, h)
	pw.CloseWithError(err)
	res := <-done
	if err != nil {
		return h, err
	}
	if res.err != nil {
		return h, res.err
	}
	if written != h.NewSize || res.sig.Root != h.NewRoot {
		return h, fmt.Errorf("%w: got %d bytes, root %v; want %d bytes, root %v", ErrVerify, written, res.sig.Root, h.NewSize, h.NewRoot)
	}
	return h, nil
}

func applyOps(w io.Writer, br *bufio.Reader, srcs []io.ReaderAt, h *Header) (int64, error) {
	nops, err := binary.ReadUvarint(br)
	if err != nil {
		return 0, fmt.Errorf("%w: op count", ErrFormat)
	}
	var written int64
	for i := uint64(0); i < nops; i++ {
		kind, err := br.ReadByte()
		if err != nil {
			return written, fmt.Errorf("%w: op %d: %v", ErrFormat, i, err)
		}
		switch kind {
		case 0:
			var v [3]uint64
			for k := range v {
				if v[k], err = binary.ReadUvarint(br); err != nil {
					return written, fmt.Errorf("%w: op %d: %v", ErrFormat, i, err)
				}
			}
			src, off, n := v[0], int64(v[1]), int64(v[2])
			if src >= uint64(len(srcs)) || off < 0 || n < 0 || off+n > h.SourceSizes[src] || written+n > h.NewSize {
				return written, fmt.Errorf("%w: op %d copies outside its source", ErrFormat, i)
			}
			m, err := io.Copy(w, io.NewSectionReader(srcs[src], off, n))
			written += m
			if err != nil {
				return written, err
			}
			if m != n {
				return written, fmt.Errorf("%w: %s is shorter than recorded", ErrSource, h.Names[src])
			}
		case 1:
			n, err := binary.ReadUvarint(br)
			if err != nil || int64(n) < 0 || written+int64(n) > h.NewSize {
				return written, fmt.Errorf("%w: op %d literal length", ErrFormat, i)
			}
			m, err := io.CopyN(w, br, int64(n))
			written += m
			if err != nil {
				return written, fmt.Errorf("%w: op %d literal: %v", ErrFormat, i, err)
			}
		default:
			return written, fmt.Errorf("%w: op %d has kind %d", ErrFormat, i, kind)
		}
	}
	return written, nil
}

// ReadHeader reads the header at the start of a delta: what it claims
// the new file is (size, root) and which old files it copies from. A
// caller checks the claims (against a size cap, the free space) before
// Apply writes anything.
func ReadHeader(r io.Reader) (*Header, error) { return readHeader(bufio.NewReader(r)) }
