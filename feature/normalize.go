package feature

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/cases"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// zone is the markup context of a stretch of visible text; weights use it
// for boosts. Plain text is all zoneBody.
type zone uint8

const (
	zoneBody zone = iota
	zoneHeading
	zoneTitle
	numZones
)

// zoneMark says that visible text from offset off on is in zone z.
type zoneMark struct {
	off int
	z   zone
}

// token is a span of the normalized text (without its separating space)
// and the zone it starts in.
type token struct {
	start, end int32
	z          zone
}

// Byte classes of the ASCII fast path.
const (
	cDelim = iota // white space, control: ends a token
	cWord         // letter, digit, '_': part of a token
	cPunct        // punctuation, symbol: a token of its own with PunctKeep, else a delimiter
	cMulti        // first byte of a multi-byte rune (or invalid UTF-8): slow path
)

// normalizer turns a document into normalized text: the tokens, each
// lowered (per Options), joined by single spaces, and their spans and
// zones. It owns all the buffers it uses; they are reused across
// documents. Not safe for concurrent use.
type normalizer struct {
	o     Options
	class [256]uint8
	low   [256]byte // ASCII byte mapping (case, digit folding)
	word  [256]byte // low[c] for ASCII word bytes, 0 for every other byte

	vis   []byte     // visible text of an HTML document, or normalized plain text
	marks []zoneMark // zone changes in vis
	nbuf  []byte     // NFKC scratch
	text  []byte     // normalized text: tokens joined by ' '
	toks  []token
	fps   []uint64   // Rabin fingerprint of each token's bytes (or 0s when hash is nil)
	hash  *tokHasher // the token polynomial; nil when fingerprints are not needed
	rd    bytes.Reader
	fold  transform.Transformer // cases.Fold(), converted to an interface once
	iter  norm.Iter
	html  bool // whether the last document was read as HTML
	mark  int  // tokenize: the next zone mark to apply
	cur   zone // tokenize: the zone of the current token
}

func newNormalizer(o Options) *normalizer {
	n := &normalizer{o: o}
	for c := 0; c < 256; c++ {
		b := byte(c)
		n.low[c] = b
		switch {
		case c >= 0x80:
			n.class[c] = cMulti
		case 'a' <= b && b <= 'z', b == '_':
			n.class[c] = cWord
		case 'A' <= b && b <= 'Z':
			n.class[c] = cWord
			if o.Case != CaseKeep {
				n.low[c] = b + 'a' - 'A'
			}
		case '0' <= b && b <= '9':
			switch o.Digits {
			case DigitsKeep:
				n.class[c] = cWord
			case DigitsFold:
				n.class[c] = cWord
				n.low[c] = '0'
			default:
				n.class[c] = cDelim
			}
		case unicode.IsPunct(rune(b)) || unicode.IsSymbol(rune(b)):
			n.class[c] = cPunct
		default:
			n.class[c] = cDelim
		}
	}
	for c := 0; c < utf8.RuneSelf; c++ {
		if n.class[c] == cWord {
			n.word[c] = n.low[c]
		}
	}
	if o.Case == CaseFold {
		n.fold = cases.Fold()
	}
	return n
}

// isASCII reports whether b has no byte >= 0x80, eight bytes at a time.
func isASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return false
		}
	}
	return true
}

// SniffHTML reports whether doc looks like HTML markup: FormatAuto's test
// (see FormatAuto). After a byte-order mark, white space and leading HTML
// comments, doc must start with "<!doctype html", "<html", "<head",
// "<body", "<title" or "<meta" (any case) followed by '>', '/', white
// space or the end. It is the one HTML sniffer of neardup: whoever needs to
// know how the extractor will read a document asks it. Cost: a scan of the
// leading comments, no allocation.
func SniffHTML(doc []byte) bool {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	for {
		doc = bytes.TrimLeft(doc, " \t\r\n\f")
		if !bytes.HasPrefix(doc, []byte("<!--")) {
			break
		}
		end := bytes.Index(doc[4:], []byte("-->"))
		if end < 0 {
			return false
		}
		doc = doc[4+end+3:]
	}
	for _, p := range [...]string{"<!doctype html", "<html", "<head", "<body", "<title", "<meta"} {
		if len(doc) >= len(p) && bytes.EqualFold(doc[:len(p)], []byte(p)) {
			if len(doc) == len(p) {
				return true
			}
			c := doc[len(p)]
			return c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/'
		}
	}
	return false
}

