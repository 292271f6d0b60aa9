package feature

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/rabin"
)

// asciiPath is Extract's one-pass route for ASCII text (plain text, or the
// visible text of an HTML page whose zones do not matter): it finds the
// words, case- and digit-folds them, fingerprints them and slides the
// shingle window over them without writing the normalized text or a token
// list, and gives exactly the ids of the general path (tokenize, hashTokens,
// emit), which the tests check on random documents and every option.
//
// Where the CPU multiplies polynomials over GF(2) (clmul.go), the words'
// and the shingles' fingerprints are computed by multiplication (the
// carry-less route); otherwise by the tables below (the table route).
//
// The table route rests on the linearity of Rabin fingerprints (book 2.2,
// 3.3). The token fingerprint of a word b_0..b_(r-1) is affine in its
// bytes:
//
//	Hash(b) = Hash(0^r) xor sum_i M_(r-i)[b_i],  M_d[v] = v·x^(8(d-1))·x^64 mod p
//
// (appending a zero byte multiplies by x^8, so a byte's term depends only on
// its distance d from the word's end). The window consumes a word as
// step(fp xor tok) = step(fp) xor step(tok), and later drops it with
// dropOf(tok); both are affine in tok (winHasher). So step(tok) and
// dropOf(tok) are themselves sums of per-byte table entries, step∘M_d and
// dropOf∘M_d, indexed by the word's raw bytes (the tables fold case and
// digits as the options say), plus a constant per length: a word of up to
// eight bytes costs eight lookups that yield both values, and its token
// fingerprint itself is never formed. Of the per-word work only step(fp),
// eight lookups, is on the dependency chain from one shingle to the next.
//
// Words are found without a branch per byte: eight bytes at a time are
// classified with SWAR arithmetic (wordBits), 64 bytes make a bit mask, and
// the mask's transitions (word starts and ends) are listed by counting
// trailing zeros (with AVX-512, wordMasks makes each block's mask with a
// few byte compares, and spans512 lists its transitions with VPCOMPRESSB;
// with AVX2, spans256 makes the masks with byte compares and VPMOVMSKB and
// lists the transitions with TZCNT and BLSR). The input is first copied into a zero-padded buffer, so
// every word can be loaded as one 8-byte word past its end, and the copy is
// what AppendText re-tokenizes when asked for a feature's text (spans256
// case- and digit-folds it in place as it goes, so that clWords4x2F need
// not; folding is idempotent, so the tokens are the same).
//
// Tables: 64 KiB, immutable after newASCIIPath; the buffers are the
// Extractor's (not safe for concurrent use).
type asciiPath struct {
	// s1[p][v], d1[p][v]: step and dropOf (without dropOf's constant) of
	// M_(8-p)[low(v)], for the word byte v at byte p of a word's last
	// eight bytes loaded left-aligned; 0 for v = 0 and other non-word
	// bytes. s2, d2: the same for the eight bytes before those (d = 16-p).
	// step is the window's step table (winHasher.by), copied so that
	// one pointer reaches every table of the loop. cs[r], cd[r]:
	// step(Hash(0^r)) and dropOf(Hash(0^r)), r = 0..16 (256 entries, so
	// that a byte indexes them without a bounds check).
	tab    asciiTables
	digits uint64 // wordBits: 0x80 in every byte if digits are word bytes, else 0

	buf   []byte   // 8 zero bytes, the text, zero padding (load)
	st    []int32  // word start offsets in the text
	en    []int32  // word end offsets in the text
	long  []int32  // the words of more than 8 bytes (words)
	sd    []wordSD // per word: step(tok), dropOf(tok) (then the first K-1 again with Wrap)
	u     []uint64 // per word: the window's term (terms)
	lower []byte   // a word of more than 16 bytes, lowered (asciiLong)
	masks []uint64 // the word-byte mask of each 64-byte block (wordMasks)
	cl    *clRoute // the carry-less route, or nil for the table route
}

// asciiTables are the table route's tables (asciiPath.tab).
type asciiTables struct {
	s1, d1, s2, d2, step [8][256]uint64
	cs, cd               [256]uint64
	last                 [256]uint64 // lastBytes
	prev                 [256]uint64 // prev[r] keeps the last r-8 of 8 bytes, r = 9..16
}

// maxShortWord is the longest word the tables cover; longer words are
// hashed byte by byte (longWord).
const maxShortWord = 16

