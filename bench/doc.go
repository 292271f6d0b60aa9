// Package bench holds side-by-side benchmarks of neardup against peer
// libraries. It is a separate Go module so that the main module never
// depends on its peers. Each benchmark is a main package in its own folder.
package bench
