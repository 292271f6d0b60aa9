package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
)

// serverBatch is the number of documents per request to a server.
const serverBatch = 256

// newServerClient makes the client of --server; the bearer token comes
// from NEARDUP_TOKEN.
func newServerClient(url string) (*client.Client, error) {
	c, err := client.New(url, &client.Options{Token: os.Getenv("NEARDUP_TOKEN"), BatchSize: serverBatch})
	if err != nil {
		return nil, usagef("--server: %v", err)
	}
	return c, nil
}

// sendBatches reads r and hands its documents to send in batches of
// serverBatch, as a server takes them; bar, if not nil, follows the bytes
// read.
func sendBatches(ctx context.Context, r *corpus.Reader, bar *progress.Bar, send func([]api.Document) error) error {
	var batch []api.Document
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := r.Doc()
		batch = append(batch, api.Document{ID: d.ID, Text: string(d.Body), HTML: d.HTML})
		if len(batch) == serverBatch {
			if err := send(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
		if bar != nil {
			bar.Set(r.BytesRead())
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	return send(batch)
}

// indexConfigFlags are the flags of index add that describe a new index;
// a server's index has its own configuration.
var indexConfigFlags = []string{"sampler", "k", "seed", "sketch-seed", "lsh", "threshold", "features", "store"}

// runIndexAddServer is index add --server: the documents are sent to a
// neardup server (POST /v1/documents, in batches), which sketches and
// stores them.
func runIndexAddServer(ctx context.Context, env *Env, opts indexOptions, url string) error {
	for _, f := range indexConfigFlags {
		if opts.Given[f] {
			return usagef("--%s does not go with --server: the server's index has its own configuration", f)
		}
	}
	if err := checkMaxRejected(opts.MaxRejected); err != nil {
		return err
	}
	c, err := newServerClient(url)
	if err != nil {
		return err
	}
	var rejects rejectLog
	r, bar, err := openAddInput(env, opts, &rejects)
	if err != nil {
		return err
	}
	defer r.Close()
	added, matched := 0, 0
	err = sendBatches(ctx, r, bar, func(batch []api.Document) error {
		res, err := c.Add(ctx, batch, false)
		if err != nil {
			return fmt.Errorf("--server %s: %w", url, err)
		}
		for _, a := range res {
			if a.Added {
				added++
			}
			if len(a.Matches) > 0 {
				matched++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	bar.Finish()
	st := r.Stats()
	if opts.JSON {
		err = json.NewEncoder(env.Stdout).Encode(struct {
			Added      int              `json:"added"`
			Matched    int              `json:"with_near_duplicates"`
			Read       int64            `json:"read"`
			Rejected   int64            `json:"rejected"`
			RejectedBy map[string]int64 `json:"rejected_by"`
			Server     string           `json:"server"`
		}{added, matched, st.Read, st.Rejected, st.RejectedBy, url})
	} else {
		_, err = fmt.Fprintf(env.Stdout, "added %d documents through %s (%d had near-duplicates in the index before; read %d, rejected %d)\n",
			added, url, matched, st.Read, st.Rejected)
	}
	if err != nil {
		return err
	}
	return rejects.check(st.Read, st.Rejected, st.RejectedBy, opts.MaxRejected)
}
