//go:build !unix

package feature

func processCPU() int64 { return -1 }
