package sketch

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// Sketch is a header plus sample values. For slot-wise algorithms Values has
// exactly K entries (or none for an empty set); for BottomK it holds at most
// K distinct hashes in increasing order; for Proportional all kept hashes in
// increasing order. For b-bit sketches (Header.Bits < 64) each value holds
// only its low b bits. HMT and HMTDep sketches hold K = 2 + t·B values (or
// none): the first scale s as an int64, math.Float64bits of log₂ of the
// total weight, then t blocks of B one-permutation bins, block r for scale
// s + r (HMTEmpty for an empty bin); compressed ones (CompressHMT) keep the
// two leading words and hold b-bit bins, B/2 per scale for XOR pairs.
//
// The zero Sketch is invalid (no algorithm). A Sketch is a plain value: it is
// safe for concurrent reads, and its methods never retain the slices they are
// given.
type Sketch struct {
	Header Header
	Values []uint64
	// Size is the estimated or exact size of the set (or total weight for
	// weighted sketches), used by Containment; 0 if unknown.
	Size float64
}

// Validate checks that s is consistent with its header.
func (s *Sketch) Validate() error {
	h := s.Header
	if err := h.Validate(); err != nil {
		return err
	}
	n := len(s.Values)
	switch {
	case h.Algorithm == BottomK:
		if n > int(h.K) {
			return fmt.Errorf("%w: %d values > k = %d", ErrInvalid, n, h.K)
		}
	case h.Algorithm == Proportional:
	case h.Algorithm == HMT || h.Algorithm == HMTDep:
		p, bins, _ := h.HMT() // valid: checked above
		want := int(h.K)
		if h.Params&ParamXORPair != 0 {
			want = 2 + p.Scales*bins/2
		}
		if n != 0 && n != want {
			return fmt.Errorf("%w: %d values, want %d", ErrInvalid, n, want)
		}
	default:
		want := int(h.K)
		if h.Params&ParamXORPair != 0 {
			want /= 2
		}
		if n != 0 && n != want {
			return fmt.Errorf("%w: %d values, want %d", ErrInvalid, n, want)
		}
	}
	if h.Algorithm.IsSet() && h.Bits == 64 {
		for i := 1; i < n; i++ {
			if s.Values[i-1] >= s.Values[i] {
				return fmt.Errorf("%w: set sketch not strictly increasing at %d", ErrInvalid, i)
			}
		}
	}
	if h.Bits < 64 {
		for i, v := range s.Values {
			if i < 2 && (h.Algorithm == HMT || h.Algorithm == HMTDep) {
				continue // the first scale and log₂ weight stay full words
			}
			if v>>h.Bits != 0 {
				return fmt.Errorf("%w: value %d wider than %d bits", ErrInvalid, i, h.Bits)
			}
		}
	}
	if h.Algorithm == HMT || h.Algorithm == HMTDep {
		if err := validateHMT(s.Values); err != nil {
			return err
		}
	}
	if math.IsNaN(s.Size) || s.Size < 0 {
		return fmt.Errorf("%w: size %v", ErrInvalid, s.Size)
	}
	return nil
}

