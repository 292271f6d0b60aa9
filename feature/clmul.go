package feature

import (
	"math/big"
	"math/bits"

	"github.com/neardup/neardup/rabin"
)

// The carry-less-multiplication route of the ASCII path. Where the CPU
// multiplies polynomials over GF(2) in one instruction (PCLMULQDQ on
// amd64), the word fingerprints and the shingle window are computed from
// the words' bytes with a few multiplications each instead of the 24 table
// lookups per word of the table route (words, chain), and give the same
// ids (the tests check the two against each other and against package
// rabin on arbitrary bytes). Without the instruction the table route runs.
//
// In the reflected order of package rabin (bit i holds x^(63-i)), the
// carry-less product c of a and b, as a 128-bit integer, holds the
// coefficient of x^(126-n) in bit n; shifted left by one bit its low word
// is the part of a·b of degree 64 and up (divided by x^64) and its high
// word the part below x^64, both reflected 64-bit polynomials. Reducing
// h·x^64 modulo P = x^64 + p (rabin's Table.ExtendUint64(0, h), "step") is
// Barrett's reduction with mu = floor(x^128 / P) = x^64 + m:
//
//	Q = h xor floor(h·m / x^64),  step(h) = (Q·p) mod x^64
//
// and with the constants stored shifted left by one bit (M = m<<1,
// Qc = p<<1; the bit shifted out of p is x^0's, 1 for every irreducible P)
// the shifts fall away: Q = h xor low(clmul(h, M)) and
// step(h) = high(clmul(Q, Qc)) xor Q.
//
// A word b of r <= 16 bytes is b = hi·x^64 + lo (its last 8 bytes lo, the
// ones before them hi; hi = 0 when r <= 8), and its token fingerprint is
//
//	Hash(b) = Hash(0^r) xor (hi·x^128 + lo·x^64) mod P1
//	        = Hash(0^r) xor step1(lo xor U_h) xor U_l,  U = hi·(x^128 mod P1)
//
// (U_h and U_l its parts of degree 64 and up and below). The fingerprint of
// the window of the K tokens t_(j-K+1)..t_j (rabin.WordWindow over P2) is
//
//	Hash(0^K units) xor sum_(i<K) t_(j-i)·x^(64(i+1)) mod P2
//	  = C_K xor step2(t_j xor S_h) xor S_l,  S = sum_(1<=i<K) t_(j-i)·Y_i
//
// with Y_i = x^(64(i+1)) mod P2, so a shingle costs K+1 multiplications
// with no chain from one shingle to the next; a word three. The products
// by constants need no shift either: the carry-less product of a and
// c/x mod P, read as a 128-bit polynomial without the shift, is a·c·x/x,
// congruent to a·c, its low word the part of degree 64 and up and its high
// word the part below; the constants are stored divided by x (z1 =
// x^127 mod P1, z[i] = Y_i/x). clWords reads each word's last 16 bytes,
// masks, folds (case, digits) and fingerprints them; clWindow slides over
// the tokens. With AVX-512, clWords4 takes four words per instruction,
// with the leading 1 of Hash (x^(8r)) set in the byte before the word
// instead of adding Hash(0^r), and clWindow8 eight shingles; with AVX2
// and VPCLMULQDQ on 256-bit vectors (no AVX-512), clWords4x2 and
// clWindow4 do the same two lanes at a time. Words of more than 16 bytes
// (16 or more with the vector kernels) are hashed in Go, and K
// above maxCLMULK takes the table route.
type clConsts struct {
	m1, q1, z1 uint64 // P1 (tokens): Barrett M, Qc, and x^127 mod P1
	m2, q2, ck uint64 // P2 (window): Barrett M, Qc, and C_K = Hash of K zero units
	k          int64  // K
	_          uint64
	c1         [256]uint64       // c1[r] = Hash(0^r) over P1 for r <= 16 (0 above)
	z          [maxCLMULK]uint64 // z[i] = x^(64(i+1)-1) mod P2 for 1 <= i < K

	// clWords: masks[r] keeps the last r of 16 bytes; a word byte b is
	// an upper-case letter if am1 < b < zp1 (bytewise, signed), gets
	// fcase or'ed in, and is a digit to fold if fdlo < b < fdhi, which
	// becomes fzero.
	masks                              [maxShortWord + 1][16]byte
	am1, zp1, fcase, fdlo, fdhi, fzero [16]byte
	lomask                             [8]uint64                  // clWindow8: ^0, 0 in each 128-bit lane
	lead                               [maxShortWord + 1][16]byte // clWords4: x^(8r) for r < 16
	permhi                             [8]uint64                  // clWords4: the high quadwords of the four lanes
	caseMask                           uint64                     // 0x20 in every byte if letters are lowered, else 0 (fold)
	digMask                            uint64                     // 0x80 in every byte if digits fold to '0', else 0 (fold)
}

