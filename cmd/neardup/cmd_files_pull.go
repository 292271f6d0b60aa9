package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/chunk/rdc"
)

type filesPullOptions struct {
	URL, Dir string
	Token    string
	CACert   string
	Delete   bool
	JSON     bool
}

func newFilesPullCmd(env *Env) *cobra.Command {
	var opts filesPullOptions
	cmd := &cobra.Command{
		Use:   "pull URL DIR",
		Short: "Make DIR equal to the tree 'files serve' serves at URL, fetching only what DIR lacks",
		Long: `pull makes DIR equal to the tree served at URL by 'neardup files serve':
contents, modes, symbolic links and directories (--delete also removes what
the server does not have). Files already in place are left alone; a file
found elsewhere in DIR is copied; for the others pull explores the file's
recursive signature and takes every chunk it finds in the file of the same
path or in the files whose similarity sketches match, fetching only the
rest (zstd-compressed). Every file is written beside its place, verified
against the server's signature root and renamed into place; a pull that
fails or is killed, run again, continues. Nothing is ever written outside
DIR; symbolic links that would lead out of it are refused (listed, exit 1).
The token may also come from the environment, NEARDUP_TOKEN.`,
		Example: `  neardup files pull http://127.0.0.1:8090 ./mirror --delete
  neardup files pull https://build.example:8443 ./tree --token "$TOK" --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.URL, opts.Dir = args[0], args[1]
			if opts.Token == "" {
				opts.Token = os.Getenv("NEARDUP_TOKEN")
			}
			return runFilesPull(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Token, "token", "", "bearer token for the server")
	fl.StringVar(&opts.CACert, "ca-cert", "", "PEM file of the CA that signed the server's certificate (default: the system's roots)")
	fl.BoolVar(&opts.Delete, "delete", false, "remove local files, links and directories the server does not have")
	fl.BoolVar(&opts.JSON, "json", false, "print what was done as one JSON object")
	return cmd
}

// filesPullResult is the --json output of files pull and files sync.
type filesPullResult struct {
	BytesReceived int64 `json:"bytes_received"`
	BytesSent     int64 `json:"bytes_sent"`
	Files         int   `json:"files"`
	Unchanged     int   `json:"files_unchanged"`
	Copied        int   `json:"files_copied"`
	Written       int   `json:"files_written"`
	Dirs          int   `json:"dirs"`
	Symlinks      int   `json:"symlinks"`
	Chunks        struct {
		SamePath  int64 `json:"same_path"`
		OtherFile int64 `json:"other_file"`
		Fetched   int64 `json:"fetched"`
	} `json:"chunks"`
	Bytes struct {
		SamePath  int64 `json:"same_path"`
		OtherFile int64 `json:"other_file"`
		Fetched   int64 `json:"fetched"`
	} `json:"bytes"`
	// DictBytes are the local bytes the fetched chunks were compressed
	// against; DictRefused the batches fetched again without them.
	DictBytes   int64    `json:"dict_bytes"`
	DictRefused int      `json:"dict_refused"`
	RoundTrips  int64    `json:"round_trips"`
	Retries     int      `json:"retries"`
	Refetched   int      `json:"refetched"`
	Deleted     int      `json:"deleted"`
	Refused     []string `json:"refused"`
	Seconds     float64  `json:"seconds"`
}

func runFilesPull(ctx context.Context, env *Env, opts filesPullOptions) error {
	co := rdc.ClientOptions{Token: opts.Token}
	if opts.CACert != "" {
		tc, err := caConfig(opts.CACert)
		if err != nil {
			return err
		}
		co.TLS = tc
	}
	c, err := rdc.NewClient(opts.URL, co)
	if err != nil {
		return usagef("%v", err)
	}
	defer c.CloseIdle()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return err
	}
	st, err := rdc.Pull(ctx, c, opts.Dir, rdc.PullOptions{Delete: opts.Delete})
	return reportPull(env, opts.JSON, st, err)
}

func reportPull(env *Env, asJSON bool, st *rdc.Stats, err error) error {
	if st != nil {
		for _, r := range st.Refused {
			fmt.Fprintf(env.Stderr, "neardup: refused %s\n", r)
		}
	}
	if err != nil {
		return err
	}
	res := filesPullResult{BytesReceived: st.BytesReceived, BytesSent: st.BytesSent, Files: st.Files, Unchanged: st.Unchanged,
		Copied: st.Copied, Written: st.Written, Dirs: st.Dirs, Symlinks: st.Symlinks, RoundTrips: st.RoundTrips,
		Retries: st.Retries, Refetched: st.Refetched, DictBytes: st.DictBytes, DictRefused: st.DictRefused, Deleted: st.Deleted, Refused: st.Refused, Seconds: round6(st.Seconds)}
	res.Chunks.SamePath, res.Chunks.OtherFile, res.Chunks.Fetched = st.ChunksSamePath, st.ChunksOtherFile, st.ChunksFetched
	res.Bytes.SamePath, res.Bytes.OtherFile, res.Bytes.Fetched = st.BytesSamePath, st.BytesOtherFile, st.BytesFetched
	if res.Refused == nil {
		res.Refused = []string{}
	}
	if asJSON {
		return json.NewEncoder(env.Stdout).Encode(&res)
	}
	w := env.Stdout
	fmt.Fprintf(w, "%d files: %d unchanged, %d copied from local files, %d written; %d directories, %d symbolic links; %d deleted\n",
		res.Files, res.Unchanged, res.Copied, res.Written, res.Dirs, res.Symlinks, res.Deleted)
	fmt.Fprintf(w, "chunks reused: %d from the same path (%d bytes), %d from other files (%d bytes); fetched: %d (%d bytes)\n",
		res.Chunks.SamePath, res.Bytes.SamePath, res.Chunks.OtherFile, res.Bytes.OtherFile, res.Chunks.Fetched, res.Bytes.Fetched)
	fmt.Fprintf(w, "wire: %d bytes received, %d sent, %d round trips; %.2f s\n", res.BytesReceived, res.BytesSent, res.RoundTrips, res.Seconds)
	return nil
}

// caConfig trusts the CA certificates in a PEM file.
func caConfig(file string) (*tls.Config, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, usagef("--ca-cert %s: no certificate found", file)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// randomToken returns 32 random hex digits.
func randomToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
