package store

// Table filters made in cache-sized pieces.
//
// Pebble's Bloom filter (package bloom, the RocksDB full-file format)
// sets a key's probes in one 64-byte line of the table's filter, the
// line chosen by the key's hash modulo the number of lines. Its writer
// keeps the hashes of a table's keys and sets their bits when the table
// is finished, in the order the keys came, so that for a table larger
// than the processor's caches every hash is a cache miss: a bulk's 64
// MiB table of postings has about 6M keys and a filter of 7.5 MB, and
// finishing it took a quarter of the time its table took to write.
//
// blockedFilter writes the same bytes, byte for byte, but sets the bits
// a region of the filter at a time: the hashes are first distributed by
// the region their line falls in, then each region, small enough to stay
// in cache, gets the bits of its hashes. Its name is bloom's, so tables
// written with it are read with bloom.FilterPolicy as before, and it
// reads filters with bloom's code.

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

const (
	filterLineBytes = 64
	filterLineBits  = 8 * filterLineBytes
	// filterRegionLines is the number of lines of a region: 64 KiB, an
	// eighth of the level-2 cache of the processors we run on (regions of
	// 32 to 1024 KiB measured alike in BenchmarkTableFilter).
	filterRegionLines = 1024
	// filterHashChunk is the number of hashes a chunk of a writer holds.
	filterHashChunk = 16384
)

// blockedFilter is a pebble.FilterPolicy equivalent to
// bloom.FilterPolicy(bitsPerKey): same name, same filter bytes. Its
// writers take their hash chunks from, and return them to, its pool. It
// is safe for concurrent use.
type blockedFilter struct {
	bitsPerKey int
	chunks     *sync.Pool // of *filterChunk
	scratch    *sync.Pool // of *[]uint32, for setByRegion
}

type filterChunk [filterHashChunk]uint32

var _ pebble.FilterPolicy = blockedFilter{}

func newBlockedFilter(bitsPerKey int) blockedFilter {
	return blockedFilter{bitsPerKey: bitsPerKey,
		chunks:  &sync.Pool{New: func() any { return new(filterChunk) }},
		scratch: &sync.Pool{New: func() any { return new([]uint32) }}}
}

// Name implements pebble.FilterPolicy: bloom's name.
func (f blockedFilter) Name() string { return bloom.FilterPolicy(f.bitsPerKey).Name() }

// MayContain implements pebble.FilterPolicy with bloom's code.
func (f blockedFilter) MayContain(ftype pebble.FilterType, filter, key []byte) bool {
	return bloom.FilterPolicy(f.bitsPerKey).MayContain(ftype, filter, key)
}

// NewWriter implements pebble.FilterPolicy.
func (f blockedFilter) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	if ftype != pebble.TableFilter {
		return bloom.FilterPolicy(f.bitsPerKey).NewWriter(ftype) // which panics, as bloom's does
	}
	return &blockedFilterWriter{f: f}
}

// blockedFilterWriter collects the hashes of a table's keys, as bloom's
// writer does (a key whose hash is that of the key before it adds
// nothing), and makes the filter from them at Finish.
type blockedFilterWriter struct {
	f      blockedFilter
	chunks []*filterChunk
	n      int // hashes
	last   uint32
}

// AddKey implements pebble.FilterWriter.
func (w *blockedFilterWriter) AddKey(key []byte) {
	h := bloomHash(key)
	if w.n != 0 && h == w.last {
		return
	}
	i := w.n % filterHashChunk
	if i == 0 {
		w.chunks = append(w.chunks, w.f.chunks.Get().(*filterChunk))
	}
	w.chunks[len(w.chunks)-1][i] = h
	w.n++
	w.last = h
}

// hashes calls fn with the hashes added, in chunks, in order.
func (w *blockedFilterWriter) hashes(fn func(hs []uint32)) {
	for i, c := range w.chunks {
		n := filterHashChunk
		if i == len(w.chunks)-1 {
			n = w.n - i*filterHashChunk
		}
		fn(c[:n])
	}
}

