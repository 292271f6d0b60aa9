// Package identity provides the fingerprint that decides that two
// documents are identical: the length of the body and the first 128 bits
// of its BLAKE3 hash in keyed mode, under a key that is a secret of the
// index (or of the run) that compares them. Two bodies are identical to
// neardup only when both the lengths and the 128 bits agree; a document
// is dropped as an exact duplicate on nothing less.
//
// Why keyed, and why not a Rabin fingerprint: Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book), 2.2 and 3.3,
// fingerprints bodies with a Rabin polynomial and asks for at least 96
// bits at web scale. A Rabin fingerprint is linear over GF(2): for bodies
// of one length, fp(a⊕b) = fp(a)⊕fp(b)⊕fp(0). Anyone who knows the
// polynomial (a public constant, or an output the attacker can query) can
// solve 64 linear equations by Gaussian elimination and write a page of
// arbitrary-looking letters whose fingerprint equals that of any page
// whose text they know — and a deduplicator that trusts the fingerprint
// then drops the victim page. A keyed cryptographic hash has no such
// structure: without the key, a collision costs about 2^64 work (birthday
// bound on 128 bits) and a collision with a given page 2^128, and the key
// never leaves the index's configuration. By chance alone, n documents
// collide with probability about n²/2^129 (10^-20 at n = 10^9), far below
// the book's 96-bit floor. BLAKE3 is already a dependency (chunk
// signatures), is a keyed PRF by design (unlike a Rabin polynomial drawn
// at random, which is still linear and needs a second hash beside it),
// and hashes a few-kilobyte document in well under a microsecond.
//
// The zero Key is the public, unkeyed BLAKE3 (b3sum --length 16 prints
// the same 32 hex digits): reproducible, for printing and comparing by
// hand, and not a security boundary. This package holds no state: keys
// are drawn by NewKey (crypto/rand) and recorded by their owner.
package identity

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/zeebo/blake3"
)

// Scheme is the name of the identity fingerprint, as configurations
// record it.
const Scheme = "blake3-keyed-128"

// LegacyScheme names the fingerprint of earlier releases: a 64-bit Rabin
// fingerprint under a public polynomial (package rabin's DefaultPoly). It
// identifies nothing: an index that holds such fingerprints does not
// trust them.
const LegacyScheme = "rabin-64"

// KeySize is the length of a key in bytes.
const KeySize = 32

// Key is the secret of a keyed fingerprint. The zero Key stands for the
// public, unkeyed hash.
type Key [KeySize]byte

// NewKey draws a key from crypto/rand.
func NewKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("identity: drawing a key: %w", err)
	}
	return k, nil
}

// ParseKey reads a key written by Key.String: 64 hex digits.
func ParseKey(s string) (Key, error) {
	var k Key
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != KeySize {
		return k, errors.New("identity: a key is 64 hex digits")
	}
	copy(k[:], b)
	return k, nil
}

// String returns the key as 64 hex digits.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// IsZero reports whether k is the zero (public) key.
func (k Key) IsZero() bool { return k == Key{} }

// Fingerprint is the identity of a body: its length and the first 128
// bits of its keyed BLAKE3 hash (Hi the first 8 bytes big-endian, Lo the
// next 8). Two bodies are identical when their Fingerprints are equal
// (==). The zero value is the fingerprint of nothing at all, not of the
// empty body.
type Fingerprint struct {
	Hi, Lo uint64
	Len    uint64
}

// String returns the 128 bits as 32 hex digits (the byte order of the hash
// output; the length is not printed).
func (f Fingerprint) String() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], f.Hi)
	binary.BigEndian.PutUint64(b[8:], f.Lo)
	return hex.EncodeToString(b[:])
}

// AppendHex appends the 32 hex digits of String to dst.
func (f Fingerprint) AppendHex(dst []byte) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], f.Hi)
	binary.BigEndian.PutUint64(b[8:], f.Lo)
	return hex.AppendEncode(dst, b[:])
}

// Hasher computes Fingerprints under one key. It holds BLAKE3's state (a
// few kilobytes): it is not safe for concurrent use; make one per
// goroutine. Sum allocates nothing.
type Hasher struct {
	h *blake3.Hasher
}

// New returns a Hasher for key k (the zero key: the public, unkeyed hash).
func New(k Key) *Hasher {
	if k.IsZero() {
		return &Hasher{h: blake3.New()}
	}
	h, err := blake3.NewKeyed(k[:])
	if err != nil {
		panic(err) // unreachable: the key has the right length
	}
	return &Hasher{h: h}
}

// Sum returns the fingerprint of body. Cost: one BLAKE3 pass over body.
func (h *Hasher) Sum(body []byte) Fingerprint {
	h.h.Reset()
	h.h.Write(body)
	var out [32]byte
	h.h.Sum(out[:0])
	return Fingerprint{Hi: binary.BigEndian.Uint64(out[:8]), Lo: binary.BigEndian.Uint64(out[8:16]), Len: uint64(len(body))}
}

// Compare orders fingerprints by (Hi, Lo, Len).
func Compare(a, b Fingerprint) int {
	switch {
	case a.Hi != b.Hi:
		return cmpU(a.Hi, b.Hi)
	case a.Lo != b.Lo:
		return cmpU(a.Lo, b.Lo)
	}
	return cmpU(a.Len, b.Len)
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}
