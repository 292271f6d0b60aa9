// Package identity provides the fingerprint that decides that two
// documents are identical: the length of the body and 128 bits computed
// under a key that is a secret of the index (or of the run) that compares
// them. Two bodies are identical to neardup only when both the lengths and
// the 128 bits agree; a document is dropped as an exact duplicate on
// nothing less.
//
// Why keyed, and which: Manasse, "On the Efficient Determination of Most
// Near Neighbors" (the book), 2.2 and 3.3, fingerprints bodies with a
// Rabin polynomial and asks for at least 96 bits at web scale. A Rabin
// fingerprint is linear over GF(2): for bodies of one length,
// fp(a⊕b) = fp(a)⊕fp(b)⊕fp(0). Anyone who knows the polynomial (a public
// constant, or outputs the attacker can query) solves 64 linear equations
// by Gaussian elimination and writes a page of arbitrary letters whose
// fingerprint equals that of any page whose text they know, and a
// deduplicator that trusts it drops the victim. Here (scheme
// rabin2-blake3-keyed-128, the issue's "Rabin polynomial drawn per index
// plus a second independent hash") the body passes through two Rabin
// fingerprints under secret primitive polynomials P1 ≠ P2 drawn from the
// key, both computed in one pass (rabin.Hash2: with AVX-512 VPCLMULQDQ
// sixteen 16-byte lanes per polynomial, 256 bytes per step), and their 128
// bits with the length are hashed by BLAKE3 in keyed mode, whose first 16
// bytes are the fingerprint. Keyed BLAKE3 of the whole body (one keyed
// PRF, 2^-128 per attempt at every length, and collision-resistant even
// for whoever holds the key) was measured and rejected for its cost:
// zeebo/blake3 (SSE4.1/AVX2 assembly, no AVX-512) takes 3.4 µs for a 2 KB
// body, lukechampine.com/blake3 (AVX-512 for 16 chunks at once) longer, as
// much as the whole rest of a 300-word document's sketch, against 0.2 µs
// here.
//
// The attacker's bound. The key is 32 bytes from crypto/rand; the output
// is 128 bits and the length, compared in full. Without the key nobody can
// compute a fingerprint: the polynomials are unknown, and BLAKE3's keyed
// mode is a PRF, so fingerprints seen (index check prints them) tell
// nothing of the polynomials beyond which bodies are equal. Two different
// bodies of at most n bytes collide only if both polynomials divide the
// difference of the bodies, a polynomial of degree at most 8n+64 with at
// most n/8+1 irreducible factors of degree 64 among the 2^57.0 primitive
// ones; for bodies chosen without the key (an attacker's included, however
// many outputs of the public `neardup fingerprint` it computed) that is at
// most ((n/8+1)/2^57)² per pair, plus 2^-128 for BLAKE3's 128 bits:
// 2^-98 at n = 2 KB, 2^-93 at 10 KB, 2^-80 at 1 MB, 2^-68 at 64 MB. An
// attacker who plants q pages against v victims succeeds with probability
// at most q·v times that (q·v = 2^40 on 10 KB pages: 2^-53); seeing
// which attempts failed rules out a few polynomials each and changes the
// bound by nothing that matters. The public command helps nothing: without
// --key it computes under the zero key, whose polynomials and BLAKE3 key
// are unrelated to an index's, so linear algebra over it forges
// collisions of the public form only (TestForgedCollisionIsNotADuplicate).
// Whoever holds the key (the index's stored configuration, a --key-file)
// can forge at will, by linear algebra over the two known polynomials:
// keep the key as private as the store. The bound is weaker than keyed
// BLAKE3's flat 2^-128 for long bodies; by chance alone (no attacker)
// collisions are rarer still, about N²/2^129 among N documents.
//
// The zero Key is the public key: reproducible, for printing and comparing
// by hand, and not a security boundary. This package holds no state: keys
// are drawn by NewKey (crypto/rand) and recorded by their owner.
package identity

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zeebo/blake3"

	"github.com/neardup/neardup/rabin"
)

