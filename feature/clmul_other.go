//go:build !amd64 || purego

package feature

// hasCLMUL is false: the ASCII path takes the table route.
var hasCLMUL, hasCLMUL512, hasSpans512, hasCLMUL256, hasSpans256 = false, false, false, false, false

func clWords(dst []uint64, buf []byte, st, en []int32, c *clConsts) int {
	return clWordsGo(dst, buf, st, en, c)
}

func clWindow(dst, toks []uint64, c *clConsts) { clWindowGo(dst, toks, c) }

func clWindow8(dst, toks []uint64, c *clConsts) { clWindowGo(dst, toks, c) }

func clWords4(dst []uint64, buf []byte, st, en []int32, c *clConsts) int {
	return clWordsGo(dst, buf, st, en, c)
}

func wordMasks(dst []uint64, text []byte, digits uint64) bool { return wordMasksGo(dst, text, digits) }

func spans512(text []byte, st, en []int32, digits uint64) (nst, nen int, high bool) {
	return spans512Go(text, st, en, digits)
}

func clWindow4(dst, toks []uint64, c *clConsts) { clWindowGo(dst, toks, c) }

func clWords4x2(dst []uint64, buf []byte, st, en []int32, c *clConsts) int {
	return clWordsGo(dst, buf, st, en, c)
}

func spans256(text []byte, st, en []int32, digits, fold uint64) (nst, nen int, high bool) {
	nst, nen, high = spans512Go(text, st, en, digits)
	foldASCII(text, digits, fold)
	return nst, nen, high
}

func clWords4x2F(dst []uint64, buf []byte, st, en []int32, c *clConsts) int {
	return clWordsGo(dst, buf, st, en, c)
}

// hasDedup4 and useDedup4 are false: dedupSet probes one slot at a time.
var hasDedup4, useDedup4 = false, false

func dedupSet4(keys []uint64, db []Feature, fb []int32, ids []uint64, shift uint) int {
	return dedupSet4Go(keys, db, fb, ids, shift)
}
