// Command neardup finds near-duplicate documents, web pages and files.
// Run "neardup --help" for the commands.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs neardup with args on the given streams and returns the process
// exit code; Main maps errors to exit codes.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	if f, ok := stderr.(*os.File); ok {
		env.Interactive = term.IsTerminal(int(f.Fd()))
	}
	return Main(ctx, args, env)
}
