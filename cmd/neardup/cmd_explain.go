package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

type explainOptions struct {
	A, B      string
	Corpus    string
	JSON      bool
	Shared    int
	Keys      int
	Threshold float64
	Sampler   string
	K         int
	Seed      uint64
	LSH       string
	Feature   featFlags
	Fields    featCorpusFlags
}

func newExplainCmd(env *Env) *cobra.Command {
	var opts explainOptions
	cmd := &cobra.Command{
		Use:   "explain A B",
		Short: "Show why two documents match: exact and estimated Jaccard, colliding LSH keys, shared shingles",
		Long: `explain takes two documents through the steps of 'neardup dedup' with the
same flags and shows each one: the exact Jaccard similarity of their feature
sets, the sketch estimate with its standard error, the b supershingles of r
samples each and which of them agree, which of the C(b, m) lookup keys
(m-of-b combinations of supershingles) collided, so that the pair became a
candidate, the probability P(J) of that under the scheme, and the shingles
the two documents share.

A and B are files ("-" for standard input), or with --corpus the ids of two
documents of a corpus (JSONL, WARC, Parquet or a directory).`,
		Example: `  neardup explain a.txt b.txt
  neardup explain --corpus testdata/licenses/docs.jsonl.gz debian-copyright/alsa-topology-conf debian-copyright/alsa-ucm-conf
  neardup explain --lsh altavista --k 84 --json a.html b.html`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			return runExplain(cmd.Context(), env, opts)
		},
	}
	bindExplainFlags(cmd, &opts)
	return cmd
}

// bindExplainFlags registers explain's flags: dedup's sampler, LSH,
// threshold, feature and field flags, and explain's own.
func bindExplainFlags(cmd *cobra.Command, opts *explainOptions) {
	fl := cmd.Flags()
	fl.StringVar(&opts.Corpus, "corpus", "", "read A and B as document ids from this corpus")
	fl.BoolVar(&opts.JSON, "json", false, "print the explanation as one JSON object")
	fl.IntVar(&opts.Shared, "shared", 20, "shared shingles to show (0: none, -1: all)")
	fl.IntVar(&opts.Keys, "keys", 50, "colliding keys to list at most (-1: all)")
	// The flags of 'neardup dedup', with the same names and defaults.
	fl.Float64VarP(&opts.Threshold, "threshold", "t", 0.8, "Jaccard similarity at or above which documents are near-duplicates, in (0, 1]")
	fl.StringVar(&opts.Sampler, "sampler", "oph", "sampler: "+samplerHelp(indexSamplers))
	fl.IntVar(&opts.K, "k", 128, fmt.Sprintf("samples per sketch, 1 to %d", sample.MaxK))
	fl.Uint64Var(&opts.Seed, "seed", 0, "seed of the sampler and the LSH keys (--feature-seed seeds the feature ids)")
	deprecatedAlias(fl, "sketch-seed", "seed")
	fl.StringVar(&opts.LSH, "lsh", "auto", `supershingle scheme: auto (chosen for the threshold), altavista, bing, or R,B[,M]`)
	opts.Feature.bind(cmd, false)
	opts.Fields.bind(cmd)
}

// explainDoc describes one of the two documents.
type explainDoc struct {
	ID       string `json:"id"`
	Bytes    int    `json:"bytes"`
	Features int    `json:"features"`
	// Tokens is the number of the document's tokens, FirstTokens the
	// first explainTokens of them (as the tokenizer cut them).
	Tokens      int      `json:"tokens"`
	FirstTokens []string `json:"first_tokens"`
}

// explainTokens is how many tokens explain shows of each document.
const explainTokens = 20

// docTokens returns the number of tokens of doc and the first max of
// them. It calls e.Normalize, which invalidates e's AppendText.
func docTokens(e *feature.Extractor, doc []byte, max int) (int, []string) {
	toks := strings.Fields(string(e.Normalize(nil, doc)))
	return len(toks), toks[:min(len(toks), max):min(len(toks), max)]
}

// explainBand is one supershingle of the two documents.
type explainBand struct {
	Band int `json:"band"`
	// Samples are the sketch positions [lo, hi) hashed into the band.
	Samples [2]int `json:"samples"`
	// Agreeing is the number of those samples that are equal.
	Agreeing int    `json:"agreeing_samples"`
	A        string `json:"a"`
	B        string `json:"b"`
	Match    bool   `json:"match"`
}

// explainKey is a lookup key the two documents share.
type explainKey struct {
	Key   int    `json:"key"`
	Bands []int  `json:"bands"`
	Value string `json:"value"`
}