func newASCIIPath(o Options, word *[256]byte, tokT *rabin.Table, wh *winHasher) *asciiPath {
	a := &asciiPath{}
	a.tab.step = wh.by
	a.tab.last = lastBytes
	for r := 9; r <= maxShortWord; r++ {
		a.tab.prev[r] = ^uint64(0) << (128 - 8*r)
	}
	if o.Digits != DigitsDrop {
		a.digits = 0x8080808080808080
	}
	zero := make([]byte, maxShortWord)
	drop0 := wh.dropOf(0)
	for r := 0; r <= maxShortWord; r++ {
		c := tokT.Hash(zero[:r])
		a.tab.cs[r], a.tab.cd[r] = wh.step(c), wh.dropOf(c)
	}
	// m(v, d) = M_d[v], the linear term of byte v at distance d from the
	// end: Hash(v‖0^(d-1)) xor Hash(0^d).
	buf := make([]byte, maxShortWord)
	m := func(v byte, d int) uint64 {
		clear(buf)
		buf[0] = v
		return tokT.Hash(buf[:d]) ^ tokT.Hash(zero[:d])
	}
	for v := 1; v < 256; v++ {
		l := word[v]
		if l == 0 {
			continue // not a word byte: never looked up
		}
		for p := 0; p < 8; p++ {
			t := m(l, 8-p)
			a.tab.s1[p][v], a.tab.d1[p][v] = wh.step(t), wh.dropOf(t)^drop0
			t = m(l, 16-p)
			a.tab.s2[p][v], a.tab.d2[p][v] = wh.step(t), wh.dropOf(t)^drop0
		}
	}
	return a
}

// wordFlags returns, for the 8 ASCII bytes of x (little-endian), 0x80 in
// each word byte (letters, '_', and digits when digits is 0x80 in every
// byte) and 0 elsewhere. Each test is a byte-wise range check on all eight
// bytes at once: for c < 0x80, c + (0x80-lo) has its top bit set iff
// c >= lo, without carries between bytes, and lo <= c <= hi iff the top
// bits of c + (0x80-lo) and c + (0x7f-hi) differ (the second implies the
// first). Bytes >= 0x80 give garbage; callers check for them separately.
func wordFlags(x, digits uint64) uint64 {
	const ones = 0x0101010101010101
	y := x | 0x20*ones // A-Z to a-z (and a few non-letters to non-letters)
	letter := (y + (0x80-'a')*ones) ^ (y + (0x7f-'z')*ones)
	digit := (x + (0x80-'0')*ones) ^ (x + (0x7f-'9')*ones)
	notUnder := (x ^ '_'*ones) + 0x7f*ones // top bit clear iff the byte is '_'
	return (letter | digit&digits | ^notUnder) & (0x80 * ones)
}

// transpose8 transposes x as an 8×8 bit matrix (byte i is row i, bit j of
// it column j): bit 8i+j goes to bit 8j+i (Hacker's Delight 7-3).
func transpose8(x uint64) uint64 {
	t := (x ^ x>>7) & 0x00AA00AA00AA00AA
	x ^= t ^ t<<7
	t = (x ^ x>>14) & 0x0000CCCC0000CCCC
	x ^= t ^ t<<14
	t = (x ^ x>>28) & 0x00000000F0F0F0F0
	return x ^ t ^ t<<28
}

// load copies text into a.buf after 8 zero bytes (so that the 8 bytes
// before any offset of the text can be loaded; clWords reads 16, and the
// buffer's memory starts 8 bytes earlier) and before zero padding to
// a whole number of 64-byte blocks plus 8 bytes (so that spans reads whole
// blocks and the 8 bytes after any offset can be loaded).
func (a *asciiPath) load(text []byte) {
	n := len(text)
	size := 8 + (n+63)&^63 + 8
	if cap(a.buf) < size {
		// 8 more bytes before the buffer, which clWords may read (and
		// masks off).
		a.buf = make([]byte, 8+size, 8+size+size/4)[8:]
	}
	a.buf = a.buf[:size]
	a.buf[0], a.buf[1], a.buf[2], a.buf[3], a.buf[4], a.buf[5], a.buf[6], a.buf[7] = 0, 0, 0, 0, 0, 0, 0, 0
	copy(a.buf[8:], text)
	clear(a.buf[8+n:])
	a.buf = a.buf[:8+n]
}

// text returns the text load copied.
func (a *asciiPath) text() []byte { return a.buf[8:] }

// spans lists the words of the text, maximal runs of word bytes
// (wordFlags): word j is text()[st[j]:en[j]]. It reports false, having
// listed nothing, if the text holds a byte >= 0x80.
func (a *asciiPath) spans() bool {
	n := len(a.buf) - 8
	text := a.buf[8:cap(a.buf)]
	// A word takes at least one byte and a delimiter after it, so there
	// are at most n/2+1 words; the loop below writes one entry more.
	if cap(a.st) < n/2+2+32 {
		a.st = make([]int32, n/2+2+32, n/2+2+32+n/8) // spans512 writes up to 31 past the words
		a.en = make([]int32, n/2+2+32, n/2+2+32+n/8)
	}
	if a.cl != nil && (a.cl.spans || a.cl.span2) {
		nb := (n + 63) / 64
		st, en := a.st[:cap(a.st)], a.en[:cap(a.en)]
		var nst, nen int
		var high bool
		if a.cl.spans {
			nst, nen, high = spans512(text[:64*nb], st, en, a.digits)
		} else {
			// Folds the text too, for clWords4x2F.
			nst, nen, high = spans256(text[:64*nb], st, en, a.digits, a.cl.fold)
		}
		if high {
			return false
		}
		if nen < nst { // the text ends inside a word
			en[nen] = int32(n)
			nen++
		}
		a.st, a.en = st[:nst], en[:nen]
		return true
	}
	// The word-byte mask of every 64-byte block first (AVX-512's byte
	// compares, or SWAR arithmetic), then their transitions: two short
	// loops that keep their variables in registers.
	nb := (n + 63) / 64
	if cap(a.masks) < nb {
		a.masks = make([]uint64, nb, nb+nb/4)
	}
	masks := a.masks[:nb]
	st, en := a.st[:cap(a.st)], a.en[:cap(a.en)]
	if a.cl != nil && a.cl.wide {
		if wordMasks(masks, text[:64*nb], a.digits) {
			return false
		}
	} else if swarMasks(masks, text[:64*nb], a.digits) {
		return false
	}
	ns, ne := transitions(masks, st, en)
	if ne < ns { // the text ends inside a word
		en[ne] = int32(n)
		ne++
	}
	a.st, a.en = st[:ns], en[:ne]
	return true
}