// Encoding format, version 1 (all integers little-endian):
//
//	magic "NDSK" | format version (1) | algorithm | alg version | bits
//	seed u64 | features u64 | params uvarint | k uvarint | size f64
//	n uvarint | values | CRC-32C (Castagnoli) of everything before it
//
// Values are 8 bytes each when bits = 64 for slot-wise sketches, uvarint
// deltas for set sketches (sorted), and bit-packed b bits each (LSB first)
// when bits < 64 — except that b-bit HMT sketches (CompressHMT) write their
// first two values (first scale, log₂ weight) as 8 bytes each before the
// packed bins; full-value HMT sketches of earlier releases decode unchanged.
const (
	magic         = "NDSK"
	formatVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendBinary appends the encoding of s to dst and returns the extended
// slice. It fails only if s is invalid. Cost: O(len(Values)), no allocation
// beyond growing dst.
func (s *Sketch) AppendBinary(dst []byte) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return dst, err
	}
	h := s.Header
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, formatVersion, byte(h.Algorithm), h.Version, h.Bits)
	dst = binary.LittleEndian.AppendUint64(dst, h.Seed)
	dst = binary.LittleEndian.AppendUint64(dst, h.Features)
	dst = binary.AppendUvarint(dst, h.Params)
	dst = binary.AppendUvarint(dst, uint64(h.K))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.Size))
	dst = binary.AppendUvarint(dst, uint64(len(s.Values)))
	switch {
	case h.Bits < 64:
		vals := s.Values
		if h.Algorithm.hmt() && len(vals) > 0 {
			// b-bit HMT: the first scale and log₂ weight as full words.
			dst = binary.LittleEndian.AppendUint64(dst, vals[0])
			dst = binary.LittleEndian.AppendUint64(dst, vals[1])
			vals = vals[2:]
		}
		var acc uint64
		var nacc uint
		b := uint(h.Bits)
		for _, v := range vals {
			acc |= v << nacc
			if nacc+b >= 64 {
				dst = binary.LittleEndian.AppendUint64(dst, acc)
				if nacc+b > 64 {
					acc = v >> (64 - nacc)
				} else {
					acc = 0
				}
				nacc = nacc + b - 64
			} else {
				nacc += b
			}
		}
		for ; nacc > 0; nacc -= min(nacc, 8) {
			dst = append(dst, byte(acc))
			acc >>= 8
		}
	case h.Algorithm.IsSet():
		var prev uint64
		for _, v := range s.Values {
			dst = binary.AppendUvarint(dst, v-prev)
			prev = v
		}
	default:
		for _, v := range s.Values {
			dst = binary.LittleEndian.AppendUint64(dst, v)
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return dst, nil
}

// MarshalBinary returns the encoding of s (see AppendBinary).
func (s *Sketch) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary decodes data (one whole encoding, as AppendBinary wrote it)
// into s, reusing s.Values' storage. Truncated input gives ErrTruncated, any
// other damage ErrCorrupt (a CRC-32C detects all burst errors up to 32 bits);
// on error s is unchanged.
func (s *Sketch) UnmarshalBinary(data []byte) error {
	_, err := s.decode(data, true)
	return err
}

// Decode decodes one encoding from the front of data into s and returns the
// rest of data, so concatenated encodings can be read one after another.
func (s *Sketch) Decode(data []byte) (rest []byte, err error) {
	return s.decode(data, false)
}

func (s *Sketch) decode(data []byte, whole bool) ([]byte, error) {
	r := reader{b: data}
	if len(data) < 4 {
		return data, ErrTruncated
	}
	if string(data[:4]) != magic {
		return data, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	r.off = 4
	fv := r.byte()
	if r.err == nil && fv != formatVersion {
		return data, fmt.Errorf("%w: format version %d not supported", ErrCorrupt, fv)
	}
	var h Header
	h.Algorithm = Algorithm(r.byte())
	h.Version = r.byte()
	h.Bits = r.byte()
	h.Seed = r.u64()
	h.Features = r.u64()
	h.Params = r.uvarint()
	k := r.uvarint()
	size := math.Float64frombits(r.u64())
	n := r.uvarint()
	if r.err != nil {
		return data, r.err
	}
	if k > math.MaxUint32 || n > uint64(len(data))*8 {
		return data, fmt.Errorf("%w: implausible k %d or n %d", ErrCorrupt, k, n)
	}
	h.K = uint32(k)
	if err := h.Validate(); err != nil {
		return data, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	vals := make([]uint64, 0, n) // decoded into a temporary so s survives errors
	vals = vals[:0]
	switch {
	case h.Bits < 64:
		if h.Algorithm.hmt() && n > 0 {
			if n < 2 {
				return data, fmt.Errorf("%w: b-bit HMT sketch of %d values", ErrCorrupt, n)
			}
			vals = append(vals, r.u64(), r.u64())
			n -= 2
		}
		b := uint64(h.Bits)
		nbytes := int((n*b + 7) / 8)
		raw := r.bytes(nbytes)
		if r.err != nil {
			return data, r.err
		}
		mask := uint64(1)<<b - 1
		for i := uint64(0); i < n; i++ {
			bit := i * b
			var v uint64
			for j := uint64(0); j < b; j += 8 - (bit+j)%8 {
				p := bit + j
				v |= uint64(raw[p/8]>>(p%8)) << j
			}
			vals = append(vals, v&mask)
		}
	case h.Algorithm.IsSet():
		var prev uint64
		for i := uint64(0); i < n && r.err == nil; i++ {
			prev += r.uvarint()
			vals = append(vals, prev)
		}
	default:
		for i := uint64(0); i < n && r.err == nil; i++ {
			vals = append(vals, r.u64())
		}
	}
	body := r.off
	sum := r.u32()
	if r.err != nil {
		return data, r.err
	}
	if crc32.Checksum(data[:body], castagnoli) != sum {
		return data, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if whole && r.off != len(data) {
		return data, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(data)-r.off)
	}
	t := Sketch{Header: h, Values: vals, Size: size}
	if err := t.Validate(); err != nil {
		return data, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	s.Header, s.Size = h, size
	s.Values = append(s.Values[:0], vals...)
	return data[r.off:], nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || len(r.b)-r.off < n {
		r.err = ErrTruncated
		return false
	}
	return true
}

func (r *reader) byte() byte {
	if !r.need(1) {
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	r.off += 8
	return binary.LittleEndian.Uint64(r.b[r.off-8:])
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	r.off += 4
	return binary.LittleEndian.Uint32(r.b[r.off-4:])
}

func (r *reader) bytes(n int) []byte {
	if !r.need(n) {
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n == 0 {
		r.err = ErrTruncated
		return 0
	}
	if n < 0 {
		r.err = fmt.Errorf("%w: varint overflow at offset %d", ErrCorrupt, r.off)
		return 0
	}
	r.off += n
	return v
}

// Clone returns a deep copy of s.
func (s *Sketch) Clone() *Sketch {
	c := *s
	c.Values = slices.Clone(s.Values)
	return &c
}