// maxCLMULK is the largest K the carry-less route takes: a shingle costs
// K+1 multiplications there against the table route's constant cost.
const maxCLMULK = 8

// barrett returns the constants M = m<<1 and Qc = q<<1 of step over the
// reflected polynomial q (p(x) = P - x^64), and whether they are valid
// (p(0) = 1, true for every irreducible P).
func barrett(q uint64) (mc, qc uint64, ok bool) {
	if q&(1<<63) == 0 {
		return 0, 0, false
	}
	// mu = floor(x^128 / P) by long division over GF(2), in the normal
	// order (bit i holds x^i).
	p := new(big.Int).SetUint64(bits.Reverse64(q))
	p.SetBit(p, 64, 1)
	r := new(big.Int).SetBit(new(big.Int), 128, 1)
	mu := new(big.Int)
	t := new(big.Int)
	for d := 128; d >= 64; d-- {
		if r.Bit(d) == 1 {
			mu.SetBit(mu, d-64, 1)
			r.Xor(r, t.Lsh(p, uint(d-64)))
		}
	}
	m := bits.Reverse64(mu.Uint64()) // mu's low 64 bits, x^64 dropped by Uint64
	return m << 1, q << 1, true
}

// newCLConsts returns the constants of the carry-less route for token
// table tokT, window table winT and shingle size k, or nil if the route
// cannot take them.
func newCLConsts(tokT, winT *rabin.Table, k int) *clConsts {
	if k < 1 || k > maxCLMULK {
		return nil
	}
	c := &clConsts{k: int64(k)}
	for i := 0; i < 8; i += 2 {
		c.lomask[i] = ^uint64(0)
	}
	for r := 0; r < maxShortWord; r++ {
		c.lead[r][15-r] = 0x80
	}
	c.permhi = [8]uint64{1, 3, 5, 7}
	var ok1, ok2 bool
	c.m1, c.q1, ok1 = barrett(uint64(tokT.Poly()))
	c.m2, c.q2, ok2 = barrett(uint64(winT.Poly()))
	if !ok1 || !ok2 {
		return nil
	}
	c.z1 = divX(tokT.ExtendUint64(uint64(tokT.Poly()), 0), c.m1, c.q1) // x^128 / x
	zero := make([]byte, max(8*k, maxShortWord))
	for r := 0; r <= maxShortWord; r++ {
		c.c1[r] = tokT.Hash(zero[:r])
	}
	c.ck = winT.Hash(zero[:8*k])
	y := uint64(winT.Poly()) // x^64 mod P2
	for i := 1; i < k; i++ {
		y = winT.ExtendUint64(y, 0)
		c.z[i] = divX(y, c.m2, c.q2)
	}
	return c
}

// clmul64 returns the carry-less product of a and b as (high, low) words:
// the software model of PCLMULQDQ, for the pure-Go form of the route.
func clmul64(a, b uint64) (hi, lo uint64) {
	for i := uint(0); i < 64; i++ {
		if b>>i&1 != 0 {
			lo ^= a << i
			hi ^= a >> (64 - i) // Go: a >> 64 = 0
		}
	}
	return hi, lo
}

// clStep is step over a polynomial with Barrett constants mc, qc.
func clStep(h, mc, qc uint64) uint64 {
	_, l := clmul64(h, mc)
	q := h ^ l
	hi, _ := clmul64(q, qc)
	return hi ^ q
}

