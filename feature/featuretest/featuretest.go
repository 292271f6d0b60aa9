// Package featuretest provides the reference tokenizer that the tests of
// package feature and of the neardup command check the unicode-v1
// tokenizer (feature.TokenizerUnicode) against: the tokenizer's rule
// written rune by rune with package unicode, as plainly as it can be, and
// independent of the extractor's fast routes (byte tables, rune classes,
// fingerprints computed without the token's bytes).
//
// It is for tests only: it allocates a string per token and is a hundred
// times slower than the extractor. It covers the default options (lower
// case, digits kept, punctuation dropped, no Unicode normalization).
package featuretest

import (
	"unicode"
	"unicode/utf8"
)

// UnicodeTokens returns the tokens of s under the unicode-v1 rule at the
// default options: a letter or number of Han, Hiragana, Katakana, Thai,
// Lao, Khmer or Myanmar is a token of its own; any other letter, number or
// '_' continues a token of such runes or starts one; a combining mark
// (category M), or THAI CHARACTER SARA AM or LAO VOWEL SIGN AM, continues
// the token before it; everything else (white space, punctuation,
// symbols, invalid UTF-8) ends the token. Letters are lowered
// (unicode.ToLower); numbers, marks and '_' are kept as they are.
func UnicodeTokens(s string) []string {
	var toks []string
	var cur []rune
	alone := false
	flush := func() {
		if len(cur) > 0 {
			toks = append(toks, string(cur))
		}
		cur, alone = nil, false
	}
	for _, r := range s {
		if unicode.IsLetter(r) {
			r = unicode.ToLower(r)
		}
		switch {
		case r == utf8.RuneError:
			flush()
		case len(cur) > 0 && (unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) || r == 'ำ' || r == 'ຳ'):
			cur = append(cur, r)
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) &&
			(unicode.IsLetter(r) || unicode.IsNumber(r)):
			flush()
			cur, alone = append(cur, r), true
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_':
			if alone {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return toks
}