// normalize fills n.text and n.toks from doc.
func (n *normalizer) normalize(doc []byte) {
	n.text = n.text[:0]
	n.toks = n.toks[:0]
	n.fps = n.fps[:0]
	n.marks = n.marks[:0]
	n.html = n.o.Format == FormatHTML || (n.o.Format == FormatAuto && SniffHTML(doc))
	if n.html {
		n.vis = n.vis[:0]
		n.visibleText(doc)
		n.tokenize(n.vis)
		return
	}
	if (n.o.Norm == NormNone && n.o.Case != CaseFold) || isASCII(doc) {
		n.tokenize(doc)
		return
	}
	n.vis = n.appendChunk(n.vis[:0], doc)
	n.tokenize(n.vis)
}

// appendChunk appends text to dst after Unicode normalization and (with
// CaseFold) full case folding; ASCII text is appended as it is (it is in
// NFKC and the tokenizer lowers it by table).
func (n *normalizer) appendChunk(dst, text []byte) []byte {
	if (n.o.Norm == NormNone && n.o.Case != CaseFold) || isASCII(text) {
		return append(dst, text...)
	}
	if n.o.Norm == NormNFKC {
		// norm.Iter kept in the normalizer: Form.Append would heap-allocate
		// its reorder buffer on every call.
		n.nbuf = n.nbuf[:0]
		n.iter.Init(norm.NFKC, text)
		for !n.iter.Done() {
			n.nbuf = append(n.nbuf, n.iter.Next()...)
		}
		text = n.nbuf
	}
	if n.o.Case == CaseFold {
		n.fold.Reset()
		out, _, err := transform.Append(n.fold, dst, text)
		if err == nil {
			return out
		}
		// A Caser does not fail on any input; if it ever did, keep the
		// unfolded text rather than lose it.
		return append(dst[:len(dst)], text...)
	}
	return append(dst, text...)
}

// inline elements do not separate words: "foo<b>bar</b>" is one word.
// Every other element boundary is a delimiter.
func inline(a atom.Atom) bool {
	switch a {
	case atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Big, atom.Cite, atom.Code,
		atom.Data, atom.Del, atom.Dfn, atom.Em, atom.Font, atom.I, atom.Ins, atom.Kbd,
		atom.Mark, atom.Nobr, atom.Q, atom.S, atom.Samp, atom.Small, atom.Span,
		atom.Strike, atom.Strong, atom.Sub, atom.Sup, atom.Time, atom.Tt, atom.U,
		atom.Var, atom.Wbr:
		return true
	}
	return false
}

// hidden elements have no visible text: their content is dropped.
func hidden(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe,
		atom.Noembed, atom.Noframes:
		return true
	}
	return false
}

