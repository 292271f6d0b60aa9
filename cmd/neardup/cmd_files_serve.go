package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/rdc"
)

type filesServeOptions struct {
	listenFlags
	Dir   string
	Chunk chunkFlags
	Level int
	// ready, when set (tests), receives the listening address.
	ready func(addr string)
}

func newFilesServeCmd(env *Env) *cobra.Command {
	var opts filesServeOptions
	cmd := &cobra.Command{
		Use:   "serve DIR",
		Short: "Serve a directory tree read-only for 'files pull' (remote differential sync)",
		Long: `serve signs every file under DIR (winnowed chunks of --avg bytes and the
recursive signature above them) and serves the tree read-only over HTTP to
'neardup files pull', which fetches only the chunks it cannot find in its
own files. It listens on loopback only unless --token is given, and beyond
loopback only with TLS (--tls-cert, --tls-key) or --insecure (behind a TLS
proxy). The token may also come from the environment, NEARDUP_TOKEN. The
tree is signed once at start; a file changed afterwards is refused to
pullers (restart serve). It runs until interrupted.`,
		Example: `  neardup files serve ~/src --addr 127.0.0.1:8090
  NEARDUP_TOKEN=s3cret neardup files serve /srv/tree --addr :8443 --tls-cert c.pem --tls-key k.pem`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			opts.tokenFromEnv()
			return runFilesServe(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	opts.bind(fl, "127.0.0.1:8090")
	fl.IntVar(&opts.Level, "level", 3, "zstd level of what is sent: 1 (fastest) to 4 (best: about 4x the CPU of 3 for 7% fewer bytes on source code)")
	opts.Chunk.bind(cmd)
	fl.Lookup("avg").DefValue = fmt.Sprint(rdc.DefaultChunk.Avg)
	_ = fl.Set("avg", fmt.Sprint(rdc.DefaultChunk.Avg))
	return cmd
}

func runFilesServe(ctx context.Context, env *Env, opts filesServeOptions) error {
	tc, err := opts.tlsConfig()
	if err != nil {
		return err
	}
	o, err := opts.Chunk.options()
	if err != nil {
		return err
	}
	if opts.Level < 1 || opts.Level > 4 {
		return usagef("--level %d: want 1 to 4", opts.Level)
	}
	so := rdc.ServerOptions{Token: opts.Token, Insecure: opts.Insecure, TLS: tc, Level: opts.Level, ErrorLog: func(err error) {
		fmt.Fprintf(env.Stderr, "neardup files serve: %v\n", err)
	}}
	if err := checkServeAddr(opts.Addr, so); err != nil {
		return err
	}
	if fi, err := os.Stat(opts.Dir); err != nil {
		return err
	} else if !fi.IsDir() {
		return usagef("%s is not a directory", opts.Dir)
	}
	srv, addr, err := startTreeServer(ctx, opts.Dir, o, opts.Addr, so, func(t *rdc.Tree) {
		for _, s := range t.Skipped {
			fmt.Fprintf(env.Stderr, "neardup files serve: skip %s\n", s)
		}
	})
	if err != nil {
		return err
	}
	scheme := "http"
	if so.TLS != nil {
		scheme = "https"
	}
	fmt.Fprintf(env.Stderr, "neardup files serve: serving %s on %s://%s\n", opts.Dir, scheme, addr)
	if opts.ready != nil {
		opts.ready(addr)
	}
	return srv()
}

// checkServeAddr refuses an address beyond loopback without a token, or
// without TLS unless --insecure (serve's rules).
func checkServeAddr(addr string, so rdc.ServerOptions) error {
	probe, err := rdc.NewServer(&rdc.Tree{Dir: "."}, so)
	if err != nil {
		return err
	}
	defer probe.Close()
	if err := probe.CheckAddr(addr); err != nil {
		return usagef("--addr %s: %v", addr, err)
	}
	return nil
}

// startTreeServer scans dir, listens on addr and returns a function that
// serves until ctx ends, and the address listened on.
func startTreeServer(ctx context.Context, dir string, o chunk.Options, addr string, so rdc.ServerOptions, scanned func(*rdc.Tree)) (func() error, string, error) {
	t, err := rdc.Scan(ctx, dir, o)
	if err != nil {
		return nil, "", err
	}
	if scanned != nil {
		scanned(t)
	}
	srv, err := rdc.NewServer(t, so)
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return nil, "", err
	}
	return func() error {
		defer srv.Close()
		err := srv.Serve(ctx, l)
		if errors.Is(err, rdc.ErrInsecure) {
			return usagef("%v", err)
		}
		return err
	}, l.Addr().String(), nil
}