// transitions lists the word starts (a word byte after a non-word byte)
// and ends (the reverse) of the blocks whose word-byte masks are masks
// in st and en, and returns their numbers. They are listed by counting
// trailing zeros without a branch per word: sixteen of each per block
// unconditionally (a block of text holds more only if its words average
// less than 4 bytes with their delimiters; a loop of one or two rounds of
// eight was mispredicted about once a block), the slots past the last
// word getting garbage (64 past the block), and the counts advance by the
// number of transitions. st and en have room for 16 entries past the
// words. (A function of its own so that the compiler keeps its variables
// in registers.)
//
//go:noinline
func transitions(masks []uint64, st, en []int32) (ns, ne int) {
	var carry uint64 // the byte before the block is a word byte
	var q *[8]int32
	for i, m := range masks {
		b := int32(64 * i)
		prev := m<<1 | carry
		carry = m >> 63
		s, e := m&^prev, prev&^m
		cs, ce := bits.OnesCount64(s), bits.OnesCount64(e)
		q = (*[8]int32)(st[ns : ns+8])
		q[0] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[1] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[2] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[3] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[4] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[5] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[6] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[7] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q = (*[8]int32)(st[ns+8 : ns+8+8])
		q[0] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[1] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[2] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[3] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[4] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[5] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[6] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q[7] = b + int32(bits.TrailingZeros64(s))
		s &= s - 1
		q = (*[8]int32)(en[ne : ne+8])
		q[0] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[1] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[2] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[3] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[4] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[5] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[6] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[7] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q = (*[8]int32)(en[ne+8 : ne+8+8])
		q[0] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[1] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[2] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[3] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[4] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[5] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[6] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		q[7] = b + int32(bits.TrailingZeros64(e))
		e &= e - 1
		for p := ns + 16; s != 0; p += 8 {
			q = (*[8]int32)(st[p : p+8])
			q[0] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
			q[1] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
			q[2] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
			q[3] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
			q[4] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
			q[5] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
			q[6] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
			q[7] = b + int32(bits.TrailingZeros64(s))
			s &= s - 1
		}
		for p := ne + 16; e != 0; p += 8 {
			q = (*[8]int32)(en[p : p+8])
			q[0] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
			q[1] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
			q[2] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
			q[3] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
			q[4] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
			q[5] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
			q[6] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
			q[7] = b + int32(bits.TrailingZeros64(e))
			e &= e - 1
		}
		ns += cs
		ne += ce
	}
	return ns, ne
}

// swarMasks sets masks[i] to the word-byte mask of text's 64-byte block
// i (bit j for byte 64i+j: wordFlags) and reports whether the text holds
// a byte >= 0x80. The flags of the 8 bytes of chunk c land on bits 8i+c
// (byte i of the chunk); one transpose puts byte 8c+i's on bit 8c+i.
func swarMasks(masks []uint64, text []byte, digits uint64) bool {
	var high uint64
	for i := range masks {
		blk := (*[64]byte)(text[64*i : 64*i+64])
		x := binary.LittleEndian.Uint64(blk[0:8])
		high |= x
		f := wordFlags(x, digits) >> 7
		x = binary.LittleEndian.Uint64(blk[8:16])
		high |= x
		f |= wordFlags(x, digits) >> 6
		x = binary.LittleEndian.Uint64(blk[16:24])
		high |= x
		f |= wordFlags(x, digits) >> 5
		x = binary.LittleEndian.Uint64(blk[24:32])
		high |= x
		f |= wordFlags(x, digits) >> 4
		x = binary.LittleEndian.Uint64(blk[32:40])
		high |= x
		f |= wordFlags(x, digits) >> 3
		x = binary.LittleEndian.Uint64(blk[40:48])
		high |= x
		f |= wordFlags(x, digits) >> 2
		x = binary.LittleEndian.Uint64(blk[48:56])
		high |= x
		f |= wordFlags(x, digits) >> 1
		x = binary.LittleEndian.Uint64(blk[56:64])
		high |= x
		f |= wordFlags(x, digits)
		masks[i] = transpose8(f)
	}
	return high&0x8080808080808080 != 0
}

