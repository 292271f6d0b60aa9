package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
)

// collapseOptions are the flags of neardup collapse.
type collapseOptions struct {
	Store      string
	Redis      string
	Unverified bool
	LSH        string
	JSON       bool
	Limit      int
}

func newCollapseCmd(env *Env) *cobra.Command {
	var opts collapseOptions
	cmd := &cobra.Command{
		Use:   "collapse (--store DIR | --redis URL) < ranked.txt",
		Short: "Collapse near-duplicates out of a ranked list of document ids",
		Long: `collapse reads a ranked list of document ids, one per line, best first (the
results of some search engine), and drops each near-duplicate of a
better-ranked kept result, Bing's result-list collapse: a compact signature
of 16-bit supershingles per document, "m of b must match", chosen for the
index's threshold. By default each pair the signatures propose is verified
against the stored documents, so every collapsed pair is a near-duplicate
at the threshold.

Output: the kept ids, one per line, in rank order; with --json one object
{"kept": [...], "collapsed": [{"id", "into"}], "unknown": [...]} (unknown:
ids the index does not hold; they are kept).`,
		Example: "  neardup collapse --store idx/ < ranked.txt",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCollapse(cmd.Context(), env, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Store, "store", "", "the index: a Pebble directory")
	fl.StringVar(&opts.Redis, "redis", "", "the index: a Redis or Redis Cluster URL (instead of --store)")
	fl.BoolVar(&opts.Unverified, "unverified", false, "collapse on the signatures alone (Bing's design), without verifying pairs")
	fl.StringVar(&opts.LSH, "lsh", "auto", collapseLSHUsage)
	fl.BoolVar(&opts.JSON, "json", false, "print kept, collapsed and unknown ids as one JSON object")
	fl.IntVar(&opts.Limit, "max-ids", 100000, "largest number of ids read")
	return cmd
}

func runCollapse(ctx context.Context, env *Env, opts collapseOptions) error {
	if opts.Store != "" {
		if _, err := os.Stat(opts.Store); err != nil {
			return usagef("--store %s: no index there (%v)", opts.Store, errors.Unwrap(err))
		}
	}
	st, _, err := openServeStore(ctx, opts.Store, opts.Redis, 0, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, ok, err := index.Stored(ctx, st); err != nil {
		return err
	} else if !ok {
		return usagef("the store holds no index; 'neardup index add' creates one")
	}
	x, err := index.Open(ctx, st, index.Config{})
	if errors.Is(err, index.ErrConfig) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	ids, err := readIDs(env, opts.Limit)
	if err != nil {
		return err
	}
	p, err := parseCollapseLSH(opts.LSH)
	if err != nil {
		return err
	}
	c, err := x.NewCollapser(index.CollapseOptions{Unverified: opts.Unverified, LSH: p})
	if errors.Is(err, lsh.ErrParams) {
		return usagef("--lsh %s: %v", opts.LSH, err)
	}
	if err != nil {
		return err
	}
	res, err := c.Collapse(ctx, ids)
	if err != nil {
		return err
	}
	return printCollapse(env, res, opts.JSON)
}

// collapseLSHUsage is the help of --lsh for collapse and serve.
const collapseLSHUsage = "collapse table scheme: auto (chosen for the index's threshold), bing (the book's 6.1: 6 supershingles of 5 samples, 16 bits each, at least 4 of 6 agreeing) or R,B[,M] (16-bit values)"

// parseCollapseLSH parses --lsh of collapse and serve: nil for auto.
func parseCollapseLSH(s string) (*lsh.Params, error) {
	p, err := parseLSH(s, 0)
	if err != nil || p == nil {
		return nil, err
	}
	if p.KeyBits == 0 || p.KeyBits > lsh.MaxCollapseKeyBits {
		p.KeyBits = lsh.MaxCollapseKeyBits
	}
	if p.B > lsh.MaxCollapseBands {
		return nil, usagef("--lsh %s: a collapse table holds at most %d supershingles", s, lsh.MaxCollapseBands)
	}
	return p, nil
}

// readIDs reads one id per line from stdin (blank lines skipped, spaces
// around an id trimmed), at most limit of them.
func readIDs(env *Env, limit int) ([]string, error) {
	var ids []string
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		id := strings.TrimSpace(sc.Text())
		if id == "" {
			continue
		}
		if len(ids) == limit {
			return nil, usagef("stdin: more than --max-ids %d ids", limit)
		}
		ids = append(ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	return ids, nil
}

func printCollapse(env *Env, res index.CollapseResult, asJSON bool) error {
	w := bufio.NewWriter(env.Stdout)
	if asJSON {
		type collapsed struct {
			ID   string `json:"id"`
			Into string `json:"into"`
		}
		out := struct {
			Kept      []string    `json:"kept"`
			Collapsed []collapsed `json:"collapsed"`
			Unknown   []string    `json:"unknown"`
		}{res.Kept, make([]collapsed, len(res.Collapsed)), res.Unknown}
		for i, c := range res.Collapsed {
			out.Collapsed[i] = collapsed{c.ID, c.Into}
		}
		if err := json.NewEncoder(w).Encode(out); err != nil {
			return err
		}
	} else {
		for _, id := range res.Kept {
			fmt.Fprintln(w, id)
		}
	}
	return w.Flush()
}
