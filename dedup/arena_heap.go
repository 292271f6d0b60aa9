//go:build !linux && !darwin

package dedup

// offHeapChunk reports that this platform has no off-heap chunks: the
// arena allocates on the Go heap.
func offHeapChunk(int) (*arenaChunk, []uint32, bool) { return nil, nil, false }