// words sets a.sd[j] = (step(tok), dropOf(tok)) for every word j that
// spans listed, and returns their number. Its loop has no branch that
// depends on the text: it takes each word's last 8 bytes (fewer for a
// shorter word), looks them up, and lists the words of more than 8 bytes,
// to which asciiLong then adds the rest.
func (e *Extractor) words() int {
	a := e.fast
	nw := len(a.st)
	if cap(a.sd) < nw+e.o.K {
		a.sd = make([]wordSD, nw+e.o.K, (nw+e.o.K)*5/4)
	}
	if cap(a.long) < nw+1 {
		a.long = make([]int32, nw+1, (nw+1)*5/4)
	}
	a.sd = a.sd[:nw]
	nl := lookUp(a.sd, a.long[:nw+1], a.buf[:cap(a.buf)], a.st[:nw], a.en[:nw], &a.tab)
	if nl > 0 {
		e.asciiLong(a.long[:nl])
	}
	return nw
}

// lookUp sets sd[j] to the step and drop values of word j (buf is the
// text shifted by 8): its length's constants and eight lookups in each
// table by its last 8 bytes, bytes before the word masked off (byte p at
// distance 8-p from the word's end; garbage for words of more than 16
// bytes, and the mask of length r mod 256 is wrong only for words of more
// than 255 bytes, which asciiLong redoes). It lists in long the words of
// more than 8 bytes, without a branch, and returns their number; long has
// room for one more. (words' loops are functions of their own so that the
// compiler keeps their variables in registers.)
//
//go:noinline
func lookUp(sd []wordSD, long []int32, buf []byte, st, en []int32, t *asciiTables) int {
	st, en = st[:len(sd)], en[:len(sd)]
	nl := 0
	for j := range sd {
		end := int(en[j])
		n := end - int(st[j])
		r := uint8(n)
		x := le64(buf, end) & t.last[r]
		long[nl] = int32(j)
		nl += int(uint(8-n) >> 63) // n > 8
		sj, dj := t.cs[r], t.cd[r]
		sj ^= t.s1[0][uint8(x)]
		dj ^= t.d1[0][uint8(x)]
		sj ^= t.s1[1][uint8(x>>8)]
		dj ^= t.d1[1][uint8(x>>8)]
		sj ^= t.s1[2][uint8(x>>16)]
		dj ^= t.d1[2][uint8(x>>16)]
		sj ^= t.s1[3][uint8(x>>24)]
		dj ^= t.d1[3][uint8(x>>24)]
		sj ^= t.s1[4][uint8(x>>32)]
		dj ^= t.d1[4][uint8(x>>32)]
		sj ^= t.s1[5][uint8(x>>40)]
		dj ^= t.d1[5][uint8(x>>40)]
		sj ^= t.s1[6][uint8(x>>48)]
		dj ^= t.d1[6][uint8(x>>48)]
		sj ^= t.s1[7][x>>56]
		dj ^= t.d1[7][x>>56]
		sd[j] = wordSD{sj, dj}
	}
	return nl
}

// lastBytes[r] keeps the last min(r, 8) bytes of a little-endian word.
var lastBytes = func() (m [256]uint64) {
	for r := range m {
		m[r] = ^uint64(0) << (8 * max(8-r, 0))
	}
	return m
}()

// le64 returns the 8 bytes of b from i, little-endian (one load, one
// bounds check).
func le64(b []byte, i int) uint64 {
	b = b[i : i+8 : i+8]
	return binary.LittleEndian.Uint64(b)
}

// asciiLong adds to the values of the words long lists (those of more
// than 8 bytes) the terms of their bytes at distance 9 to 16 from the end
// (s2, d2, by longTerms), and recomputes those of more than 16 bytes from
// their token fingerprints, hashed from the lowered bytes.
func (e *Extractor) asciiLong(long []int32) {
	a := e.fast
	buf := a.buf[:cap(a.buf)]
	if !longTerms(a.sd, long, buf, a.st, a.en, &a.tab) {
		return
	}
	for _, j := range long {
		s, end := int(a.st[j]), int(a.en[j])
		if end-s <= maxShortWord {
			continue
		}
		a.lower = a.lower[:0]
		for _, c := range buf[8+s : 8+end] {
			a.lower = append(a.lower, e.n.word[c])
		}
		tok := e.n.hash.hash(a.lower)
		a.sd[j] = wordSD{e.wh.step(tok), e.wh.dropOf(tok)}
	}
}

