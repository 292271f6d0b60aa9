// Command neardup finds near-duplicate documents, web pages and files.
// Run "neardup --help" for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/neardup/neardup/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.ProcessEnv())
	stop()
	os.Exit(code)
}