// clProd returns, for z = y/x mod P, the parts of degree 64 and up (h)
// and below (l) of a polynomial congruent to a·y: the carry-less product
// of a and z read with one more degree, that is, its two words as they
// are.
func clProd(a, z uint64) (h, l uint64) {
	hi, lo := clmul64(a, z)
	return lo, hi
}

// divX returns y/x mod P, for P with Barrett constants mc, qc: y times
// x^-1 = x^63 + (p - 1)/x (P(0) = 1), reflected q<<1 | 1, and qc = q<<1.
func divX(y, mc, qc uint64) uint64 {
	hi, lo := clmul64(y, qc|1)
	// hi:lo<<1 is the exact product (clProd's reading for a true y).
	return clStep(lo<<1, mc, qc) ^ (hi<<1 | lo>>63)
}

// clWindowGo is the pure-Go form of clWindow: dst[j] = the fingerprint of
// the window toks[j:j+K].
func clWindowGo(dst, toks []uint64, c *clConsts) {
	k := int(c.k)
	for j := range dst {
		var sh, sl uint64
		for i := 1; i < k; i++ {
			h, l := clProd(toks[j+k-1-i], c.z[i])
			sh ^= h
			sl ^= l
		}
		dst[j] = c.ck ^ clStep(toks[j+k-1]^sh, c.m2, c.q2) ^ sl
	}
}

// clRoute holds the carry-less route's constants and buffers (asciiPath.cl).
type clRoute struct {
	c     *clConsts
	wide  bool   // AVX-512 (clWords4, clWindow8); useCLMUL512 at construction
	spans bool   // AVX-512 VBMI2 (spans512); useSpans512 at construction
	ymm   bool   // AVX2 (clWords4x2, clWindow4), where not wide; useCLMUL256
	span2 bool   // AVX2 (spans256), where not spans; useSpans256
	fold  uint64 // spans256's fold: the word table's, on ASCII (foldASCII)
	toks  []uint64
}

// newCLRoute returns the carry-less route for an ASCII path whose word
// bytes map through word (lowered, digits folded), or nil if the CPU
// lacks the instructions (or useCLMUL is off), K is too large, or word
// folds ASCII in a way fold does not.
func newCLRoute(tokT, winT *rabin.Table, k int, word *[256]byte, digits uint64) *clRoute {
	if !useCLMUL {
		return nil
	}
	c := newCLConsts(tokT, winT, k)
	if c == nil {
		return nil
	}
	const ones = 0x0101010101010101
	for r := range c.masks {
		for i := 16 - r; i < 16; i++ {
			c.masks[r][i] = 0xff
		}
	}
	for i := range 16 {
		c.am1[i], c.zp1[i], c.fdlo[i], c.fdhi[i], c.fzero[i] = 'A'-1, 'Z'+1, 0x7f, ':', '0'
	}
	if word['A'] == 'a' {
		c.caseMask = 0x20 * ones
		for i := range c.fcase {
			c.fcase[i] = 0x20
		}
	}
	if word['5'] == '0' {
		c.digMask = 0x80 * ones
		for i := range c.fdlo {
			c.fdlo[i] = '0' - 1
		}
	}
	for v := 1; v < 0x80; v++ {
		if wordFlags(uint64(v), digits) == 0 {
			continue // not a word byte: never hashed
		}
		if got := c.fold(uint64(v)); got != uint64(word[v]) {
			return nil
		}
	}
	var fold uint64
	if word['A'] == 'a' {
		fold = 0x20
	}
	if word['5'] == '0' {
		fold |= 0x0f << 8
	}
	for v := 1; v < 0x80; v++ {
		b := []byte{byte(v)}
		if foldASCII(b, digits, fold); wordFlags(uint64(v), digits) != 0 && b[0] != word[v] {
			return nil
		}
	}
	return &clRoute{c: c, wide: useCLMUL512, spans: useSpans512,
		ymm: useCLMUL256 && !useCLMUL512, span2: useSpans256 && !useSpans512, fold: fold}
}

// useCLMUL lets tests take the table route on a CPU with the instructions.
var useCLMUL = hasCLMUL