// longTerms adds to sd[j], for each word j of long of 9 to 16 bytes, the
// terms of its bytes at distance 9 to 16 from the end, and reports
// whether long holds a word of more than 16 bytes, which it leaves alone.
// (A function of its own, over local slices, so that the compiler keeps
// its variables in registers.)
//
//go:noinline
func longTerms(sd []wordSD, long []int32, buf []byte, st, en []int32, t *asciiTables) (longer bool) {
	for _, j := range long {
		end := int(en[j])
		r := end - int(st[j])
		if r > maxShortWord {
			longer = true
			continue
		}
		y := le64(buf, end-8) & t.prev[uint8(r)]
		sj, dj := sd[j].s, sd[j].d
		sj ^= t.s2[0][uint8(y)]
		dj ^= t.d2[0][uint8(y)]
		sj ^= t.s2[1][uint8(y>>8)]
		dj ^= t.d2[1][uint8(y>>8)]
		sj ^= t.s2[2][uint8(y>>16)]
		dj ^= t.d2[2][uint8(y>>16)]
		sj ^= t.s2[3][uint8(y>>24)]
		dj ^= t.d2[3][uint8(y>>24)]
		sj ^= t.s2[4][uint8(y>>32)]
		dj ^= t.d2[4][uint8(y>>32)]
		sj ^= t.s2[5][uint8(y>>40)]
		dj ^= t.d2[5][uint8(y>>40)]
		sj ^= t.s2[6][uint8(y>>48)]
		dj ^= t.d2[6][uint8(y>>48)]
		sj ^= t.s2[7][y>>56]
		dj ^= t.d2[7][y>>56]
		sd[j] = wordSD{sj, dj}
	}
	return longer
}

// wordSD is the pair of values a word contributes to the window:
// step(tok) when it enters, dropOf(tok) when it leaves.
type wordSD struct{ s, d uint64 }

// stepBy returns g·x^64 mod p by the window polynomial's table
// (winHasher.step).
func stepBy(by *[8][256]uint64, g uint64) uint64 {
	return ((by[7][byte(g)] ^ by[6][byte(g>>8)]) ^ (by[5][byte(g>>16)] ^ by[4][byte(g>>24)])) ^
		((by[3][byte(g>>32)] ^ by[2][byte(g>>40)]) ^ (by[1][byte(g>>48)] ^ by[0][byte(g>>56)]))
}

// extractASCII is Extract for a document whose words spans listed: their
// features, appended to dst. It leaves e.n's text and tokens unset
// (e.lazy): AppendText re-tokenizes the text if asked.
func (e *Extractor) extractASCII(dst []Feature) []Feature {
	a := e.fast
	k := e.o.K
	e.units = e.units[:0]
	e.lazy = true
	e.occ = 0
	if a.cl != nil {
		return e.emitCL(dst, e.clTokens())
	}
	n := e.words()
	if n == 0 {
		return dst
	}
	if e.o.Wrap {
		// The window goes on over the first K-1 words again (extended
		// index j is word j mod n).
		for j := n; j < n+k-1; j++ {
			a.sd = append(a.sd, a.sd[j%n])
		}
	} else if n < k {
		// A document shorter than one shingle is one shingle of all its
		// words.
		fp := e.wh.q
		for _, w := range a.sd {
			fp = stepBy(&a.tab.step, fp) ^ w.s
		}
		e.occ = 1
		e.first = append(e.first, -1)
		return append(dst, Feature{ID: fp, Weight: 1})
	}
	return e.dedup(dst, e.chain(e.terms()))
}

// emitCL appends the features of the document whose token fingerprints
// are toks (with room for K-1 more after them) by the carry-less route:
// clWindowAll makes every shingle's id at once, and dedupSet or
// dedupCount keeps the distinct ones in order of first occurrence. It
// gives exactly emit's features for unweighted units, and serves the ASCII
// path (clTokens) and, where the CPU has the instructions, the general
// path's word units (Extract).
func (e *Extractor) emitCL(dst []Feature, toks []uint64) []Feature {
	a := e.fast
	k := e.o.K
	e.occ = 0
	n := len(toks)
	if n == 0 {
		return dst
	}
	if e.o.Wrap {
		for j := n; j < n+k-1; j++ {
			toks = append(toks, toks[j%n])
		}
	} else if n < k {
		fp := e.wh.q
		for _, t := range toks {
			fp = e.wh.step(fp ^ t)
		}
		e.occ = 1
		e.first = append(e.first, -1)
		return append(dst, Feature{ID: fp, Weight: 1})
	}
	occ := len(toks) - k + 1
	if cap(a.u) < occ {
		a.u = make([]uint64, occ, occ*5/4)
	}
	ids := a.u[:occ]
	clWindowAll(ids, toks, a.cl)
	return e.dedup(dst, ids)
}

// dedup appends the distinct ids of ids (the shingles of one document, in
// order) to dst as features, with their first occurrences in e.first.
func (e *Extractor) dedup(dst []Feature, ids []uint64) []Feature {
	occ := len(ids)
	e.occ = occ
	e.acc.reset(2 * occ) // load <= 1/4: fewer collisions, each a mispredicted branch
	dst = slices.Grow(dst, occ)
	e.first = slices.Grow(e.first, occ)
	db, fb := dst[len(dst):len(dst)+occ], e.first[len(e.first):len(e.first)+occ]
	var c int
	if e.o.Weighting == WeightSet {
		c = e.acc.dedupSet(db, fb, ids)
	} else {
		c = e.acc.dedupCount(db, fb, ids)
	}
	e.first = e.first[:len(e.first)+c]
	return dst[:len(dst)+c]
}

