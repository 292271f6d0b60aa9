package dedup

import "golang.org/x/sys/unix"

// mapChunk maps size bytes of anonymous memory for an arena chunk; the
// pages come in as the worker writes them.
func mapChunk(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
}

// unmapChunk unmaps a chunk of mapChunk.
func unmapChunk(mem []byte) { _ = unix.Munmap(mem) }
