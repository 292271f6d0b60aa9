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
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/rabin"
)

type fingerprintOptions struct {
	Paths      []string
	JSON       bool
	Corpus     featCorpusFlags
	Normalized bool
	// Scheme is identity.Scheme (the default) or identity.LegacyScheme;
	// Key the hex key of the first ("" for the public zero key); Poly
	// the polynomial of the second ("" for rabin.DefaultPoly).
	Scheme  string
	Key     string
	Poly    string
	Feature featFlags
}

func newFingerprintCmd(env *Env) *cobra.Command {
	var opts fingerprintOptions
	cmd := &cobra.Command{
		Use:   "fingerprint [FILE|DIR|-]...",
		Short: "Print the identity fingerprint of each document",
		Long: `fingerprint prints one line per document: the identity fingerprint of its
bytes as 32 hex digits (two Rabin fingerprints under polynomials drawn
from a key, finished by BLAKE3 in keyed mode: see package identity), then
the document id. Equal fingerprints mean identical
bodies. A whole file is fingerprinted byte for byte as stored; a JSONL, WARC
or Parquet record by its text or payload. With --normalized a second column
fingerprints the normalized text (the visible words, lower case, single
spaces), so documents that differ only in markup, case or spacing share it.

The default is the public form (the zero key): reproducible anywhere, and NOT a
security boundary — anyone can compute it, so it must never decide that a
document is dropped. dedup and the index compare the keyed form, under a
secret key drawn for each index (or run) and recorded with it; --key KEY (64
hex digits, e.g. from a dedup --key-file) prints that form.

--scheme rabin-64 prints the 64-bit Rabin fingerprint of earlier releases
(book 2.2; --poly chooses the polynomial). It is linear over GF(2): with
the polynomial known, Gaussian elimination forges a page with any given
fingerprint, which is why neither dedup nor the index trusts it any more.`,
		Example: `  neardup fingerprint *.txt
  neardup fingerprint --normalized testdata/licenses/docs.jsonl.gz | sort | uniq -D -w 32
  neardup fingerprint --key "$(cat run.key)" doc.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return runFingerprint(cmd.Context(), env, opts)
		},
	}
	opts.Corpus.bind(cmd)
	cmd.Flags().BoolVar(&opts.Normalized, "normalized", false, "also fingerprint each document's normalized text")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print one JSON object per document: {"id": ..., "fingerprint": "<hex>", "normalized": "<hex>"}`)
	cmd.Flags().StringVar(&opts.Scheme, "scheme", identity.Scheme, "the fingerprint: "+identity.Scheme+" (128 bits under --key, else under the public zero key) or "+identity.LegacyScheme+" (the forgeable Rabin fingerprint of earlier releases)")
	cmd.Flags().StringVar(&opts.Key, "key", "", "the secret key of the keyed form (64 hex digits; default: none, the public zero key)")
	cmd.Flags().StringVar(&opts.Poly, "poly", "", fmt.Sprintf("with --scheme %s: the Rabin polynomial, the hex of its rabin.Poly value (reflected order, see package rabin; default %016x); must be irreducible", identity.LegacyScheme, uint64(rabin.DefaultPoly)))
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

// fingerprinter appends the hex fingerprint of a body under the chosen
// scheme.
type fingerprinter struct {
	id    *identity.Hasher
	rabin *rabin.Table
	what  string // for the closing line
}

func newFingerprinter(opts fingerprintOptions) (*fingerprinter, error) {
	switch opts.Scheme {
	case identity.Scheme, "":
		if opts.Poly != "" {
			return nil, usagef("--poly is for --scheme %s", identity.LegacyScheme)
		}
		if opts.Key == "" {
			return &fingerprinter{id: identity.New(identity.Key{}), what: identity.Scheme + ", public zero key (not a security boundary)"}, nil
		}
		k, err := identity.ParseKey(opts.Key)
		if err != nil || k.IsZero() {
			return nil, usagef("--key: want 64 hex digits, not all zero")
		}
		return &fingerprinter{id: identity.New(k), what: identity.Scheme + ", keyed"}, nil
	case identity.LegacyScheme:
		if opts.Key != "" {
			return nil, usagef("--key is for --scheme %s: a Rabin fingerprint has no key", identity.Scheme)
		}
		p := rabin.DefaultPoly
		if opts.Poly != "" {
			var err error
			if p, err = featParsePoly(opts.Poly); err != nil {
				return nil, err
			}
		}
		return &fingerprinter{rabin: rabin.New(p), what: fmt.Sprintf("%s, polynomial %016x (public and linear: forgeable)", identity.LegacyScheme, uint64(p))}, nil
	}
	return nil, usagef("--scheme %q: want %s or %s", opts.Scheme, identity.Scheme, identity.LegacyScheme)
}

func (f *fingerprinter) appendHex(dst, body []byte) []byte {
	if f.rabin != nil {
		return featHex16(dst, f.rabin.Hash(body))
	}
	return f.id.Sum(body).AppendHex(dst)
}

func runFingerprint(ctx context.Context, env *Env, opts fingerprintOptions) error {
	t, err := newFingerprinter(opts)
	if err != nil {
		return err
	}
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
		body := featExactBytes(d)
		if x != nil {
			norm = x.pick(d).Normalize(norm[:0], d.Body)
		}
		if opts.JSON {
			id, err := json.Marshal(d.ID)
			if err != nil {
				return err
			}
			line = append(append(line[:0], `{"id":`...), id...)
			line = t.appendHex(append(line, `,"fingerprint":"`...), body)
			if x != nil {
				line = t.appendHex(append(line, `","normalized":"`...), norm)
			}
			line = append(line, "\"}\n"...)
		} else {
			line = t.appendHex(line[:0], body)
			if x != nil {
				line = t.appendHex(append(line, ' '), norm)
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
	fmt.Fprintf(env.Stderr, "neardup fingerprint: %v; %s\n", r.Stats(), t.what)
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
