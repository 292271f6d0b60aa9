//go:build !linux

package redistest

import "os/exec"

// setParentDeathSignal does nothing outside Linux: servers are stopped by
// the tests' cleanups only.
func setParentDeathSignal(*exec.Cmd) {}
