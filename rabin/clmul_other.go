//go:build !amd64 || purego

package rabin

// hasCLMUL is false: Extend takes the table route.
var hasCLMUL = false

func extendCL(f uint64, data []byte, c *clFold) uint64 { return extendCLGo(f, data, c) }