// fold case- and digit-folds the word bytes of x (ASCII; other bytes 0)
// as the normalizer's word table does: eight bytes at once, by the
// byte-wise range checks of wordFlags.
func (c *clConsts) fold(x uint64) uint64 {
	const ones = 0x0101010101010101
	up := (x + (0x80-'A')*ones) &^ (x + (0x7f-'Z')*ones) & (0x80 * ones)
	x |= up >> 2 & c.caseMask
	dg := (x + (0x80-'0')*ones) &^ (x + (0x7f-'9')*ones) & c.digMask
	full := dg >> 7 * 0xff
	return x&^full | full&('0'*ones)
}

// clTokens returns the token fingerprints of the words that spans listed,
// with room for K-1 more after them.
func (e *Extractor) clTokens() []uint64 {
	a := e.fast
	cr := a.cl
	nw := len(a.st)
	if cap(cr.toks) < nw+e.o.K {
		cr.toks = make([]uint64, nw+e.o.K, (nw+e.o.K)*5/4)
	}
	toks := cr.toks[:nw]
	st, en := a.st[:nw], a.en[:nw]
	buf := a.buf[:cap(a.buf)]
	if clWordsAll(toks, buf, st, en, cr) >= maxShortWord {
		// Words of 16 bytes or more, hashed from their lowered bytes.
		for j := range toks {
			s, end := int(st[j]), int(en[j])
			if end-s < maxShortWord {
				continue
			}
			a.lower = a.lower[:0]
			for _, c := range buf[8+s : 8+end] {
				a.lower = append(a.lower, e.n.word[c])
			}
			toks[j] = e.n.hash.hash(a.lower)
		}
	}
	return toks
}

// clWordsGo is the pure-Go form of clWords: dst[j] = the token
// fingerprint of word j = buf[8+st[j] : 8+en[j]] (buf is asciiPath.buf:
// the text after 8 zero bytes, and padding), garbage for words of more
// than 16 bytes; it returns the bitwise or of the word lengths, which is
// at most 16 if every word is.
func clWordsGo(dst []uint64, buf []byte, st, en []int32, c *clConsts) int {
	longest := 0
	en = en[:len(dst)]
	st = st[:len(dst)]
	for j := range dst {
		end := int(en[j])
		r := end - int(st[j])
		// The word's last 8 bytes and the 8 before them, bytes before
		// the word masked off; hi is 0 for a word of up to 8 bytes (Go
		// shifts by 64 or more give 0).
		short := 8 - r
		short &^= short >> 63 // bytes short of 8: max(8-r, 0)
		x := le64(buf, end) & (^uint64(0) << (uint(8*short) & 63))
		he := end - 8
		he &^= he >> 63 // max(end-8, 0): only words of 9 bytes or more use it
		y := le64(buf, he) & (^uint64(0) << uint(128-8*r))
		lo, hi := c.fold(x), c.fold(y)
		uh, ul := clProd(hi, c.z1)
		dst[j] = c.c1[min(r, maxShortWord)] ^ clStep(lo^uh, c.m1, c.q1) ^ ul
		longest |= r
	}
	return longest
}

// clWindowAll is clWindow, eight shingles at a time where the CPU has
// AVX-512's carry-less multiplication (clWindow8), four where it has it
// on 256-bit vectors with AVX2 (clWindow4).
func clWindowAll(dst, toks []uint64, cr *clRoute) {
	n := 0
	switch {
	case cr.wide:
		n = len(dst) &^ 7
		clWindow8(dst[:n], toks, cr.c)
	case cr.ymm:
		n = len(dst) &^ 3
		clWindow4(dst[:n], toks, cr.c)
	}
	clWindow(dst[n:], toks[n:], cr.c)
}

// useCLMUL512 lets tests take the 128-bit loops on a CPU with AVX-512,
// useSpans512 the mask route of spans; useCLMUL256 and useSpans256 do
// the same for the AVX2 kernels.
var (
	useCLMUL512, useSpans512 = hasCLMUL512, hasSpans512
	useCLMUL256, useSpans256 = hasCLMUL256, hasSpans256
)

