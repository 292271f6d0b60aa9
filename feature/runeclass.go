package feature

import "unicode"

// Classes of the runes of the Basic Multilingual Plane, for tokenizeFrom's
// fast route (runeClass). rcSlow, the zero value, sends a rune to the
// general switch, which classifies it with package unicode; every other
// class stands for that switch's answer.
const (
	rcSlow  = iota // the general switch decides (numbers, cased letters, SARA AM, U+FFFD, ...)
	rcAlone        // a caseless letter of a segmented script (TokenizerUnicode: a token of its own)
	rcWord         // a caseless letter of any other script: part of a token, unchanged
	rcMark         // a combining mark (category M)
	rcPunct        // punctuation or symbol (categories P, S)
	rcDelim        // anything else (separators, controls, format, unassigned): a delimiter
)

// runeClass is the class of every rune below U+10000, built at init from
// the standard library's range tables (unicode.L, M, P, S, N, the scripts
// of segmentedScripts and unicode.CaseRanges), never from ranges typed
// here. A letter is caseless unless a case range maps it to a different
// lower-case rune; letters that are conservatively counted as cased (the
// alternating ranges) take the general switch, which lowers them exactly.
// The numbers (which the Digits options treat three ways), THAI
// CHARACTER SARA AM and LAO VOWEL SIGN AM (letters that continue a token)
// and U+FFFD (a delimiter, not a symbol) are rcSlow. TestRuneClass checks
// every rune against package unicode. 64 KiB, immutable after init.
var runeClass = buildRuneClass()

func buildRuneClass() *[1 << 16]uint8 {
	t := new([1 << 16]uint8)
	each := func(tab *unicode.RangeTable, f func(r rune)) {
		for _, rg := range tab.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				f(r)
			}
		}
	}
	for r := 0x80; r < len(t); r++ {
		t[r] = rcDelim // unless a table below says otherwise
	}
	each(unicode.P, func(r rune) { t[r] = rcPunct })
	each(unicode.S, func(r rune) { t[r] = rcPunct })
	each(unicode.M, func(r rune) { t[r] = rcMark })
	each(unicode.L, func(r rune) { t[r] = rcWord })
	for _, s := range segmentedScripts {
		each(s, func(r rune) {
			if t[r] == rcWord {
				t[r] = rcAlone
			}
		})
	}
	for _, cr := range unicode.CaseRanges {
		if cr.Delta[unicode.LowerCase] == 0 {
			continue
		}
		for r := cr.Lo; r <= cr.Hi && r < 1<<16; r++ {
			if t[r] == rcWord || t[r] == rcAlone {
				t[r] = rcSlow
			}
		}
	}
	each(unicode.N, func(r rune) { t[r] = rcSlow })
	t[0x0E33], t[0x0EB3], t[0xFFFD] = rcSlow, rcSlow, rcSlow
	for r := range 0x80 {
		t[r] = rcSlow // ASCII never reaches the table: the byte tables take it
	}
	return t
}
