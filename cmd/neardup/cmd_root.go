// The neardup commands: each lives in its own file cmd_<command>.go as
// newXCmd(env) with an xOptions struct and a runX(ctx, env, opts) error that
// tests call directly; this file wires them into the root command and maps
// errors to exit codes in one place (Main).

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/spf13/cobra"

	"github.com/neardup/neardup/store"
)

// Env is what a command may touch of the outside world. Tests build one with
// buffers; main builds one from the process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Interactive reports whether Stderr is a terminal, so long-running
	// commands show progress bars there and plain log lines otherwise.
	Interactive bool
	// StoreFS is the filesystem Pebble stores live on; nil means the
	// operating system's. Tests wrap it with Pebble's vfs/errorfs to
	// inject storage faults into whole commands.
	StoreFS vfs.FS
}

// pebbleOptions returns o (or new options) with the environment's store
// filesystem.
func (env *Env) pebbleOptions(o *store.PebbleOptions) *store.PebbleOptions {
	if env.StoreFS == nil {
		return o
	}
	if o == nil {
		o = &store.PebbleOptions{}
	}
	o.FS = env.StoreFS
	return o
}

// Exit codes, mapped in one place (Main).
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed
	ExitUsage   = 2 // bad flags or arguments
)

// UsageError marks an error in the command line rather than in the work.
// Bare: the message says all there is (a budget too small, with its
// numbers), and Main adds no pointer to the help.
type UsageError struct {
	Err  error
	Bare bool
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// NewRootCmd builds the neardup command tree.
func NewRootCmd(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "neardup",
		Short: "Find near-duplicate documents, web pages and files",
		Long: `neardup finds what is close enough: near-duplicate documents, web pages and
files, with consistent-sampling sketches whose error is known.`,
		Example:       "  neardup dedup testdata/licenses/docs.jsonl.gz --out out\n  neardup explain --corpus testdata/licenses/docs.jsonl.gz debian-copyright/alsa-topology-conf debian-copyright/alsa-ucm-conf",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().Bool("version", false, "print the neardup version, commit and Go version")
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	// One line per command; each lives in its own file.
	root.AddCommand(
		newVersionCmd(env),
		newFilesCmd(env),
		newFeaturesCmd(env),
		newFingerprintCmd(env),
		newIDFCmd(env),
		newSketchCmd(env),
		newCompareCmd(env),
		newCountCmd(env),
		newExplainCmd(env),
		newDedupCmd(env),
		newIndexCmd(env),
		newParamsCmd(env),
		newServeCmd(env),
		newQueryCmd(env),
		newCollapseCmd(env),
	)
	// pflag's warnings (a deprecated flag spelling) go to stderr, never
	// into a command's output on stdout.
	var quiet func(c *cobra.Command)
	quiet = func(c *cobra.Command) {
		c.Flags().SetOutput(env.Stderr)
		for _, sub := range c.Commands() {
			quiet(sub)
		}
	}
	quiet(root)
	return root
}

// Main runs neardup with args and returns the process exit code. It is the
// one place where errors become exit codes and messages on stderr.
func Main(ctx context.Context, args []string, env *Env) int {
	root := NewRootCmd(env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// SIGTERM or Ctrl-C: what stopped is said, not how.
		fmt.Fprintln(env.Stderr, "neardup: interrupted; stopped without finishing")
		return ExitFailure
	}
	var ue *UsageError
	if errors.As(err, &ue) && ue.Bare {
		// The one line of the usage error itself, without the wrapping
		// of the layers it came up through.
		fmt.Fprintf(env.Stderr, "neardup: %v\n", ue)
		return ExitUsage
	}
	fmt.Fprintf(env.Stderr, "neardup: %v\n", err)
	if ue != nil || isCobraUsage(err) {
		fmt.Fprintln(env.Stderr, "Run 'neardup --help' for usage.")
		return ExitUsage
	}
	return ExitFailure
}

// isCobraUsage recognizes the argument errors cobra returns itself (unknown
// command, wrong number of arguments).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
