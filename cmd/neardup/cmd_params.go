package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/report"
)

type paramsOptions struct {
	threshold   float64
	fpWeight    float64
	fnWeight    float64
	budgetBytes int
	maxSamples  int
	maxKeys     int
	keyBits     int
	sampleBits  int
	preset      string
	lsh         string
	plot        string
	logScale    bool
	json        bool
}

func newParamsCmd(env *Env) *cobra.Command {
	var opts paramsOptions
	cmd := &cobra.Command{
		Use:   "params",
		Short: "Choose supershingle parameters (k, r, b, m) for a similarity threshold and show the S-curve",
		Long: `params picks the supershingle scheme (k samples in b groups of r, a candidate
when at least m of b agree) that minimizes the weighted false-positive and
false-negative areas under the exact detection curve P(J) around the
threshold, prints it with P at a few similarities, and can draw the curve.
The defaults (false negatives weighted 0.98, false positives 0.02, k at most
128) are the choice 'neardup dedup' makes for the same threshold: verification
removes false positives, nothing recovers a missed pair. Use --fp-weight 0.5
--fn-weight 0.5 for the symmetric choice of datasketch's optimal_param.
With --preset it describes the AltaVista or Bing scheme instead; with --lsh
it describes a scheme beside the chosen one (both S-curves in the plot):
--lsh bing is the book's 6.1 scheme, six 16-bit supershingles of five
samples, a candidate (or a collapse) when at least 4 of 6 agree.`,
		Example: `  neardup params --threshold 0.8 --plot curve.png
  neardup params --threshold 0.9 --fn-weight 0.8 --fp-weight 0.2 --budget-bytes 12 --key-bits 16
  neardup params --preset bing --plot bing.svg
  neardup params --threshold 0.8 --lsh bing --plot chosen-and-bing.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runParams(cmd.Context(), env, opts)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&opts.threshold, "threshold", 0.8, "Jaccard similarity above which pairs should be found")
	f.Float64Var(&opts.fpWeight, "fp-weight", 0.02, "weight of the false-positive area")
	f.Float64Var(&opts.fnWeight, "fn-weight", 0.98, "weight of the false-negative area")
	f.IntVar(&opts.budgetBytes, "budget-bytes", 0, "bound on supershingle bytes per document (0: none)")
	f.IntVar(&opts.maxSamples, "max-samples", 128, "bound on k, the samples per sketch")
	f.IntVar(&opts.maxKeys, "max-keys", 64, "bound on C(b, m), the lookup keys per document")
	f.IntVar(&opts.keyBits, "key-bits", 64, "bits per stored supershingle value (1..64)")
	f.IntVar(&opts.sampleBits, "sample-bits", 64, "bits per sample for b-bit sketches (1..64)")
	f.StringVar(&opts.preset, "preset", "", "describe a preset instead of choosing: altavista or bing")
	f.StringVar(&opts.lsh, "lsh", "", "also describe this scheme beside the chosen one, its S-curve in the same plot: bing, altavista or R,B[,M]")
	f.StringVar(&opts.plot, "plot", "", "draw the S-curve to this file (.png, .svg, .pdf or .eps)")
	f.BoolVar(&opts.logScale, "log", false, "plot P(J) on a logarithmic axis")
	f.BoolVar(&opts.json, "json", false, "print the scheme and P(J) as JSON")
	return cmd
}

func runParams(_ context.Context, env *Env, opts paramsOptions) error {
	if !(opts.threshold > 0 && opts.threshold < 1) {
		return usagef("--threshold %v: want a similarity strictly between 0 and 1", opts.threshold)
	}
	if opts.fpWeight < 0 || opts.fnWeight < 0 || opts.fpWeight+opts.fnWeight == 0 {
		return usagef("--fp-weight and --fn-weight must be non-negative and not both 0")
	}
	if opts.keyBits < 1 || opts.keyBits > 64 || opts.sampleBits < 1 || opts.sampleBits > 64 {
		return usagef("--key-bits and --sample-bits must be in 1..64")
	}
	if opts.budgetBytes < 0 || opts.maxSamples < 1 || opts.maxKeys < 1 {
		return usagef("--budget-bytes must be >= 0, --max-samples and --max-keys >= 1")
	}
	format := ""
	if opts.plot != "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(opts.plot)), ".")
		switch format {
		case "png", "svg", "pdf", "eps":
		default:
			return usagef("--plot %s: want a .png, .svg, .pdf or .eps file", opts.plot)
		}
	}
	var choice lsh.Choice
	switch strings.ToLower(opts.preset) {
	case "":
		c, err := lsh.Choose(lsh.ChooseOptions{
			Threshold:   opts.threshold,
			FPWeight:    opts.fpWeight,
			FNWeight:    opts.fnWeight,
			BudgetBytes: opts.budgetBytes,
			MaxSamples:  opts.maxSamples,
			MaxKeys:     opts.maxKeys,
			KeyBits:     opts.keyBits,
			SampleBits:  opts.sampleBits,
		})
		if err != nil {
			return fmt.Errorf("params: %w", err)
		}
		choice = c
	case "altavista", "bing":
		p := lsh.AltaVista()
		if strings.EqualFold(opts.preset, "bing") {
			p = lsh.Bing()
		}
		fp, fn := p.Areas(opts.threshold)
		choice = lsh.Choice{Params: p, FP: fp, FN: fn, Loss: opts.fpWeight*fp + opts.fnWeight*fn}
	default:
		return usagef("--preset %q: want altavista or bing", opts.preset)
	}
	var other *lsh.Choice
	if opts.lsh != "" && !strings.EqualFold(opts.lsh, "auto") {
		if opts.preset != "" {
			return usagef("--lsh describes a scheme beside the chosen one; --preset describes one instead: give one of them")
		}
		q, err := parseLSH(opts.lsh, 0)
		if err != nil {
			return err
		}
		if q.KeyBits == 0 {
			q.KeyBits = 64 // 0 means 64: say so
		}
		fp, fn := q.Areas(opts.threshold)
		other = &lsh.Choice{Params: *q, FP: fp, FN: fn, Loss: opts.fpWeight*fp + opts.fnWeight*fn}
	}
	p := choice.Params
	if p.KeyBits == 0 {
		p.KeyBits = 64 // 0 means 64: say so
	}
	probs := paramsProbs
	curves := []lsh.Params{p}
	if other != nil {
		curves = append(curves, other.Params)
	}
	if opts.plot != "" {
		f, err := os.Create(opts.plot)
		if err != nil {
			return fmt.Errorf("params: %w", err)
		}
		c := report.Chart{Title: "Detection probability P(J)", Width: 6 * vg.Inch, Height: 4 * vg.Inch, LogY: opts.logScale}
		err = report.SCurve(f, format, c, curves, opts.threshold)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("params: plot: %w", err)
		}
	}
	if opts.json {
		res := opts.result(choice, p)
		if other != nil {
			o := opts.result(*other, other.Params)
			res.Beside = &o
		}
		return json.NewEncoder(env.Stdout).Encode(&res)
	}
	w := env.Stdout
	printScheme(w, opts, choice, p, probs)
	if other != nil {
		fmt.Fprintf(w, "\nbeside it, --lsh %s:\n", opts.lsh)
		printScheme(w, opts, *other, other.Params, probs)
	}
	if opts.plot != "" {
		fmt.Fprintf(w, "S-curve written to %s\n", opts.plot)
	}
	return nil
}

// paramsProbs are the similarities params prints P(J) at.
var paramsProbs = []float64{0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99}

// result is the --json description of scheme p (with choice's areas).
func (opts paramsOptions) result(choice lsh.Choice, p lsh.Params) paramsResult {
	res := paramsResult{Threshold: opts.threshold, Params: p, K: p.K(), Keys: p.NumKeys(), Bytes: p.Bytes(),
		FP: choice.FP, FN: choice.FN, FPWeight: opts.fpWeight, FNWeight: opts.fnWeight, Loss: choice.Loss, Plot: opts.plot}
	for _, j := range paramsProbs {
		res.Prob = append(res.Prob, paramsProb{J: j, P: p.Prob(j)})
	}
	return res
}

// printScheme prints scheme p (with choice's areas) and P(J) at probs.
func printScheme(w io.Writer, opts paramsOptions, choice lsh.Choice, p lsh.Params, probs []float64) {
	fmt.Fprintf(w, "threshold %.3g: k=%d samples, r=%d per supershingle, b=%d supershingles, at least m=%d must agree\n",
		opts.threshold, p.K(), p.R, p.B, p.M)
	fmt.Fprintf(w, "keys per document: %d (C(%d,%d)); supershingle bytes per document: %d (%d-bit values)\n",
		p.NumKeys(), p.B, p.M, p.Bytes(), p.KeyBits)
	fmt.Fprintf(w, "false-positive area %.5f, false-negative area %.5f (weights %.2g/%.2g, loss %.5f)\n",
		choice.FP, choice.FN, opts.fpWeight, opts.fnWeight, choice.Loss)
	fmt.Fprintln(w, "     J   P(candidate)")
	for _, j := range probs {
		fmt.Fprintf(w, "  %.2f   %.6f\n", j, p.Prob(j))
	}
}

// paramsResult is the --json output of params.
type paramsResult struct {
	Threshold float64      `json:"threshold"`
	Params    lsh.Params   `json:"params"`
	K         int          `json:"k"`
	Keys      int          `json:"keys_per_document"`
	Bytes     int          `json:"supershingle_bytes"`
	FP        float64      `json:"fp_area"`
	FN        float64      `json:"fn_area"`
	FPWeight  float64      `json:"fp_weight"`
	FNWeight  float64      `json:"fn_weight"`
	Loss      float64      `json:"loss"`
	Prob      []paramsProb `json:"prob"`
	Plot      string       `json:"plot,omitempty"`
	// Beside is the scheme of --lsh, described beside the chosen one.
	Beside *paramsResult `json:"beside,omitempty"`
}

type paramsProb struct {
	J float64 `json:"j"`
	P float64 `json:"p"`
}