// chain slides the window over the words (book 3.3): with u from terms,
// the fingerprint after word j is dropOf(word j-K) xor step(fp xor tok_j)
// = step(fp) xor u[j]. It overwrites u[j] with that fingerprint and
// returns u[K-1:], the ids of the windows of K words.
//
// Each step is eight lookups that wait for the step before, so the loop
// runs four chains at once (two for a document of less than 8K words, one
// for less than 4K): each over a quarter of the words, every chain but the
// first starting from the empty window K words before its quarter (adding
// those words' step terms without drops), which reaches the same
// fingerprints. On an AMD EPYC (Zen 5), four chains took 14.31 against two
// chains' 14.92 ns per shingle of BenchmarkExtractVocab/zipf-50k (-tags
// purego, 25 interleaved runs each, p=0.001): the steps wait on the
// table's loads, not on the CPU's ports.
func (e *Extractor) chain(u []uint64) []uint64 {
	k := e.o.K
	q := len(u) / 4
	if q < 2*k {
		return e.chainShort(u)
	}
	by := &e.fast.tab.step
	fd := chain4(by, u[:q], u[q:2*q], u[2*q:3*q], u[3*q:4*q], e.wh.q, e.warm(q), e.warm(2*q), e.warm(3*q))
	steps(by, u[4*q:], fd)
	return u[k-1:]
}

// chainShort is chain with two chains, one over the words up to the middle
// and one over the rest, or one chain for less than 4K words.
func (e *Extractor) chainShort(u []uint64) []uint64 {
	k := e.o.K
	by := &e.fast.tab.step
	fa, fb := e.wh.q, e.wh.q
	mid := len(u) / 2
	if mid < 2*k {
		mid = len(u) - 1 // one chain
	} else {
		fb = e.warm(mid + 1)
	}
	a, b := u[:mid+1], u[mid+1:]
	n := min(len(a), len(b))
	fa, fb = chain2(by, a[:n], b[:n], fa, fb)
	steps(by, a[n:], fa)
	steps(by, b[n:], fb)
	return u[k-1:]
}

// warm returns the window's fingerprint after word at-1 (at >= K) from the
// empty window K words before: the step terms of those words, without
// drops. A chain that starts at word at starts from it.
func (e *Extractor) warm(at int) uint64 {
	by := &e.fast.tab.step
	f := e.wh.q
	for _, w := range e.fast.sd[at-e.o.K : at] {
		f = stepBy(by, f) ^ w.s
	}
	return f
}

// steps runs one chain from f over u, overwriting each term with the
// fingerprint, and returns where it ends.
func steps(by *[8][256]uint64, u []uint64, f uint64) uint64 {
	for j := range u {
		f = stepBy(by, f) ^ u[j]
		u[j] = f
	}
	return f
}

// chain4 is chain's loop over four chains at once, from fa over a, fb
// over b, fc over c and fd over d (of the same length), returning where
// the last ends (a function of its own so that the compiler keeps its
// variables in registers).
//
//go:noinline
func chain4(by *[8][256]uint64, a, b, c, d []uint64, fa, fb, fc, fd uint64) uint64 {
	b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
	for j := range a {
		fa = stepBy(by, fa) ^ a[j]
		fb = stepBy(by, fb) ^ b[j]
		fc = stepBy(by, fc) ^ c[j]
		fd = stepBy(by, fd) ^ d[j]
		a[j], b[j], c[j], d[j] = fa, fb, fc, fd
	}
	return fd
}

// chain2 is chainShort's loop over two chains at once, from fa over a and
// from fb over b (of the same length), returning where they end (a
// function of its own so that the compiler keeps its variables in
// registers).
//
//go:noinline
func chain2(by *[8][256]uint64, a, b []uint64, fa, fb uint64) (uint64, uint64) {
	b = b[:len(a)]
	for j := range a {
		fa = stepBy(by, fa) ^ a[j]
		fb = stepBy(by, fb) ^ b[j]
		a[j], b[j] = fa, fb
	}
	return fa, fb
}

// terms returns, for every word j of a.sd, the part of the window's step
// over it that does not depend on the window's fingerprint:
// sd[j].s xor sd[j-K].d (the drop left out while the window fills). Valid
// until the next call.
func (e *Extractor) terms() []uint64 {
	a := e.fast
	k := e.o.K
	sd := a.sd
	if cap(a.u) < len(sd) {
		a.u = make([]uint64, len(sd), len(sd)*5/4)
	}
	u := a.u[:len(sd)]
	for j := range k {
		u[j] = sd[j].s
	}
	in, out, ux := sd[k:], sd[:len(sd)-k], u[k:]
	out, ux = out[:len(in)], ux[:len(in)]
	for j := range in {
		ux[j] = in[j].s ^ out[j].d
	}
	return u
}

