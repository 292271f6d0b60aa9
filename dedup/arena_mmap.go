//go:build linux || darwin

package dedup

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// offHeapChunk returns a chunk of n sketch value words in anonymous memory
// mapped outside the Go heap, and its owner: the memory is unmapped once
// the owner is unreachable (a cleanup). Every document whose values lie
// in the chunk holds the owner (sketchVals.chunk), so no sketch value is read
// after its memory is unmapped. ok is false when the mapping failed; the
// caller then allocates on the heap. The pages are mapped in at once
// (MAP_POPULATE, on Linux), one system call where the writes would each take a page
// fault: the arena's copies at 1M documents, 0.55-0.63 -> 0.40-0.44 CPU-s.
func offHeapChunk(n int) (c *arenaChunk, ws []uint32, ok bool) {
	mem, err := unix.Mmap(-1, 0, 4*n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|mapPopulate)
	if err != nil {
		return nil, nil, false
	}
	c = &arenaChunk{size: len(mem)}
	runtime.AddCleanup(c, func(mem []byte) { _ = unix.Munmap(mem) }, mem)
	return c, unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(mem))), n), true
}