// Finish implements pebble.FilterWriter: it appends the filter of the
// keys added to dst and empties the writer. The filter is bloom's: nLines
// lines of filterLineBytes (an odd number, at least bitsPerKey bits per
// hash), then the number of probes (a byte) and nLines (4 bytes, little
// endian). The probes of hash h go into line h mod nLines.
func (w *blockedFilterWriter) Finish(dst []byte) []byte {
	nLines := 0
	if w.n != 0 {
		nLines = (w.n*w.f.bitsPerKey + filterLineBits - 1) / filterLineBits
		if nLines%2 == 0 {
			nLines++
		}
	}
	nBytes := nLines * filterLineBytes
	start := len(dst)
	dst = slices.Grow(dst, nBytes+5)[:start+nBytes+5]
	clear(dst[start:])
	if nLines != 0 {
		filter := dst[start : start+nBytes]
		probes := filterProbes(w.f.bitsPerKey)
		mod := newMod32(uint32(nLines))
		if nLines <= filterRegionLines {
			w.hashes(func(hs []uint32) { setProbes(filter, 0, hs, mod, probes) })
		} else {
			w.setByRegion(filter, nLines, mod, probes)
		}
		dst[start+nBytes] = byte(probes)
		binary.LittleEndian.PutUint32(dst[start+nBytes+1:], uint32(nLines))
	}
	for i, c := range w.chunks {
		w.f.chunks.Put(c)
		w.chunks[i] = nil
	}
	w.chunks, w.n = w.chunks[:0], 0
	return dst
}

// setByRegion sets the probes of the hashes a region of
// filterRegionLines lines at a time: it counts the hashes of each region,
// places them in scratch by region (a counting sort, which keeps their
// order), and sets each region's.
func (w *blockedFilterWriter) setByRegion(filter []byte, nLines int, mod mod32, probes uint32) {
	regions := (nLines + filterRegionLines - 1) / filterRegionLines
	starts := make([]int, regions+1)
	w.hashes(func(hs []uint32) {
		for _, h := range hs {
			starts[mod.of(h)/filterRegionLines+1]++
		}
	})
	for r := 1; r <= regions; r++ {
		starts[r] += starts[r-1]
	}
	scratch := w.f.scratch.Get().(*[]uint32)
	defer w.f.scratch.Put(scratch)
	if cap(*scratch) < w.n {
		*scratch = make([]uint32, w.n)
	}
	sorted := (*scratch)[:w.n]
	next := append([]int(nil), starts[:regions]...)
	w.hashes(func(hs []uint32) {
		for _, h := range hs {
			r := mod.of(h) / filterRegionLines
			sorted[next[r]] = h
			next[r]++
		}
	})
	for r := range regions {
		lo := r * filterRegionLines * filterLineBytes
		hi := min(lo+filterRegionLines*filterLineBytes, len(filter))
		setProbes(filter[lo:hi], uint32(r*filterRegionLines), sorted[starts[r]:starts[r+1]], mod, probes)
	}
}

// setProbes sets the probes of hashes hs in region, the part of a filter
// that starts at line first and holds the lines of all of hs. The
// arithmetic is bloom's, in 32 bits: probe i of h sets bit
// (h + i·delta) mod 512 of the line, delta being h rotated right by 17.
func setProbes(region []byte, first uint32, hs []uint32, mod mod32, probes uint32) {
	for _, h := range hs {
		delta := h>>17 | h<<15
		b := (mod.of(h) - first) * filterLineBits
		for range probes {
			bit := b + h%filterLineBits
			region[bit/8] |= 1 << (bit % 8)
			h += delta
		}
	}
}

// filterProbes is bloom's number of probes for bitsPerKey: bitsPerKey ×
// ln 2, rounded down, from 1 to 30.
func filterProbes(bitsPerKey int) uint32 {
	return min(max(uint32(float64(bitsPerKey)*0.69), 1), 30)
}

// bloomHash is the hash bloom's filters take of a key (LevelDB's, a
// variant of Murmur; the bytes after the last whole word are taken as
// signed, as RocksDB's C++ does).
func bloomHash(b []byte) uint32 {
	const (
		seed = 0xbc9f1d34
		m    = 0xc6a4a793
	)
	h := uint32(seed) ^ uint32(len(b))*m
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b)
		h *= m
		h ^= h >> 16
	}
	switch len(b) {
	case 3:
		h += uint32(int8(b[2])) << 16
		fallthrough
	case 2:
		h += uint32(int8(b[1])) << 8
		fallthrough
	case 1:
		h += uint32(int8(b[0]))
		h *= m
		h ^= h >> 24
	}
	return h
}

// mod32 computes x mod d for 32-bit x by two multiplications instead of
// a division (Lemire, Kaser and Kurz, "Faster remainder by direct
// computation", 2019: exact for every 32-bit x and d).
type mod32 struct {
	d uint64
	m uint64 // ⌈2^64 / d⌉
}

func newMod32(d uint32) mod32 { return mod32{d: uint64(d), m: ^uint64(0)/uint64(d) + 1} }

func (c mod32) of(x uint32) uint32 {
	hi, _ := bits.Mul64(c.m*uint64(x), c.d)
	return uint32(hi)
}
