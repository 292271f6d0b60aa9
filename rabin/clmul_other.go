//go:build !amd64 || purego

package rabin

// hasCLMUL is false: Extend takes the table route.
var hasCLMUL = false

func extendCL(f uint64, data []byte, c *clFold) uint64 { return extendCLGo(f, data, c) }

// hasCL2 is false: Hash2 makes two passes.
var hasCL2 = false

func extendCL2(f1, f2 uint64, data []byte, c1, c2 *clFold) (uint64, uint64) {
	return extendCLGo(f1, data, c1), extendCLGo(f2, data, c2)
}

// hasCL2x is false.
var hasCL2x = false

func extendCL2x(f1, f2 uint64, data []byte, c1, c2 *clFold) (uint64, uint64) {
	return extendCL2(f1, f2, data, c1, c2)
}
