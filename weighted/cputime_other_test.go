//go:build !unix

package weighted

func processCPU() int64 { return -1 }