// explainResult is the --json output.
type explainResult struct {
	A explainDoc `json:"a"`
	B explainDoc `json:"b"`
	// Exact is the Jaccard similarity of the feature sets, Shared and
	// Union the sizes of their intersection and union.
	Exact  float64 `json:"exact"`
	Shared int     `json:"shared"`
	Union  int     `json:"union"`
	// Estimate ± StdErr is the sketch estimate; Agreeing of Samples
	// sketch positions are equal.
	Estimate float64 `json:"estimate"`
	StdErr   float64 `json:"stderr"`
	Agreeing int     `json:"agreeing_samples"`
	Samples  int     `json:"samples"`
	Sampler  string  `json:"sampler"`
	// Threshold and Duplicate: whether dedup would call the pair
	// near-duplicates, judged by the exact similarity.
	Threshold float64 `json:"threshold"`
	Duplicate bool    `json:"duplicate"`
	// LSH is the scheme; Prob its P(candidate) at the exact similarity.
	LSH    string     `json:"lsh"`
	Params lsh.Params `json:"params"`
	Prob   float64    `json:"prob"`
	// Bands are the supershingles, Agreements how many agree, M how many
	// must.
	Bands      []explainBand `json:"bands"`
	Agreements int           `json:"agreements"`
	M          int           `json:"m"`
	// Keys are the colliding keys (at most --keys of them), KeysTotal
	// their number, NumKeys the keys per document.
	Keys      []explainKey `json:"keys"`
	KeysTotal int          `json:"keys_collided"`
	NumKeys   int          `json:"keys_per_document"`
	Candidate bool         `json:"candidate"`
	// SharedShingles are the texts of the first shared features, in A's
	// order.
	SharedShingles []string `json:"shared_shingles"`
}

func runExplain(ctx context.Context, env *Env, opts explainOptions) error {
	fo, err := opts.Feature.options()
	if err != nil {
		return err
	}
	if err := checkFeatOptions(fo); err != nil {
		return err
	}
	alg, err := parseSampler(opts.Sampler, indexSamplers)
	if err != nil {
		return err
	}
	if err := checkThreshold("--threshold", opts.Threshold); err != nil {
		return err
	}
	if err := checkSamples("--k", opts.K); err != nil {
		return err
	}
	pp, err := parseLSH(opts.LSH, opts.Seed)
	if err != nil {
		return err
	}
	var params lsh.Params
	if pp != nil {
		params = *pp
	} else {
		// As dedup chooses (index.Config.LSH default).
		c, err := index.ChooseLSH(opts.Threshold, opts.K, opts.Seed)
		if err != nil {
			return usagef("--lsh auto: %v", err)
		}
		params = c
	}
	if params.K() > opts.K {
		return usagef("--lsh %v needs %d samples, sketches have --k %d", params, params.K(), opts.K)
	}
	scheme, err := lsh.New(params)
	if err != nil {
		return usagef("--lsh: %v", err)
	}
	smp, err := sample.New(sample.Config{Algorithm: alg, K: opts.K, Seed: opts.Seed, Features: fo})
	if err != nil {
		return usagef("%v", err)
	}
	da, db, err := compareDocs(env, compareOptions{A: opts.A, B: opts.B, Corpus: opts.Corpus, Fields: opts.Fields})
	if err != nil {
		return err
	}
	x, err := newFeatExtractors(fo)
	if err != nil {
		return err
	}
	// B first, so that A's extractor still holds A's text for AppendText.
	exB := x.pick(db)
	fb := exB.Extract(nil, db.Body)
	exA := x.pick(da)
	fa := exA.Extract(nil, da.Body)

	res := explainResult{
		A: explainDoc{ID: da.ID, Bytes: len(da.Body), Features: len(fa)}, B: explainDoc{ID: db.ID, Bytes: len(db.Body), Features: len(fb)},
		Threshold: opts.Threshold, LSH: params.String(), Params: params, M: params.M,
		NumKeys: scheme.NumKeys(), Sampler: fmt.Sprintf("%v k=%d seed=%d", alg, opts.K, opts.Seed),
	}
	res.Exact, res.Shared = exactJaccard(fa, fb)
	res.Union = len(fa) + len(fb) - res.Shared
	res.Duplicate = res.Exact >= opts.Threshold
	res.Prob = params.Prob(res.Exact)

	sa := sketch.Sketch{Header: smp.Header(), Values: smp.Sketch(nil, fa), Size: float64(len(fa))}
	sb := sketch.Sketch{Header: smp.Header(), Values: smp.Sketch(nil, fb), Size: float64(len(fb))}
	est, err := sketch.Jaccard(&sa, &sb)
	if err != nil {
		return err
	}
	res.Estimate, res.StdErr = est.J, est.StdErr
	res.Samples = min(len(sa.Values), len(sb.Values))
	for i := 0; i < res.Samples; i++ {
		if sa.Values[i] == sb.Values[i] {
			res.Agreeing++
		}
	}

	// Keys, as the index makes them (an empty document has none).
	ex, err := scheme.Explain(sa.Values, sb.Values)
	if err != nil {
		return err
	}
	for _, bd := range ex.Bands {
		res.Bands = append(res.Bands, explainBand{Band: bd.Band, Samples: [2]int{bd.Lo, bd.Hi}, Agreeing: bd.Agreeing,
			A: fmt.Sprintf("%016x", bd.A), B: fmt.Sprintf("%016x", bd.B), Match: bd.Match})
	}
	res.Agreements = ex.Agreements
	res.KeysTotal = len(ex.Keys)
	res.Candidate = ex.Candidate()
	for _, k := range ex.Keys {
		if opts.Keys >= 0 && len(res.Keys) >= opts.Keys {
			break
		}
		ek := explainKey{Key: k.Index, Value: fmt.Sprintf("%016x", k.Value)}
		for _, b := range k.Bands {
			ek.Bands = append(ek.Bands, int(b))
		}
		res.Keys = append(res.Keys, ek)
	}

	// Shared shingles, in A's order of first occurrence.
	if opts.Shared != 0 {
		inB := make(map[uint64]struct{}, len(fb))
		for _, f := range fb {
			inB[f.ID] = struct{}{}
		}
		var buf []byte
		for i, f := range fa {
			if opts.Shared > 0 && len(res.SharedShingles) >= opts.Shared {
				break
			}
			if _, ok := inB[f.ID]; ok {
				buf = exA.AppendText(buf[:0], i)
				res.SharedShingles = append(res.SharedShingles, string(buf))
			}
		}
	}
	if res.SharedShingles == nil {
		res.SharedShingles = []string{}
	}
	res.A.Tokens, res.A.FirstTokens = docTokens(exA, da.Body, explainTokens)
	res.B.Tokens, res.B.FirstTokens = docTokens(exB, db.Body, explainTokens)
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(&res)
	}
	return printExplain(env.Stdout, &res, fo)
}

