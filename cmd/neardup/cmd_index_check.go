package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/store"
)

type indexCheckOptions struct {
	Store  string
	Repair bool
	JSON   bool
}

func newIndexCheckCmd(env *Env) *cobra.Command {
	var opts indexCheckOptions
	cmd := &cobra.Command{
		Use:   "check --store DIR",
		Short: "Verify every record and posting of an index; --repair drops what cannot be read",
		Long: `check reads the whole index: every document record must decode and be
stored under its name's id, every posting must point at a record that makes
it, every posting a record makes must be there, and the metadata must
decode. A damaged store file (a table, the write-ahead log, the MANIFEST)
is named. The exit status is 0 when the index is sound, 1 when it is not
(or could not be read).

--repair opens a store whose write-ahead log or MANIFEST is damaged with
what precedes the damage, deletes the records it cannot read, removes stale
postings, adds missing ones and drops bad metadata, and says how many
documents were lost. A damaged table cannot be repaired in place: rebuild
the index from its inputs with 'neardup index add'.`,
		Example: `  neardup index check --store idx/
  neardup index check --store idx/ --repair --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexCheck(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Store, "store", "", "the index: a Pebble directory (required)")
	cmd.Flags().BoolVar(&opts.Repair, "repair", false, "drop what cannot be read, fix postings, and report the documents lost")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"store", "ok", "docs", "postings", "corrupt", "lost", "stale", "missing", "metadata", "repaired", "problems"} as JSON`)
	_ = cmd.MarkFlagRequired("store")
	return cmd
}

// indexCheckJSON is the --json output of index check.
type indexCheckJSON struct {
	Store    string `json:"store"`
	OK       bool   `json:"ok"`
	Docs     int64  `json:"docs"`
	Postings int64  `json:"postings"`
	// Identities and Legacy count the records with a keyed identity
	// fingerprint and those with only an earlier release's public one.
	Identities int64    `json:"identities"`
	Legacy     int64    `json:"legacy_fingerprints"`
	Corrupt    int64    `json:"corrupt"`
	Lost       int64    `json:"lost"`
	Stale      int64    `json:"stale"`
	Missing    int64    `json:"missing"`
	Metadata   int64    `json:"metadata"`
	Repaired   bool     `json:"repaired"`
	Problems   []string `json:"problems"`
}

// errIndexDamaged is the error of a check that found problems (exit 1);
// the report has been printed.
var errIndexDamaged = errors.New("the index is damaged")

func runIndexCheck(ctx context.Context, env *Env, opts indexCheckOptions) (err error) {
	if opts.Store == "" {
		return usagef("--store is required")
	}
	if _, err := os.Stat(opts.Store); err != nil {
		return usagef("--store %s: no index there (%v)", opts.Store, errors.Unwrap(err))
	}
	st, err := store.OpenPebble(opts.Store, env.pebbleOptions(&store.PebbleOptions{Repair: opts.Repair}))
	if errors.Is(err, store.ErrNotStore) {
		return usagef("--store %s holds no index: %v", opts.Store, err)
	}
	if err != nil {
		return checkFailed(err, opts)
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = checkFailed(cerr, opts)
		}
	}()
	if _, stored, err := index.Stored(ctx, st); err != nil {
		return checkFailed(err, opts)
	} else if !stored && opts.Repair {
		return fmt.Errorf("%s holds no index after repair: if it held one, the damage lost it all; rebuild it from its inputs with 'neardup index add'", opts.Store)
	} else if !stored {
		return usagef("--store %s holds no index", opts.Store)
	}
	x, err := index.Open(ctx, st, index.Config{})
	if err != nil {
		return checkFailed(err, opts)
	}
	rep, err := x.Check(ctx, opts.Repair)
	if err != nil {
		return checkFailed(err, opts)
	}
	if opts.JSON {
		problems := rep.Problems
		if problems == nil {
			problems = []string{}
		}
		err = json.NewEncoder(env.Stdout).Encode(indexCheckJSON{Store: opts.Store, OK: rep.OK(), Docs: rep.Docs, Postings: rep.Postings,
			Identities: rep.Identities, Legacy: rep.Legacy,
			Corrupt: rep.Corrupt, Lost: rep.Lost, Stale: rep.Stale, Missing: rep.Missing, Metadata: rep.Metadata,
			Repaired: rep.Repaired, Problems: problems})
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintf(env.Stdout, "problem: %s\n", p)
		}
		_, err = fmt.Fprintf(env.Stdout, "%s: %d documents, %d postings, %d identity fingerprints (%d public 64-bit ones of an earlier release, not trusted); %d corrupt records, %d stale postings, %d missing postings, %d bad metadata values\n",
			opts.Store, rep.Docs, rep.Postings, rep.Identities, rep.Legacy, rep.Corrupt, rep.Stale, rep.Missing, rep.Metadata)
		if err == nil && opts.Repair {
			if rep.Repaired {
				_, err = fmt.Fprintf(env.Stdout, "repaired: %d documents lost\n", rep.Lost)
			} else {
				_, err = fmt.Fprintf(env.Stdout, "nothing to repair\n")
			}
		}
	}
	if err != nil {
		return err
	}
	if !rep.OK() && !rep.Repaired {
		return fmt.Errorf("%s: %w (run 'neardup index check --store %s --repair')", opts.Store, errIndexDamaged, opts.Store)
	}
	return nil
}

// checkFailed is the error of a check that could not read the store: a
// corrupt file is named (by the store's error), with the way on.
func checkFailed(err error, opts indexCheckOptions) error {
	if !errors.Is(err, store.ErrCorrupt) {
		return err
	}
	// The store's own suggestion is this command.
	err = errors.New(strings.Replace(err.Error(), fmt.Sprintf("; run `neardup index check --store %s`", opts.Store), "", 1))
	if opts.Repair || strings.Contains(err.Error(), ".sst") {
		return fmt.Errorf("%w; a damaged table cannot be repaired in place: rebuild the index from its inputs with 'neardup index add' (or restore a copy)", err)
	}
	return fmt.Errorf("%w; 'neardup index check --store %s --repair' keeps what precedes the damage and drops the rest", err, opts.Store)
}
