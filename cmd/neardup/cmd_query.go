package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/server/api"
)

// queryOptions are the flags of neardup query.
type queryOptions struct {
	Server string
	Corpus featCorpusFlags
	Args   []string
}

func newQueryCmd(env *Env) *cobra.Command {
	var opts queryOptions
	cmd := &cobra.Command{
		Use:   "query --server URL FILE...",
		Short: "Ask a neardup server for the near-duplicates of each document (JSONL)",
		Long: `query sends the documents of FILE... to a neardup server (POST /v1/query, in
batches of 256) and prints one line per document, as index query does:
{"id": ..., "matches": [{"id": ..., "similarity": ..., "estimate": ..., "stderr": ..., "exact": ...}]}
Nothing is added. The bearer token, if the server needs one, comes from
NEARDUP_TOKEN. Documents are sent as text; the server sketches them.`,
		Example: "  neardup query --server http://127.0.0.1:8080 new.jsonl",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return runQuery(cmd.Context(), env, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Server, "server", "", "the neardup server's URL (required)")
	opts.Corpus.bind(cmd)
	jsonLinesFlag(cmd)
	return cmd
}

func runQuery(ctx context.Context, env *Env, opts queryOptions) error {
	if opts.Server == "" {
		return usagef("--server is required")
	}
	c, err := newServerClient(opts.Server)
	if err != nil {
		return err
	}
	r, err := openFeatCorpus(env, opts.Args, opts.Corpus, "query")
	if err != nil {
		return err
	}
	defer r.Close()
	w := bufio.NewWriter(env.Stdout)
	enc := json.NewEncoder(w)
	err = sendBatches(ctx, r, nil, func(batch []api.Document) error {
		res, err := c.Query(ctx, batch)
		if err != nil {
			return fmt.Errorf("--server %s: %w", opts.Server, err)
		}
		for _, q := range res {
			out := queryJSON{ID: q.ID, Matches: []queryMatchJSON{}}
			for _, m := range q.Matches {
				out.Matches = append(out.Matches, queryMatchJSON{ID: m.ID, Similarity: round6(m.Similarity), Estimate: round6(m.Estimate), StdErr: round6(m.StdErr), Exact: m.Exact})
			}
			if err := enc.Encode(out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return w.Flush()
}
