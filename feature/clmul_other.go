//go:build !amd64

package feature

// hasCLMUL is false: the ASCII path takes the table route.
var hasCLMUL, hasCLMUL512 = false, false

func clWords(dst []uint64, buf []byte, st, en []int32, c *clConsts) int {
	return clWordsGo(dst, buf, st, en, c)
}

func clWindow(dst, toks []uint64, c *clConsts) { clWindowGo(dst, toks, c) }

func clWindow8(dst, toks []uint64, c *clConsts) { clWindowGo(dst, toks, c) }

func clWords4(dst []uint64, buf []byte, st, en []int32, c *clConsts) int {
	return clWordsGo(dst, buf, st, en, c)
}

func wordMasks(dst []uint64, text []byte, digits uint64) bool { return wordMasksGo(dst, text, digits) }
