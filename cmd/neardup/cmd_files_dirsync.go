package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/chunk/rdc"
)

type filesDirSyncOptions struct {
	Src, Dst string
	Delete   bool
	JSON     bool
	Chunk    chunkFlags
}

func newFilesDirSyncCmd(env *Env) *cobra.Command {
	var opts filesDirSyncOptions
	cmd := &cobra.Command{
		Use:   "sync SRC DST",
		Short: "Make directory DST equal to SRC with the engine of 'files serve' and 'files pull'",
		Long: `sync makes DST equal to SRC on one machine: it serves SRC on a loopback
port for the duration of the run and pulls it into DST exactly as 'files
pull' does (same checks, same --json figures, the bytes counted on the
loopback wire).`,
		Example: "  neardup files sync ~/src/project /backup/project --delete",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Src, opts.Dst = args[0], args[1]
			return runFilesDirSync(cmd.Context(), env, opts)
		},
	}
	opts.Chunk.bind(cmd)
	fl := cmd.Flags()
	_ = fl.Set("avg", "512")
	fl.Lookup("avg").DefValue = "512"
	fl.BoolVar(&opts.Delete, "delete", false, "remove what SRC does not have from DST")
	fl.BoolVar(&opts.JSON, "json", false, "print what was done as one JSON object")
	return cmd
}

func runFilesDirSync(ctx context.Context, env *Env, opts filesDirSyncOptions) error {
	o, err := opts.Chunk.options()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(opts.Src); err != nil {
		return err
	} else if !fi.IsDir() {
		return usagef("%s is not a directory", opts.Src)
	}
	if err := os.MkdirAll(opts.Dst, 0o755); err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	token := randomToken()
	serve, addr, err := startTreeServer(sctx, opts.Src, o, "127.0.0.1:0", rdc.ServerOptions{Token: token}, nil)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- serve() }()
	c, err := rdc.NewClient("http://"+addr, rdc.ClientOptions{Token: token})
	if err != nil {
		return err
	}
	st, perr := rdc.Pull(ctx, c, opts.Dst, rdc.PullOptions{Delete: opts.Delete})
	c.CloseIdle()
	stop()
	<-served
	return reportPull(env, opts.JSON, st, perr)
}
