//go:build !unix

package index

func processCPU() int64 { return -1 }
