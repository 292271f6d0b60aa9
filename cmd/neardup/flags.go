package main

// Validation of flag values shared by several commands, and the flag
// vocabulary's deprecated spellings. Every invalid value is a usage error
// (exit 2) that states the valid range.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// checkThreshold checks a similarity threshold flag: a value in (0, 1].
func checkThreshold(flag string, v float64) error {
	if !(v > 0 && v <= 1) {
		return usagef("%s %v: want a similarity in (0, 1]", flag, v)
	}
	return nil
}

// checkSamples checks --k, the number of samples per sketch.
func checkSamples(flag string, k int) error {
	if k < 1 || k > sample.MaxK {
		return usagef("%s %d: want a number of samples in [1, %d]", flag, k, sample.MaxK)
	}
	return nil
}

// Samplers a command accepts, by what it needs of the sketches.
var (
	// allSamplers is every sampler.
	allSamplers = []sketch.Algorithm{sketch.MinHash, sketch.Prefix, sketch.LazyBits, sketch.LazyBitsBatched, sketch.BottomK,
		sketch.Proportional, sketch.OPH, sketch.SuperMinHash, sketch.CWS, sketch.ICWS, sketch.HMT, sketch.HMTDep,
		sketch.CWSOblivious, sketch.CWSUnary}
	// indexSamplers are the unweighted slot-wise samplers, whose sketches
	// LSH keys are made of.
	indexSamplers = []sketch.Algorithm{sketch.OPH, sketch.MinHash, sketch.SuperMinHash, sketch.Prefix, sketch.LazyBits, sketch.LazyBitsBatched}
	// dedupSamplers adds the slot-wise weighted samplers (CWS with exact
	// or MMT 3.5's approximate β, ICWS).
	dedupSamplers = append(append([]sketch.Algorithm(nil), indexSamplers...), sketch.CWS, sketch.ICWS, sketch.CWSOblivious, sketch.CWSUnary)
	// countSamplers are those with a union and a cardinality.
	countSamplers = []sketch.Algorithm{sketch.BottomK, sketch.MinHash, sketch.Prefix, sketch.LazyBits, sketch.LazyBitsBatched,
		sketch.Proportional, sketch.OPH, sketch.SuperMinHash}
)

// samplerHelp lists the samplers a command accepts for its --sampler help,
// the weighted ones after "weighted:", so that the help names exactly what
// parseSampler accepts.
func samplerHelp(valid []sketch.Algorithm) string {
	var plain, weighted []string
	for _, a := range valid {
		if a.IsWeighted() {
			weighted = append(weighted, a.String())
		} else {
			plain = append(plain, a.String())
		}
	}
	h := strings.Join(plain, ", ")
	if len(weighted) > 0 {
		h += "; weighted: " + strings.Join(weighted, ", ")
	}
	return h
}

// parseSampler parses a --sampler value against the samplers a command
// accepts; an unknown or unsuitable one is a usage error listing the valid
// names.
func parseSampler(name string, valid []sketch.Algorithm) (sketch.Algorithm, error) {
	names := make([]string, len(valid))
	for i, a := range valid {
		names[i] = a.String()
	}
	alg, err := sketch.ParseAlgorithm(name)
	if err == nil {
		for _, a := range valid {
			if a == alg {
				return alg, nil
			}
		}
		return sketch.Invalid, usagef("--sampler %s cannot be used here: want one of %s", name, strings.Join(names, ", "))
	}
	return sketch.Invalid, usagef("unknown --sampler %q: want one of %s", name, strings.Join(names, ", "))
}

// checkInputs reports a named input that does not exist (standard input,
// "-", always does), so that a mistyped path fails at once with one line
// instead of counting as one rejected record.
func checkInputs(paths []string) error {
	for _, p := range paths {
		if p == "-" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("input %s: %w", p, err)
		}
	}
	return nil
}

// deprecatedAlias registers old as a hidden spelling of the flag name,
// sharing its value; using it still works, with a warning on stderr that
// names the new spelling (pflag's MarkDeprecated).
func deprecatedAlias(fl *pflag.FlagSet, old, name string) {
	f := fl.Lookup(name)
	fl.AddFlag(&pflag.Flag{Name: old, Usage: "deprecated spelling of --" + name, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal})
	_ = fl.MarkDeprecated(old, "use --"+name)
}

// jsonLinesFlag gives a command whose output is JSON Lines in any case
// (features, index query) the --json flag of every command that prints a
// result, so that --json is accepted everywhere; it changes nothing.
func jsonLinesFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("json", true, "print JSON: one object per line (this command's only output format; accepted so that every command takes --json)")
}
