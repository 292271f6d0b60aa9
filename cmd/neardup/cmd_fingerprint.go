package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/rabin"
)

type fingerprintOptions struct {
	Paths      []string
	JSON       bool
	Corpus     featCorpusFlags
	Normalized bool
	Poly       string
	Feature    featFlags
}

func newFingerprintCmd(env *Env) *cobra.Command {
	var opts fingerprintOptions
	cmd := &cobra.Command{
		Use:   "fingerprint [FILE|DIR|-]...",
		Short: "Print the exact 64-bit Rabin fingerprint of each document",
		Long: `fingerprint prints one line per document: the Rabin fingerprint (book 2.2)
of its bytes as 16 hex digits, then the document id. Equal fingerprints mean
exact duplicates (up to a 2^-64-ish chance). A whole file is fingerprinted
byte for byte as stored; a JSONL, WARC or Parquet record by its text or
payload. With --normalized a second column fingerprints the normalized text
(the visible words, lower case, single spaces), so documents that differ only
in markup, case or spacing share it.`,
		Example: `  neardup fingerprint *.txt
  neardup fingerprint --normalized testdata/licenses/docs.jsonl.gz | sort | uniq -D -w 16`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return runFingerprint(cmd.Context(), env, opts)
		},
	}
	opts.Corpus.bind(cmd)
	cmd.Flags().BoolVar(&opts.Normalized, "normalized", false, "also fingerprint each document's normalized text")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print one JSON object per document: {"id": ..., "fingerprint": "<16 hex>", "normalized": "<16 hex>"}`)
	cmd.Flags().StringVar(&opts.Poly, "poly", fmt.Sprintf("%016x", uint64(rabin.DefaultPoly)), "the Rabin polynomial: the hex of its rabin.Poly value (reflected order, see package rabin); must be irreducible")
	opts.Feature.bindNorm(cmd)
	return cmd
}

// featParsePoly reads a polynomial given as the hex of its rabin.Poly value,
// with or without 0x.
func featParsePoly(s string) (rabin.Poly, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 64)
	if err != nil {
		return 0, usagef("--poly %q: not a 64-bit hex number", s)
	}
	p := rabin.Poly(v)
	if !rabin.IsIrreducible(p) {
		return 0, usagef("--poly %s: not irreducible, fingerprints would collide", s)
	}
	return p, nil
}

func runFingerprint(ctx context.Context, env *Env, opts fingerprintOptions) error {
	p, err := featParsePoly(opts.Poly)
	if err != nil {
		return err
	}
	t := rabin.New(p)
	var x *featExtractors
	if opts.Normalized {
		// Only the normalization flags are bound here; the shingle size
		// plays no part in the normalized text.
		ff := opts.Feature
		ff.K = feature.DefaultK
		o, err := ff.options()
		if err != nil {
			return err
		}
		if x, err = newFeatExtractors(o); err != nil {
			return err
		}
	}
	r, err := openFeatCorpus(env, opts.Paths, opts.Corpus, "fingerprint")
	if err != nil {
		return err
	}
	defer r.Close()
	out := bufio.NewWriterSize(env.Stdout, 1<<16)
	prog := newFeatProgress(env, r, "fingerprint")
	var line, norm []byte
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := r.Doc()
		fp := t.Hash(featExactBytes(d))
		var nfp uint64
		if x != nil {
			norm = x.pick(d).Normalize(norm[:0], d.Body)
			nfp = t.Hash(norm)
		}
		if opts.JSON {
			id, err := json.Marshal(d.ID)
			if err != nil {
				return err
			}
			line = append(append(line[:0], `{"id":`...), id...)
			line = featHex16(append(line, `,"fingerprint":"`...), fp)
			if x != nil {
				line = featHex16(append(line, `","normalized":"`...), nfp)
			}
			line = append(line, "\"}\n"...)
		} else {
			line = featHex16(line[:0], fp)
			if x != nil {
				line = featHex16(append(line, ' '), nfp)
			}
			line = append(line, "  "...)
			line = append(line, d.ID...)
			line = append(line, '\n')
		}
		if _, err := out.Write(line); err != nil {
			return err
		}
		prog.doc()
	}
	prog.finish()
	if err := r.Err(); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "neardup fingerprint: %v; polynomial %016x\n", r.Stats(), uint64(p))
	return nil
}

// featExactBytes returns the bytes that identify d exactly: a whole file's bytes
// as stored (before any UTF-8 repair), a record's text or payload.
func featExactBytes(d *corpus.Document) []byte {
	if (d.Format == corpus.FormatText || d.Format == corpus.FormatHTML) && d.Raw != nil {
		return d.Raw
	}
	return d.Body
}