// visibleText appends the visible text of an HTML document to n.vis and
// records its zones in n.marks. Entities are decoded, comments and the
// contents of script, style, noscript, template and iframe dropped, and
// block-level element boundaries become spaces.
func (n *normalizer) visibleText(doc []byte) {
	n.rd.Reset(doc)
	z := html.NewTokenizer(&n.rd)
	var skip, title, heading int
	cur := zoneBody
	setZone := func() {
		nz := zoneBody
		if title > 0 {
			nz = zoneTitle
		} else if heading > 0 {
			nz = zoneHeading
		}
		if nz != cur {
			// A zone boundary is also a word boundary.
			n.vis = append(n.vis, ' ')
			n.marks = append(n.marks, zoneMark{off: len(n.vis), z: nz})
			cur = nz
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			if skip == 0 {
				n.vis = n.appendChunk(n.vis, z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			a := rawTagAtom(z.Raw())
			open := tt != html.EndTagToken
			if hidden(a) {
				// A "self-closing" script or style still starts raw text in
				// the tokenizer, so it counts as an opening tag.
				if open {
					skip++
				} else if skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			if !inline(a) {
				n.vis = append(n.vis, ' ')
			}
			if tt == html.SelfClosingTagToken {
				continue
			}
			switch a {
			case atom.Title:
				title = step(title, open)
				setZone()
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				heading = step(heading, open)
				setZone()
			}
		}
	}
}

// rawTagAtom returns the atom of the tag whose raw text is raw ("<H1
// class=x>", "</p>"), or 0 for a name no atom has. It reads the name from
// the raw bytes because html.Tokenizer.TagName allocates a copy per call.
func rawTagAtom(raw []byte) atom.Atom {
	i := 1 // skip '<'
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	var buf [16]byte // longer than any atom we look for
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}

func step(depth int, open bool) int {
	if open {
		return depth + 1
	}
	if depth > 0 {
		return depth - 1
	}
	return 0
}

// tokenize appends the tokens of text to n.text (joined by single spaces),
// n.toks, and, when n.hash is set, each token's Rabin fingerprint to n.fps.
// ASCII stretches take the fast path (tokenizeASCII, then hashTokens), and
// tokenizeFrom takes each stretch that holds multi-byte runes.
func (n *normalizer) tokenize(text []byte) {
	n.mark, n.cur = 0, zoneBody
	for i := 0; i < len(text); {
		i = n.tokenizeASCII(text, i)
		if n.hash != nil {
			n.hashTokens()
		} else {
			m := len(n.fps) // no ids needed: zeros
			n.fps = slices.Grow(n.fps, len(n.toks)-m)[:len(n.toks)]
			clear(n.fps[m:])
		}
		if i < len(text) {
			i = n.tokenizeFrom(text, i)
		}
	}
}

// tokenizeASCII tokenizes text[i0:] as tokenizeFrom does, fast, as long as
// it is ASCII: it stops before the first token or delimiter that holds a
// byte >= 0x80 and returns its offset (len(text) when all the rest is
// ASCII), having appended only the tokens before it to n.text and n.toks
// (not their fingerprints: hashTokens); i0 must be a token boundary. Word bytes are classified and lowered by one
// table (n.word maps a word byte to its lowered form and everything else to
// 0) and copied into room reserved up front: a token costs at most its
// bytes plus the space before it, which stands for at least one delimiter
// byte of text (except for the first token of the stretch), or for a
// punctuation byte with PunctKeep, so at most twice len(text)-i0, plus 1,
// in all. 8 more bytes let hashTokens load the 8 bytes from the start of
// any token's last 1 to 8, which end at most 7 bytes past the text. The
// loop keeps few variables live so that they stay in registers.
func (n *normalizer) tokenizeASCII(text []byte, i0 int) int {
	word, class := &n.word, &n.class
	keepPunct := n.o.Punct == PunctKeep
	room := len(text) - i0 + 8
	if keepPunct {
		room += len(text) - i0
	}
	out := n.text
	if cap(out)-len(out) < room {
		out = append(out, make([]byte, room)...)[:len(out)]
	}
	o := len(out)
	buf := out[:cap(out)]
	// Zone marks: a token that starts at or after next takes the
	// marks up to it (plain text has none: next stays at MaxInt).
	marks := n.marks
	mark, cur := n.mark, n.cur
	next := math.MaxInt
	if mark < len(marks) {
		next = marks[mark].off
	}
	i := i0
	toks := n.toks
	for i < len(text) {
		// Room for the tokens of the next stretch of text, so that the
		// inner loop makes no calls (its variables stay in registers):
		// a token takes at least one byte of text and one delimiter,
		// or one punctuation byte.
		if cap(toks)-len(toks) < 64 {
			toks = slices.Grow(toks, 64+len(toks)/4)
		}
		tb := toks[:cap(toks)]
		nt := len(toks)
		for i < len(text) && nt < len(tb) {
			c := text[i]
			l := word[c]
			if l == 0 {
				if c >= utf8.RuneSelf {
					break
				}
				if keepPunct && class[c] == cPunct {
					if i >= next {
						for mark < len(marks) && marks[mark].off <= i {
							cur = marks[mark].z
							mark++
						}
						next = math.MaxInt
						if mark < len(marks) {
							next = marks[mark].off
						}
					}
					if o > 0 {
						buf[o] = ' '
						o++
					}
					buf[o] = c
					o++
					tb[nt] = token{start: int32(o - 1), end: int32(o), z: cur}
					nt++
				}
				i++
				continue
			}
			if i >= next {
				for mark < len(marks) && marks[mark].off <= i {
					cur = marks[mark].z
					mark++
				}
				next = math.MaxInt
				if mark < len(marks) {
					next = marks[mark].off
				}
			}
			o0 := o
			if o > 0 {
				buf[o] = ' '
				o++
			}
			src := text[i:]
			dst := buf[o : o+len(src)]
			p := 0
			// Eight bytes at a time while they are there: look all eight
			// up, store them (bytes past the word are scratch that later
			// writes overwrite), and find the word's end as the first
			// zero lookup, without a branch per byte; on real text the
			// per-byte exit branch mispredicts once per word.
			for len(src)-p >= 8 {
				s8, d8 := src[p:p+8:p+8], dst[p:p+8:p+8]
				l0, l1, l2, l3 := word[s8[0]], word[s8[1]], word[s8[2]], word[s8[3]]
				l4, l5, l6, l7 := word[s8[4]], word[s8[5]], word[s8[6]], word[s8[7]]
				d8[0], d8[1], d8[2], d8[3] = l0, l1, l2, l3
				d8[4], d8[5], d8[6], d8[7] = l4, l5, l6, l7
				z := (uint64(l0)-1)>>63 | (uint64(l1)-1)>>63<<1 | (uint64(l2)-1)>>63<<2 | (uint64(l3)-1)>>63<<3 |
					(uint64(l4)-1)>>63<<4 | (uint64(l5)-1)>>63<<5 | (uint64(l6)-1)>>63<<6 | (uint64(l7)-1)>>63<<7
				if z != 0 {
					p += bits.TrailingZeros64(z)
					goto wordEnd
				}
				p += 8
			}
			for p < len(src) {
				if l = word[src[p]]; l == 0 {
					break
				}
				dst[p] = l
				p++
			}
		wordEnd:
			if p < len(src) && src[p] >= utf8.RuneSelf {
				// The token goes on with a multi-byte rune: leave it
				// whole to tokenizeFrom.
				o = o0
				break
			}
			i += p
			tb[nt] = token{start: int32(o), end: int32(o + p), z: cur}
			nt++
			o += p
		}
		toks = tb[:nt]
		if nt < len(tb) && i < len(text) {
			break // stopped at a byte >= 0x80
		}
	}
	n.text, n.toks = buf[:o], toks
	n.mark, n.cur = mark, cur
	return i
}

// hashTokens appends the fingerprints of the tokens that n.fps lacks, which
// tokenizeASCII left in n.text with at least 8 bytes of room after the
// last: each token's bytes are folded 8 at a time and its last 1 to 8
// bytes, loaded as one word and masked, by tokHasher's branch-free tail:
// for r bytes, g·x^(8r) = (g >> 8r) xor fold(g << (64-8r)).
func (n *normalizer) hashTokens() {
	h := n.hash
	buf := n.text[:cap(n.text)]
	toks := n.toks[len(n.fps):]
	m := len(n.fps)
	n.fps = slices.Grow(n.fps, len(toks))[:m+len(toks)]
	fps := n.fps[m:]
	fps = fps[:len(toks)]
	for j, t := range toks {
		s, e := int(t.start), int(t.end)
		f := h.q
		for e-s > 8 {
			f = h.fold(f ^ binary.LittleEndian.Uint64(buf[s:]))
			s += 8
		}
		// With r = e-s in 1..8 bytes left and sh = 64-8r in 0..56 (the
		// masks tell the compiler so, which spares it the checks for
		// shifts of 64): mask the loaded word to r bytes and fold
		// (g >> 8r) ^ fold(g << sh), g >> 8r written as g >> 8(r-1) >> 8.
		r := uint(e - s)
		sh := (64 - 8*r) & 63
		g := f ^ binary.LittleEndian.Uint64(buf[s:])&(^uint64(0)>>sh)
		fps[j] = ((g >> ((8*r - 8) & 63)) >> 8) ^ h.fold(g<<sh)
	}
}

// tokenizeFrom tokenizes text[i0:], appending to what n.text, n.toks and
// n.fps hold, and returns where it stopped: at the first ASCII byte after
// i0 that is not inside a token (where tokenizeASCII may go on), or at
// len(text); i0 must be a token boundary. ASCII word runs are copied by
// table (as in tokenizeASCII); runes of two and three bytes are decoded
// here and classified by runeClass (built from package unicode's tables),
// and the rest, and the runes whose class needs options (numbers, cased
// letters), with package unicode; each token is fingerprinted from its
// normalized bytes. A run of Han, kana, Thai, Lao, Khmer or Myanmar
// letters, the bulk of Chinese and Japanese text, takes a loop of its
// own: each letter is copied as it is with its space in one store and
// fingerprinted with three lookups (tokHasher.hash3). With TokenizerUnicode a letter or number of a script
// written without spaces (segmented) makes a token of its own, which only
// the combining marks after it extend (single), and a combining mark
// extends any token before it.
func (n *normalizer) tokenizeFrom(text []byte, i0 int) int {
	out := n.text
	toks := n.toks
	fps := n.fps
	hash := n.hash
	if hash == nil {
		hash = &zeroHasher
	}
	keepPunct := n.o.Punct == PunctKeep
	seg := n.o.Tokenizer == TokenizerUnicode
	marks := n.marks
	mark, cur := n.mark, n.cur
	inTok, single := false, false
	start := 0
	word := &n.word
	i := i0
	for i < len(text) {
		c := text[i]
		if !inTok && c < utf8.RuneSelf && i > i0 {
			break
		}
		if l := word[c]; l != 0 {
			if single {
				toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
				fps = append(fps, hash.hash(out[start:]))
				inTok, single = false, false
			}
			if !inTok {
				for mark < len(marks) && marks[mark].off <= i {
					cur = marks[mark].z
					mark++
				}
				if len(out) > 0 {
					out = append(out, ' ')
				}
				start = len(out)
				inTok = true
			}
			// The ASCII word run, copied lowered without per-byte append
			// checks: it needs at most len(text)-i bytes.
			if cap(out)-len(out) < len(text)-i {
				out = append(out, make([]byte, len(text)-i)...)[:len(out)]
			}
			o := len(out)
			buf := out[:cap(out)]
			buf[o] = l
			o++
			i++
			for i < len(text) {
				l = word[text[i]]
				if l == 0 {
					break
				}
				buf[o] = l
				o++
				i++
			}
			out = buf[:o]
			continue
		}
		if c < utf8.RuneSelf {
			// ASCII delimiter or punctuation.
			if inTok {
				toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
				fps = append(fps, hash.hash(out[start:]))
				inTok, single = false, false
			}
			if keepPunct && n.class[c] == cPunct {
				for mark < len(marks) && marks[mark].off <= i {
					cur = marks[mark].z
					mark++
				}
				if len(out) > 0 {
					out = append(out, ' ')
				}
				start = len(out)
				out = append(out, c)
				toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
				fps = append(fps, hash.hash(out[start:]))
			}
			i++
			continue
		}
		// Decode a rune of two or three bytes here and classify it by
		// runeClass; anything else (four bytes, invalid UTF-8, rcSlow)
		// goes to utf8.DecodeRune and package unicode.
		r, size, cls := utf8.RuneError, 1, uint8(rcSlow)
		if c&0xF0 == 0xE0 && i+2 < len(text) {
			c1, c2 := text[i+1], text[i+2]
			v := rune(c&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
			if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 && v >= 0x800 && (v < 0xD800 || v > 0xDFFF) {
				r, size, cls = v, 3, runeClass[v]
			}
		} else if c >= 0xC2 && c < 0xE0 && i+1 < len(text) && text[i+1]&0xC0 == 0x80 {
			r, size = rune(c&0x1F)<<6|rune(text[i+1]&0x3F), 2
			cls = runeClass[r]
		}
		if cls == rcAlone && seg && useRuns {
			// A run of Han, kana, Thai, ... letters (three bytes each,
			// as every rune of those scripts below U+10000 is): each a
			// token, copied as it is (caseless) and fingerprinted by
			// tokHasher.hash3. The run's last token stays open, for
			// the combining marks that may follow it.
			if inTok {
				toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
				fps = append(fps, hash.hash(out[start:]))
				inTok, single = false, false
			}
			// Room for the run: a token takes 3 bytes of text and at
			// most 4 bytes of out (with its space).
			rest := len(text) - i
			if cap(out)-len(out) < 2*rest+8 {
				out = slices.Grow(out, 2*rest+8)
			}
			if cap(toks)-len(toks) < rest/3+1 {
				toks = slices.Grow(toks, rest/3+1)
			}
			if cap(fps)-len(fps) < rest/3+1 {
				fps = slices.Grow(fps, rest/3+1)
			}
			o, buf := len(out), out[:cap(out)]
			nt, tb, fb := len(toks), toks[:cap(toks)], fps[:cap(fps)]
			for mark < len(marks) && marks[mark].off <= i {
				cur = marks[mark].z
				mark++
			}
			next := math.MaxInt // the next zone mark: the run stops there
			if mark < len(marks) {
				next = marks[mark].off
			}
			if o > 0 {
				buf[o] = ' '
				o++
			}
			// w: the open token's three bytes, little-endian; s: its
			// offset in out.
			t3 := text[i : i+3 : i+3]
			w := uint32(t3[0]) | uint32(t3[1])<<8 | uint32(t3[2])<<16
			s := o
			b3 := buf[o : o+3 : o+3]
			b3[0], b3[1], b3[2] = t3[0], t3[1], t3[2]
			o += 3
			i += 3
			// The run goes on over delimiters (ASCII white space and
			// punctuation, and three-byte punctuation and separators
			// such as "、" and "。", unless punctuation is kept), which
			// close the open token; it stops at anything else, or at a
			// zone mark.
			open := true
			for i+2 < len(text) && i < next {
				if c0 := text[i]; c0 < utf8.RuneSelf {
					if word[c0] != 0 || (keepPunct && n.class[c0] == cPunct) {
						break
					}
					if open {
						tb[nt] = token{start: int32(s), end: int32(o), z: cur}
						fb[nt] = hash.hash3(uint64(w))
						nt++
						open = false
					}
					i++
					continue
				}
				t3 = text[i : i+3 : i+3]
				x := uint32(t3[0]) | uint32(t3[1])<<8 | uint32(t3[2])<<16
				// Three bytes of one rune: 1110xxxx 10xxxxxx 10xxxxxx (an
				// rcAlone, rcPunct or rcDelim rune of three bytes is at
				// or above U+0800 and no surrogate, so the pattern is all
				// there is to check).
				if x&0xC0C0F0 != 0x8080E0 {
					break
				}
				cl := runeClass[(x&0x0F)<<12|(x>>8&0x3F)<<6|(x>>16&0x3F)]
				if cl != rcAlone && cl != rcDelim && (cl != rcPunct || keepPunct) {
					break // a mark, a letter of another script, a number, ...
				}
				if open {
					tb[nt] = token{start: int32(s), end: int32(o), z: cur}
					fb[nt] = hash.hash3(uint64(w))
					nt++
					open = false
				}
				if cl == rcAlone {
					binary.LittleEndian.PutUint32(buf[o:o+4:o+4], ' '|x<<8)
					s, w, open = o+1, x, true
					o += 4
				}
				i += 3
			}
			// The last token stays open, for the marks that may follow.
			if open {
				start, inTok, single = s, true, true
			}
			out, toks, fps = buf[:o], tb[:nt], fb[:nt]
			continue
		}
		isWord, punct, alone := false, false, false
		switch cls {
		case rcAlone:
			// A caseless letter of a segmented script (here without
			// TokenizerUnicode, or with useRuns off).
			isWord, alone = true, seg
		case rcWord:
			// A caseless letter of another script.
			isWord = true
		case rcMark:
			if seg {
				// A combining mark (UAX #29's Extend and SpacingMark):
				// part of the token before it, if any, else a delimiter.
				if inTok {
					out = append(out, text[i:i+size]...)
				}
				i += size
				continue
			}
		case rcPunct:
			punct = true
		case rcDelim:
		default:
			r, size = utf8.DecodeRune(text[i:])
			switch {
			case r == utf8.RuneError:
				// Invalid UTF-8 (or U+FFFD itself): a delimiter.
			case seg && (r == 0x0E33 || r == 0x0EB3) && inTok:
				// THAI CHARACTER SARA AM and LAO VOWEL SIGN AM: letters that
				// UAX #29 (GB9a) makes spacing marks, which continue the
				// token before them.
				out = utf8.AppendRune(out, r)
				i += size
				continue
			case unicode.IsLetter(r):
				isWord = true
				alone = seg && segmented(r)
				if n.o.Case == CaseLower {
					r = unicode.ToLower(r)
				}
			case unicode.IsNumber(r):
				switch n.o.Digits {
				case DigitsKeep:
					isWord = true
					alone = seg && segmented(r)
				case DigitsFold:
					isWord = true
					alone = seg && segmented(r)
					if unicode.IsDigit(r) {
						r = '0'
					}
				}
			case seg && unicode.In(r, unicode.M):
				// A combining mark (UAX #29's Extend and SpacingMark): part
				// of the token before it, if any, else a delimiter.
				if inTok {
					out = utf8.AppendRune(out, r)
				}
				i += size
				continue
			case unicode.IsPunct(r) || unicode.IsSymbol(r):
				punct = true
			}
		}
		if isWord {
			if inTok && (single || alone) {
				toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
				fps = append(fps, hash.hash(out[start:]))
				inTok = false
			}
			if !inTok {
				for mark < len(marks) && marks[mark].off <= i {
					cur = marks[mark].z
					mark++
				}
				if len(out) > 0 {
					out = append(out, ' ')
				}
				start = len(out)
				inTok = true
			}
			single = alone
			out = utf8.AppendRune(out, r)
			i += size
			continue
		}
		if inTok {
			toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
			fps = append(fps, hash.hash(out[start:]))
			inTok, single = false, false
		}
		if punct && keepPunct {
			for mark < len(marks) && marks[mark].off <= i {
				cur = marks[mark].z
				mark++
			}
			if len(out) > 0 {
				out = append(out, ' ')
			}
			start = len(out)
			out = utf8.AppendRune(out, r)
			toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
			fps = append(fps, hash.hash(out[start:]))
		}
		i += size
	}
	if inTok {
		toks = append(toks, token{start: int32(start), end: int32(len(out)), z: cur})
		fps = append(fps, hash.hash(out[start:]))
	}
	n.text = out
	n.toks = toks
	n.fps = fps
	n.mark, n.cur = mark, cur
	return i
}

// segmentedScripts are the scripts written without spaces between words
// that TokenizerUnicode cuts into characters (Han, Hiragana, Katakana) or
// grapheme clusters (Thai, Lao, Khmer, Myanmar).
var segmentedScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

// segmented reports whether the letter or number r belongs to a script of
// segmentedScripts. Every such rune is at or above U+0E00 (Thai), and the
// Hangul syllables, which are not, are frequent enough to skip by range.
func segmented(r rune) bool {
	if r < 0x0E00 || (r >= 0xAC00 && r <= 0xD7A3) {
		return false
	}
	return unicode.In(r, segmentedScripts...)
}

// useRuns lets tests take the general switch for runs of segmented
// letters too (tokenizeFrom).
var useRuns = true
