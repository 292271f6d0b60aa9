package store

import (
	"encoding/binary"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestOneFlipMatches checks the syndrome search against flipping every
// bit of chunks of several sizes, and that an intact or twice-damaged
// payload is not taken for a single flip (with a 32-bit checksum a false
// match has odds of about 8·len/2^32; these seeds have none).
func TestOneFlipMatches(t *testing.T) {
	st := rng.New(rng.Key(31, 4))
	for _, n := range []int{1, 2, 7, 100, 1000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(st.Uint64())
		}
		sum := walCRC(b)
		if oneFlipMatches(b, sum) {
			t.Errorf("n=%d: an intact payload matched a flip", n)
		}
		for bit := range n * 8 {
			b[bit/8] ^= 1 << (bit % 8)
			if !oneFlipMatches(b, sum) {
				t.Fatalf("n=%d: flip of bit %d not found", n, bit)
			}
			if n > 1 {
				other := (bit + 8) % (n * 8)
				b[other/8] ^= 1 << (other % 8)
				if oneFlipMatches(b, sum) {
					t.Errorf("n=%d: two flips (bits %d, %d) taken for one", n, bit, other)
				}
				b[other/8] ^= 1 << (other % 8)
			}
			b[bit/8] ^= 1 << (bit % 8)
		}
	}
}

// TestOneBitFromValid flips each bit of a whole chunk (header included)
// and checks that the chunk is found one bit from valid.
func TestOneBitFromValid(t *testing.T) {
	payload := []byte("a record of the write-ahead log, or an edit of the MANIFEST")
	for _, typ := range []byte{1, 5, 9} {
		hs := walHeaderSize(typ)
		chunk := make([]byte, hs+len(payload))
		binary.LittleEndian.PutUint16(chunk[4:], uint16(len(payload)))
		chunk[6] = typ
		if hs > walLegacyHeader {
			binary.LittleEndian.PutUint32(chunk[7:], 42)
		}
		copy(chunk[hs:], payload)
		binary.LittleEndian.PutUint32(chunk, walCRC(chunk[6:]))
		blk := append(chunk, make([]byte, 64)...) // the rest of the block
		if _, ok := chunkAt(blk, 0); !ok {
			t.Fatalf("type %d: intact chunk does not read", typ)
		}
		for bit := range len(chunk) * 8 {
			blk[bit/8] ^= 1 << (bit % 8)
			if _, ok := chunkAt(blk, 0); ok {
				t.Fatalf("type %d: chunk with bit %d flipped reads", typ, bit)
			}
			if !oneBitFromValid(blk, 0) {
				t.Errorf("type %d: flip of bit %d not found", typ, bit)
			}
			blk[bit/8] ^= 1 << (bit % 8)
		}
	}
}
