package rdc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/filesim"
)

// Kind is the type of a manifest entry.
type Kind uint8

// Entry kinds.
const (
	Dir Kind = iota
	File
	Symlink
)

// Entry is one directory, regular file or symbolic link of a served tree.
type Entry struct {
	Kind Kind
	// Path is slash-separated and relative to the tree's root; a
	// directory comes before everything under it.
	Path string
	// Mode holds the permission bits (and setuid, setgid, sticky).
	Mode fs.FileMode
	// Size, Root, Depth (the signature's number of levels above the
	// chunks), Chunks and Sketch describe a file.
	Size   int64
	Root   chunk.Sum
	Depth  int
	Chunks int
	Sketch []uint64
	// Target is a symbolic link's target.
	Target string
}

// Manifest is what a server serves: the chunk options its signatures were
// made with and every entry of the tree.
type Manifest struct {
	Chunk   chunk.Options
	Entries []Entry
}

// Errors.
var (
	// ErrFormat reports a malformed message from the other side.
	ErrFormat = errors.New("rdc: malformed message")
	// ErrName reports a name that is not a plain relative path.
	ErrName = errors.New("rdc: unsafe name")
)

const (
	manifestMagic = "NDRDC1M\n"
	maxName       = 4096
	maxEntries    = 1 << 24
)

// SketchParams are the similarity sketches of the manifest: the book's
// 12 samples of 6 bits.
var SketchParams = filesim.RDC

// CheckName reports whether name is a plain relative slash path: not
// empty, not absolute, no empty, "." or ".." element, no NUL, at most 4096
// bytes.
func CheckName(name string) error {
	if name == "" || len(name) > maxName || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return fmt.Errorf("%w: %q", ErrName, name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("%w: %q", ErrName, name)
		}
	}
	return nil
}

// LinkInside reports whether a symbolic link at name with the given target
// resolves (lexically) inside the tree: a relative target that never
// climbs above the root.
func LinkInside(name, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsRune(target, 0) || len(target) > maxName {
		return false
	}
	depth := strings.Count(name, "/") // directories above the link
	for _, el := range strings.Split(target, "/") {
		switch el {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return false
			}
		default:
			depth++
		}
	}
	return true
}

// Encode writes m in its wire form: a magic, the chunk sizes, then every
// entry (integers as uvarints).
func (m *Manifest) Encode(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(x uint64) { bw.Write(tmp[:binary.PutUvarint(tmp[:], x)]) }
	str := func(s string) { uv(uint64(len(s))); bw.WriteString(s) }
	bw.WriteString(manifestMagic)
	uv(uint64(m.Chunk.Min))
	uv(uint64(m.Chunk.Avg))
	uv(uint64(m.Chunk.Max))
	uv(uint64(len(m.Entries)))
	for i := range m.Entries {
		e := &m.Entries[i]
		bw.WriteByte(byte(e.Kind))
		str(e.Path)
		uv(uint64(e.Mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)))
		switch e.Kind {
		case File:
			uv(uint64(e.Size))
			bw.Write(e.Root[:])
			uv(uint64(e.Depth))
			uv(uint64(e.Chunks))
			uv(uint64(len(e.Sketch)))
			for _, v := range e.Sketch {
				uv(v)
			}
		case Symlink:
			str(e.Target)
		}
	}
	return bw.Flush()
}

// DecodeManifest reads a manifest, checking every name and bound.
func DecodeManifest(r io.Reader) (*Manifest, error) {
	br := bufio.NewReader(r)
	bad := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("%w: manifest %s: %v", ErrFormat, what, err)
		}
		return fmt.Errorf("%w: manifest %s", ErrFormat, what)
	}
	magic := make([]byte, len(manifestMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != manifestMagic {
		return nil, bad("magic", nil)
	}
	var v [4]uint64
	for i := range v {
		x, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, bad("header", err)
		}
		v[i] = x
	}
	m := &Manifest{Chunk: chunk.Options{Min: int(min(v[0], 1<<31)), Avg: int(min(v[1], 1<<31)), Max: int(min(v[2], 1<<31))}}
	if err := m.Chunk.Validate(); err != nil {
		return nil, bad("chunk options", err)
	}
	if v[3] > maxEntries {
		return nil, bad("entry count", nil)
	}
	n := int(v[3])
	str := func() (string, error) {
		l, err := binary.ReadUvarint(br)
		if err != nil {
			return "", err
		}
		if l > maxName {
			return "", errors.New("name too long")
		}
		b := make([]byte, l)
		_, err = io.ReadFull(br, b)
		return string(b), err
	}
	seen := make(map[string]Kind, min(n, 1<<16))
	prev := ""
	for i := 0; i < n; i++ {
		var e Entry
		k, err := br.ReadByte()
		if err != nil {
			return nil, bad("entry", err)
		}
		e.Kind = Kind(k)
		if e.Kind > Symlink {
			return nil, bad(fmt.Sprintf("entry %d kind %d", i, k), nil)
		}
		if e.Path, err = str(); err != nil {
			return nil, bad("path", err)
		}
		if err := CheckName(e.Path); err != nil {
			return nil, err
		}
		if e.Path <= prev && i > 0 {
			return nil, bad(fmt.Sprintf("entry %q out of order", e.Path), nil)
		}
		prev = e.Path
		if dir := path.Dir(e.Path); dir != "." && seen[dir] != Dir+1 {
			return nil, bad(fmt.Sprintf("entry %q before its directory", e.Path), nil)
		}
		seen[e.Path] = e.Kind + 1
		mode, err := binary.ReadUvarint(br)
		if err != nil || mode > 0o7777 {
			return nil, bad("mode", err)
		}
		e.Mode = fs.FileMode(mode)
		switch e.Kind {
		case File:
			var x [3]uint64
			if x[0], err = binary.ReadUvarint(br); err != nil || x[0] > 1<<50 {
				return nil, bad("size", err)
			}
			if _, err = io.ReadFull(br, e.Root[:]); err != nil {
				return nil, bad("root", err)
			}
			for j := 1; j < 3; j++ {
				if x[j], err = binary.ReadUvarint(br); err != nil {
					return nil, bad("depth", err)
				}
			}
			e.Size, e.Depth, e.Chunks = int64(x[0]), int(min(x[1], 64)), int(min(x[2], 1<<40))
			if x[1] > 63 || x[2] > uint64(e.Size) || (e.Size > 0 && x[2] == 0) || (x[2] <= 1) != (x[1] == 0) {
				return nil, bad(fmt.Sprintf("file %q signature shape", e.Path), nil)
			}
			k, err := binary.ReadUvarint(br)
			if err != nil || k > 1024 {
				return nil, bad("sketch", err)
			}
			e.Sketch = make([]uint64, k)
			for j := range e.Sketch {
				if e.Sketch[j], err = binary.ReadUvarint(br); err != nil {
					return nil, bad("sketch", err)
				}
			}
		case Symlink:
			if e.Target, err = str(); err != nil {
				return nil, bad("link target", err)
			}
		}
		m.Entries = append(m.Entries, e)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, bad("trailing bytes", nil)
	}
	return m, nil
}