// clWordsAll is clWords, four words at a time where the CPU has AVX-512's
// carry-less multiplication (clWords4) or has it on 256-bit vectors with
// AVX2 (clWords4x2); words of 16 bytes or more are left to the caller.
func clWordsAll(dst []uint64, buf []byte, st, en []int32, cr *clRoute) int {
	n4, longest := 0, 0
	switch {
	case cr.wide:
		n4 = len(dst) &^ 3
		longest = clWords4(dst[:n4], buf, st[:n4], en[:n4], cr.c)
	case cr.ymm && cr.span2:
		// spans256 has folded the text.
		n4 = len(dst) &^ 3
		longest = clWords4x2F(dst[:n4], buf, st[:n4], en[:n4], cr.c)
	case cr.ymm:
		n4 = len(dst) &^ 3
		longest = clWords4x2(dst[:n4], buf, st[:n4], en[:n4], cr.c)
	}
	return longest | clWords(dst[n4:], buf, st[n4:], en[n4:], cr.c)
}

// wordMasksGo is the pure-Go form of wordMasks: dst[i] = the mask of the
// word bytes (wordFlags with digits) of text[64i:64i+64], bit j for byte
// j; it reports whether the text holds a byte >= 0x80.
func wordMasksGo(dst []uint64, text []byte, digits uint64) bool {
	var high uint64
	for i := range dst {
		var m uint64
		for j, c := range text[64*i : 64*i+64] {
			high |= uint64(c)
			if wordFlags(uint64(c), digits) != 0 {
				m |= 1 << j
			}
		}
		dst[i] = m
	}
	return high&0x80 != 0
}

// foldASCII folds text in place as spans256 does: the byte fold&0xff is
// or'ed into every letter (0x20 lowers A-Z), and the bits of the byte
// fold>>8 are cleared in every digit if digits are word bytes (0x0f turns
// '0'..'9' into '0'); other bytes stay. With the fold of a clRoute it is
// the word table's folding of the word bytes of ASCII text (newCLRoute
// checks the same of clConsts.fold), which is idempotent, so clWords gives
// the same ids for the folded text and tokenize the same tokens.
func foldASCII(text []byte, digits, fold uint64) {
	lc, dc := byte(fold), byte(fold>>8)
	if digits == 0 {
		dc = 0
	}
	for i, b := range text {
		switch {
		case 'a' <= b|0x20 && b|0x20 <= 'z':
			text[i] = b | lc
		case '0' <= b && b <= '9':
			text[i] = b &^ dc
		}
	}
}

// spans512Go is the pure-Go form of spans512: the word starts and ends of
// text (64·blocks bytes) from wordMasksGo's masks, and whether it holds a
// byte >= 0x80.
func spans512Go(text []byte, st, en []int32, digits uint64) (nst, nen int, high bool) {
	masks := make([]uint64, len(text)/64)
	high = wordMasksGo(masks, text, digits)
	var carry uint64
	for i, m := range masks {
		prev := m<<1 | carry
		carry = m >> 63
		for s := m &^ prev; s != 0; s &= s - 1 {
			st[nst] = int32(64*i + bits.TrailingZeros64(s))
			nst++
		}
		for e := prev &^ m; e != 0; e &= e - 1 {
			en[nen] = int32(64*i + bits.TrailingZeros64(e))
			nen++
		}
	}
	return nst, nen, high
}

// Kernels names the kernels that Extract's ASCII path runs on this
// machine, fastest first: "avx512" (carry-less multiplication of 512-bit
// vectors, VPCOMPRESSB), "avx2" (of 256-bit vectors, with AVX2), "pclmulqdq"
// (of 128-bit ones), or "go" (the table route, in Go: the purego build
// tag, arm64 and every other CPU without the instructions). The features
// are the same on every route. GODEBUG=cpu.avx512f=off leaves out the
// AVX-512 kernels (golang.org/x/sys/cpu reads it), as on an AVX2-only x86
// CPU; the build tag purego leaves out every kernel in assembly.
func Kernels() string {
	switch {
	case !useCLMUL:
		return "go"
	case useCLMUL512:
		return "avx512"
	case useCLMUL256 || useSpans256:
		return "avx2"
	}
	return "pclmulqdq"
}