// Scheme is the name of the identity fingerprint, as configurations
// record it.
const Scheme = "rabin2-blake3-keyed-128"

// LegacyScheme names the fingerprint of earlier releases: a 64-bit Rabin
// fingerprint under a public polynomial (package rabin's DefaultPoly). It
// identifies nothing: an index that holds such fingerprints does not
// trust them.
const LegacyScheme = "rabin-64"

// KeySize is the length of a key in bytes.
const KeySize = 32

// Key is the secret of a keyed fingerprint. The zero Key is the public
// key.
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

// Fingerprint is the identity of a body: its length and 128 bits (Hi the
// first 8 bytes of the keyed BLAKE3 output, big-endian, Lo the next 8). Two bodies are identical when their Fingerprints are equal
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

// Hasher computes Fingerprints under one key. It holds two Rabin tables
// and BLAKE3's state (tens of kilobytes): it is not safe for concurrent
// use; make one per goroutine. New costs about a millisecond for the first
// Hasher of a key (it draws two primitive polynomials), a BLAKE3 key setup
// after; Sum allocates nothing and copies nothing.
type Hasher struct {
	r1, r2 *rabin.Table
	fin    *blake3.Hasher
}

// polyContext separates the key's uses: the polynomials are drawn from
// the keyed BLAKE3 output of this string, the fingerprints finalized by
// the keyed BLAKE3 of 24 bytes, which no polynomial draw hashes.
const polyContext = "neardup identity: the two secret Rabin polynomials"

// New returns a Hasher for key k (the zero key: the public one). The
// first Hasher of a key draws its two polynomials and builds their tables
// (about a millisecond); later ones, in any goroutine, share those
// read-only tables (rabin.Table is safe for concurrent use), so a pool of
// workers, or a Sketcher made per request, pays it once per key.
func New(k Key) *Hasher {
	fin, err := blake3.NewKeyed(k[:])
	if err != nil {
		panic(err) // unreachable: the key has the right length
	}
	t := tablesOf(k, fin)
	fin.Reset()
	return &Hasher{r1: t[0], r2: t[1], fin: fin}
}

// tables holds the Rabin tables of the keys in use: a handful per process
// (the public key, an index's, a run's). It forgets them all past
// maxTables keys, so a long-lived process that meets many keys does not
// grow.
var tables struct {
	sync.Mutex
	m map[Key][2]*rabin.Table
}

const maxTables = 16

// tablesOf returns the tables of k's two polynomials, drawn from fin (the
// keyed BLAKE3 of k, which it leaves written to) when not already known.
func tablesOf(k Key, fin *blake3.Hasher) [2]*rabin.Table {
	tables.Lock()
	defer tables.Unlock()
	if t, ok := tables.m[k]; ok {
		return t
	}
	fin.WriteString(polyContext)
	d := fin.Digest()
	var polys [2]rabin.Poly
	var b [8]byte
	for i := 0; i < 2; {
		d.Read(b[:])
		p := rabin.Poly(binary.LittleEndian.Uint64(b[:]) | 1<<63) // the x^0 term
		if rabin.IsPrimitive(p) && (i == 0 || p != polys[0]) {
			polys[i] = p
			i++
		}
	}
	t := [2]*rabin.Table{rabin.New(polys[0]), rabin.New(polys[1])}
	if tables.m == nil || len(tables.m) >= maxTables {
		tables.m = map[Key][2]*rabin.Table{}
	}
	tables.m[k] = t
	return t
}

// Sum returns the fingerprint of body. Cost: one carry-less pass over
// body for both Rabin fingerprints (rabin.Hash2) and one BLAKE3
// compression.
func (h *Hasher) Sum(body []byte) Fingerprint {
	var in [24]byte
	f1, f2 := rabin.Hash2(h.r1, h.r2, body)
	binary.LittleEndian.PutUint64(in[:], f1)
	binary.LittleEndian.PutUint64(in[8:], f2)
	binary.LittleEndian.PutUint64(in[16:], uint64(len(body)))
	h.fin.Reset()
	h.fin.Write(in[:])
	var out [32]byte
	h.fin.Sum(out[:0])
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
