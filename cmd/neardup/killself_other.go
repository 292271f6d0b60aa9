//go:build !unix

package main

import "os"

// killSelf ends the process at once (TerminateProcess on Windows): no
// deferred function, no exit handler runs. It serves the test-only kill
// hook (killPoint).
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
}
