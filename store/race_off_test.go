//go:build !race

package store_test

// slowdown scales the fault tests' time bounds (race_on_test.go).
const slowdown = 1