// materialize fills e.n's normalized text and tokens, which the ASCII path
// skips, from its copy of the last document's text.
func (e *Extractor) materialize() {
	if !e.lazy {
		return
	}
	e.lazy = false
	n := e.n
	h := n.hash
	n.hash = nil // the ids are known; tokenize needs not hash again
	n.text, n.toks, n.fps = n.text[:0], n.toks[:0], n.fps[:0]
	n.tokenize(e.fast.text())
	n.hash = h
	e.units = n.fps
}

// viaASCII prepares doc for Extract: it returns true if the document goes
// the ASCII path (its text is in e.fast.buf), and otherwise normalizes it
// as normalize does and returns false. HTML goes the ASCII path only when
// weights ignore markup zones (WeightSet), since the path keeps no zones.
func (e *Extractor) viaASCII(doc []byte) bool {
	n := e.n
	if !(n.o.Format == FormatHTML || (n.o.Format == FormatAuto && SniffHTML(doc))) {
		if e.fast.load(doc); e.fast.spans() {
			n.html = false
			n.marks = n.marks[:0]
			return true
		}
		n.normalize(doc)
		return false
	}
	if e.o.Weighting != WeightSet {
		n.normalize(doc)
		return false
	}
	// normalize's HTML branch, up to the tokenizer.
	n.text, n.toks, n.fps, n.marks = n.text[:0], n.toks[:0], n.fps[:0], n.marks[:0]
	n.html = true
	n.vis = n.vis[:0]
	n.visibleText(doc)
	if e.fast.load(n.vis); e.fast.spans() {
		return true
	}
	n.tokenize(n.vis)
	return false
}

// dedupSet writes each distinct id of ids, in order of first occurrence,
// to db (weight 1) and its index in ids to fb, and returns their number.
// The table probes of successive ids are independent of each other. With
// AVX2 the table is probed four slots at a time (dedupSet4).
func (a *accum) dedupSet(db []Feature, fb []int32, ids []uint64) int {
	if useDedup4 {
		return dedupSet4(a.keys, db[:len(ids)], fb[:len(ids)], ids, a.shift+2)
	}
	if useDedup2 {
		return dedupSet2(a.keys, db, fb, ids)
	}
	return dedupSet1(a.keys, db, fb, ids, a.shift)
}

// useDedup2 says whether dedupSet takes dedupSet2 where there is no
// dedupSet4: the table route's (the AVX-512 route keeps dedupSet1, as it
// was measured with).
var useDedup2 = !hasCLMUL512

// dedupSet2 is dedupSet over a table of buckets of two slots (keys,
// len(keys) a power of two >= 2, zero, with at least one free slot left
// after the inserts), the bucket of id starting at slot
// bucket2(id, mask), mask = len(keys)-2. Slots fill in order, an id going to the first
// free slot of its bucket or, if it is full, of the next bucket with one,
// so an id absent from a bucket with a free slot is absent from the table.
// At the load of at most 1/4 that extractASCII gives the table, a bucket
// is full with probability under 1/16, so the one branch that depends on
// the ids is rarely mispredicted: the slot an id takes in its bucket is
// chosen by arithmetic, where dedupSet1's probe branches on every
// occupied slot it meets (one id in eight on average). A function of its
// own so that the compiler keeps its variables in registers.
//
//go:noinline
func dedupSet2(keys []uint64, db []Feature, fb []int32, ids []uint64) int {
	db, fb = db[:len(ids)], fb[:len(ids)]
	mask := uint64(len(keys) - 2)
	zero := false
	i, c := 0, 0
	for {
		i, c = dedupFast2(keys, db, fb, ids, mask, i, c)
		if i == len(ids) {
			return c
		}
		// The rare cases, out of the fast loop (which then holds no
		// call, whose registers Go's calling convention would spill):
		// id 0, which no slot stands for, and a full bucket.
		id := ids[i]
		if id == 0 {
			if zero {
				i++
				continue
			}
			zero = true
		} else if !insertFar(keys, bucket2(id, mask), id) {
			i++
			continue
		}
		db[c] = Feature{ID: id, Weight: 1}
		fb[c] = int32(i)
		c++
		i++
	}
}

// dedupFast2 is dedupSet2's loop from ids[i], with c ids written so far,
// up to the end or to an id that is 0 or whose bucket is full and does not
// hold it; it returns where it stopped and the new c.
//
//go:noinline
func dedupFast2(keys []uint64, db []Feature, fb []int32, ids []uint64, mask uint64, i, c int) (int, int) {
	db, fb = db[:len(ids)], fb[:len(ids)]
	// Unsigned indices spare a bounds check.
	u, uc := uint(i), uint(c)
	for ; u < uint(len(ids)); u++ {
		id := ids[u]
		b := bucket2(id, mask)
		bk := (*[2]uint64)(keys[b : b+2])
		k0, k1 := bk[0], bk[1]
		if k0 == id || k1 == id {
			if id != 0 {
				continue
			}
			return int(u), int(uc)
		}
		if k1 != 0 || id == 0 {
			return int(u), int(uc)
		}
		bk[(k0|-k0)>>63] = id // slot 1 if slot 0 is taken
		db[uc] = Feature{ID: id, Weight: 1}
		fb[uc] = int32(u)
		uc++
	}
	return int(u), int(uc)
}

