//go:build !amd64

package feature

// hasCLMUL is false: the ASCII path takes the table route.
var hasCLMUL = false

func clToks(dst, lo, hi []uint64, r []uint8, c *clConsts) { clToksGo(dst, lo, hi, r, c) }

func clWindow(dst, toks []uint64, c *clConsts) { clWindowGo(dst, toks, c) }
