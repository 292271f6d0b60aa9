//go:build unix

package main

import (
	"os"
	"syscall"
)

// killSelf ends the process with SIGKILL, as a crash or the OOM killer
// would: no deferred function, no exit handler runs. It serves the
// test-only kill hook (killPoint).
func killSelf() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
