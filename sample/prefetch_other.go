//go:build !amd64 || purego

package sample

import "github.com/neardup/neardup/feature"

// prefetch does nothing where there is no prefetch kernel (the purego
// build and other architectures): the hardware prefetcher alone follows
// the stream.
func prefetch(fs []feature.Feature) {}
