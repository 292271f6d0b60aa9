package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/store"
)

type indexBackupOptions struct {
	Store  string
	Server string
	Dir    string
	JSON   bool
}

func newIndexBackupCmd(env *Env) *cobra.Command {
	var opts indexBackupOptions
	cmd := &cobra.Command{
		Use:   "backup (--store DIR | --server URL) BACKUP",
		Short: "Write a consistent copy of an index (a Pebble checkpoint) into a new directory",
		Long: `backup copies a Pebble index as it stands into BACKUP, a directory that must
not exist: a checkpoint, whose tables are hard-linked when BACKUP is on the
same file system (so it is quick and takes little space until the index
compacts them away), and copied otherwise.

An index a server holds open is backed up through the server, while it
serves: --server URL (bearer token from NEARDUP_TOKEN; the server must have
been started with --token) asks it to write BACKUP, an absolute path on the
server's machine. Writes wait for the checkpoint, queries do not.

'neardup index restore --store DIR BACKUP' makes a working index of a
backup; 'neardup index check --store DIR' verifies it. A Redis index is
backed up by Redis's own persistence (an RDB snapshot from BGSAVE, or the
append-only file), not by this command.`,
		Example: `  neardup index backup --store idx/ backups/idx-monday
  NEARDUP_TOKEN=... neardup index backup --server http://127.0.0.1:8080 /srv/backups/idx-monday`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return runIndexBackup(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Store, "store", "", "the index: a Pebble directory")
	cmd.Flags().StringVar(&opts.Server, "server", "", "back up the index of the neardup server at this URL instead (bearer token from NEARDUP_TOKEN)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"backup", "seconds"} as JSON`)
	return cmd
}

func runIndexBackup(ctx context.Context, env *Env, opts indexBackupOptions) error {
	if (opts.Store == "") == (opts.Server == "") {
		return usagef("give one of --store and --server")
	}
	start := time.Now()
	if opts.Server != "" {
		if !filepath.IsAbs(opts.Dir) {
			return usagef("BACKUP %s: with --server, give an absolute path on the server's machine", opts.Dir)
		}
		c, err := client.New(opts.Server, &client.Options{Token: os.Getenv("NEARDUP_TOKEN")})
		if err != nil {
			return usagef("--server: %v", err)
		}
		if _, err := c.Backup(ctx, opts.Dir); err != nil {
			return fmt.Errorf("index backup: %w", err)
		}
	} else {
		if _, err := os.Stat(opts.Store); err != nil {
			return usagef("--store %s: no index there (%v)", opts.Store, errors.Unwrap(err))
		}
		if _, err := os.Lstat(opts.Dir); err == nil {
			return usagef("BACKUP %s already exists: give a new directory", opts.Dir)
		}
		st, err := store.OpenPebble(opts.Store, env.pebbleOptions(nil))
		if errors.Is(err, store.ErrInUse) {
			return fmt.Errorf("%w (a server holds it: back it up through the server with --server URL)", err)
		}
		if err != nil {
			return err
		}
		defer st.Close()
		if _, ok, err := index.Stored(ctx, st); err != nil {
			return err
		} else if !ok {
			return usagef("--store %s holds no index", opts.Store)
		}
		x, err := index.Open(ctx, st, index.Config{})
		if err != nil {
			return configError(err)
		}
		if err := x.Backup(ctx, opts.Dir); err != nil {
			return err
		}
		if err := st.Close(); err != nil {
			return err
		}
	}
	secs := time.Since(start).Seconds()
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(struct {
			Backup  string  `json:"backup"`
			Seconds float64 `json:"seconds"`
		}{opts.Dir, round6(secs)})
	}
	_, err := fmt.Fprintf(env.Stdout, "backed up to %s in %.2f s\n", opts.Dir, secs)
	return err
}

type indexRestoreOptions struct {
	Store  string
	Backup string
	JSON   bool
}

func newIndexRestoreCmd(env *Env) *cobra.Command {
	var opts indexRestoreOptions
	cmd := &cobra.Command{
		Use:   "restore --store DIR BACKUP",
		Short: "Make a working index in DIR from a backup ('neardup index backup')",
		Long: `restore copies the backup BACKUP (from 'neardup index backup') into DIR, a new
or empty directory, and opens the copy to check that it is an index. The
backup is only read: it stays a backup. Check the restored index with
'neardup index check --store DIR'.`,
		Example: "  neardup index restore --store idx/ backups/idx-monday",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Backup = args[0]
			return runIndexRestore(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Store, "store", "", "the directory to restore into (new or empty; required)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"restored", "store"} as JSON`)
	_ = cmd.MarkFlagRequired("store")
	return cmd
}

func runIndexRestore(ctx context.Context, env *Env, opts indexRestoreOptions) error {
	if _, err := os.Stat(opts.Backup); err != nil {
		return usagef("BACKUP %s: %v", opts.Backup, errors.Unwrap(err))
	}
	if err := store.RestorePebble(opts.Backup, opts.Store); err != nil {
		if errors.Is(err, store.ErrNotStore) {
			return usagef("%v", err)
		}
		return err
	}
	st, err := store.OpenPebble(opts.Store, env.pebbleOptions(nil))
	if err != nil {
		return err
	}
	defer st.Close()
	_, ok, err := index.Stored(ctx, st)
	if err != nil {
		return err
	}
	if !ok {
		return usagef("BACKUP %s holds a store but no index", opts.Backup)
	}
	if err := st.Close(); err != nil {
		return err
	}
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(struct {
			Restored string `json:"restored"`
			Store    string `json:"store"`
		}{opts.Backup, opts.Store})
	}
	_, err = fmt.Fprintf(env.Stdout, "restored %s into %s\n", opts.Backup, opts.Store)
	return err
}
