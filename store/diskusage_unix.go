//go:build unix

package store

import (
	"os"
	"syscall"
)

// diskUsage returns the bytes a file's blocks take (st_blocks), which
// counts preallocated space that the size does not.
func diskUsage(info os.FileInfo, size int64) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return size
}
