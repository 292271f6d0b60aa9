//go:build linux || darwin

package dedup

import (
	"runtime"
	"unsafe"
)

// offHeapChunk returns a chunk of at least n sketch value words in
// anonymous memory mapped outside the Go heap (mapChunk), and its owner:
// the memory is unmapped once the owner is unreachable (a cleanup). Every
// document whose values lie in the chunk holds the owner
// (sketchVals.chunk), so no sketch value is read after its memory is
// unmapped. ok is false when the mapping failed; the caller then
// allocates on the heap.
func offHeapChunk(n int) (c *arenaChunk, ws []uint32, ok bool) {
	mem, err := mapChunk(4 * n)
	if err != nil {
		return nil, nil, false
	}
	c = &arenaChunk{size: len(mem)}
	runtime.AddCleanup(c, unmapChunk, mem)
	return c, unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/4), true
}