// bucket2 is the first slot of id's bucket in dedupSet2's table of
// len(keys) = mask+2 slots: bits 32 and up of id·φ (Fibonacci hashing;
// the ids are fingerprints, so any of their bits are uniform), which a
// constant shift and a mask select, where the top bits need a variable
// shift whose count x86 takes only in CL (a register shuffle per id).
// At most 2^32 slots.
func bucket2(id, mask uint64) uint64 { return (id * 0x9e3779b97f4a7c15) >> 32 & mask }

// insertFar is dedupSet2's insert of id, not in the full bucket at b, into
// the next bucket with a free slot; it reports false if id is in one of
// the buckets before that.
func insertFar(keys []uint64, b, id uint64) bool {
	mask := uint64(len(keys) - 2)
	for {
		b = (b + 2) & mask
		bk := (*[2]uint64)(keys[b : b+2])
		if bk[0] == id || bk[1] == id {
			return false
		}
		if bk[0] == 0 {
			bk[0] = id
			return true
		}
		if bk[1] == 0 {
			bk[1] = id
			return true
		}
	}
}

// dedupSet1 is dedupSet's loop over a table of single slots (a function of
// its own so that the compiler keeps its variables in registers).
//
//go:noinline
func dedupSet1(keys []uint64, db []Feature, fb []int32, ids []uint64, shift uint) int {
	shift &= 63
	mask := uint64(len(keys) - 1)
	db, fb = db[:len(ids)], fb[:len(ids)]
	zero := false
	c := 0
	for i, id := range ids {
		if id == 0 {
			if zero {
				continue
			}
			zero = true
		} else {
			h := (id * 0x9e3779b97f4a7c15) >> shift
			for {
				key := keys[h]
				if key == 0 {
					keys[h] = id
					break
				}
				if key == id {
					goto next
				}
				h = (h + 1) & mask
			}
		}
		db[c] = Feature{ID: id, Weight: 1}
		fb[c] = int32(i)
		c++
	next:
	}
	return c
}

// dedupCount is dedupSet for multisets: a repeated id adds 1 to the weight
// of its Feature, found through a.idx.
func (a *accum) dedupCount(db []Feature, fb []int32, ids []uint64) int {
	keys, idxs, shift := a.keys, a.idx, a.shift&63
	mask := uint64(len(keys) - 1)
	idxs = idxs[:len(keys)]
	db, fb = db[:len(ids)], fb[:len(ids)]
	zero, zeroAt := false, 0
	c := 0
	for i, id := range ids {
		if id == 0 {
			if zero {
				db[zeroAt].Weight++
				continue
			}
			zero, zeroAt = true, c
		} else {
			h := (id * 0x9e3779b97f4a7c15) >> shift
			for {
				key := keys[h]
				if key == 0 {
					keys[h] = id
					idxs[h] = int32(c)
					break
				}
				if key == id {
					db[idxs[h]].Weight++
					goto next
				}
				h = (h + 1) & mask
			}
		}
		db[c] = Feature{ID: id, Weight: 1}
		fb[c] = int32(i)
		c++
	next:
	}
	return c
}

// dedupSet4Go is the pure-Go form of dedupSet4: dedupSet over a table of
// buckets of four slots (keys, len(keys) a power of two >= 4, zero, with
// at least one free slot left after the inserts), the bucket of id being
// (id·φ) >> shift; an id goes to the first free slot of its bucket, or of
// the next bucket with one, so an id absent from a bucket with a free slot
// is absent from the table. At the load of at most 1/4 that extractASCII
// gives the table, a bucket is full at the end with probability under 2%,
// so the probe's branches are on rare cases only.
func dedupSet4Go(keys []uint64, db []Feature, fb []int32, ids []uint64, shift uint) int {
	mask := uint64(len(keys)-1) &^ 3
	db, fb = db[:len(ids)], fb[:len(ids)]
	zero := false
	c := 0
	for i, id := range ids {
		if id == 0 {
			if zero {
				continue
			}
			zero = true
		} else {
			b := (id * 0x9e3779b97f4a7c15) >> (shift & 63) << 2
		probe:
			for {
				bk := (*[4]uint64)(keys[b : b+4])
				for _, k := range bk {
					if k == id {
						goto next
					}
				}
				for s, k := range bk {
					if k == 0 {
						bk[s] = id
						break probe
					}
				}
				b = (b + 4) & mask
			}
		}
		db[c] = Feature{ID: id, Weight: 1}
		fb[c] = int32(i)
		c++
	next:
	}
	return c
}