func printExplain(w io.Writer, r *explainResult, fo feature.Options) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("A  %s  (%d bytes, %d tokens, %d features)\n", r.A.ID, r.A.Bytes, r.A.Tokens, r.A.Features)
	p("B  %s  (%d bytes, %d tokens, %d features)\n", r.B.ID, r.B.Bytes, r.B.Tokens, r.B.Features)
	p("A tokens           %s\n", strings.Join(r.A.FirstTokens, " | "))
	p("B tokens           %s\n", strings.Join(r.B.FirstTokens, " | "))
	p("features           %s\n\n", fo)
	p("exact Jaccard      %.4f  (%d shared of %d distinct features)\n", r.Exact, r.Shared, r.Union)
	p("estimated Jaccard  %.4f ± %.4f  (%d of %d samples agree; %s)\n", r.Estimate, r.StdErr, r.Agreeing, r.Samples, r.Sampler)
	verdict := "not near-duplicates: exact J below"
	if r.Duplicate {
		verdict = "near-duplicates: exact J at or above"
	}
	p("verdict            %s the threshold %g\n\n", verdict, r.Threshold)
	p("LSH %s: %d keys per document\n", r.LSH, r.NumKeys)
	p("P(candidate) at J = %.4f: %.4f\n", r.Exact, r.Prob)
	if len(r.Bands) == 0 {
		p("an empty document has no keys: never a candidate\n")
	} else {
		p("\n  %-4s  %-9s  %-7s  %-16s  %-16s  %s\n", "band", "samples", "agree", "A", "B", "match")
		for _, bd := range r.Bands {
			m := "-"
			if bd.Match {
				m = "yes"
			}
			p("  %-4d  %-9s  %-7s  %s  %s  %s\n", bd.Band, fmt.Sprintf("%d-%d", bd.Samples[0], bd.Samples[1]-1),
				fmt.Sprintf("%d/%d", bd.Agreeing, bd.Samples[1]-bd.Samples[0]), bd.A, bd.B, m)
		}
		cand := "not candidates: no key collided"
		if r.Candidate {
			cand = "candidates"
		}
		p("\n%d of %d supershingles agree (at least m = %d must): %s\n", r.Agreements, len(r.Bands), r.M, cand)
		if r.KeysTotal > 0 {
			p("keys that collided: %d of %d\n", r.KeysTotal, r.NumKeys)
			for _, k := range r.Keys {
				bands := make([]string, len(k.Bands))
				for i, x := range k.Bands {
					bands[i] = fmt.Sprint(x)
				}
				p("  key %-5d bands {%s}  %s\n", k.Key, strings.Join(bands, ","), k.Value)
			}
			if n := r.KeysTotal - len(r.Keys); n > 0 {
				p("  … and %d more (--keys -1 lists all)\n", n)
			}
		}
	}
	if len(r.SharedShingles) > 0 {
		p("\nshared features (first %d of %d, in A's order):\n", len(r.SharedShingles), r.Shared)
		for _, s := range r.SharedShingles {
			p("  %q\n", s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
