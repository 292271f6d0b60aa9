//go:build race

package store_test

// slowdown scales the fault tests' time bounds: the race detector runs
// Pebble's code several times slower (.ci/run runs them under it).
const slowdown = 4
