package main

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sketch"
)

// configFlags maps the fields of an *index.ConfigError to the flags that
// set them.
var configFlags = map[string]string{
	"sampler": "--sampler", "k": "--k", "seed": "--seed", "modulus": "--modulus", "block": "--block",
	"features": "the feature flags", "features.format": "--markup", "features.case": "--case", "features.norm": "--norm",
	"features.digits": "--digits", "features.punct": "--punct", "features.unit": "--unit", "features.shingle": "--shingle",
	"features.wrap": "--wrap", "features.seed": "--feature-seed", "features.weighting": "--weight",
	"features.sublinear-tf": "--sublinear-tf", "features.raw-idf": "--raw-idf", "features.idf": "--idf",
	"features.title-boost": "--title-boost", "features.heading-boost": "--heading-boost",
	"lsh.r": "--lsh", "lsh.b": "--lsh", "lsh.m": "--lsh", "lsh.keybits": "--lsh", "lsh.samplebits": "--lsh", "lsh.seed": "--seed",
}

// configError turns an *index.ConfigError into a one-line usage error that
// names the flag, the recorded value and the given one; other errors pass.
func configError(err error) error {
	var ce *index.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	flag := configFlags[ce.Field]
	if flag == "" {
		flag = ce.Field
	}
	return usagef("%s: the index was built with %s, not %s", flag, ce.Stored, ce.Given)
}

// givenFlags reports which flags of cmd were given on the command line; a
// nil result (commands run from tests) counts every flag as given.
func givenFlags(cmd *cobra.Command) map[string]bool {
	set := map[string]bool{}
	cmd.Flags().Visit(func(f *pflag.Flag) { set[f.Name] = true })
	return set
}

// given reports whether the flag name was given (always, for a nil set).
func given(set map[string]bool, name string) bool { return set == nil || set[name] }

// indexFlags are the flag values that describe an index configuration.
type indexFlags struct {
	Sampler   sketch.Algorithm
	K         int
	Seed      uint64
	LSH       *lsh.Params
	Threshold float64
	Slack     float64 // index.Config.Slack (negative: none)
	Features  feature.Options
	Modulus   uint64
	Block     int
}

// config returns the index configuration of the given flags: a flag not
// given stays zero, so that index.Open takes the value recorded in an
// existing index (or the default for a new one), and a given one is
// checked against the record.
func (f indexFlags) config(set map[string]bool) index.Config {
	var c index.Config
	if given(set, "sampler") || given(set, "weighted") {
		c.Sketch.Algorithm = f.Sampler
	}
	if given(set, "k") {
		c.Sketch.K = f.K
	}
	if given(set, "seed") || given(set, "sketch-seed") {
		c.Sketch.Seed = f.Seed
	}
	if given(set, "modulus") {
		c.Sketch.Modulus = f.Modulus
	}
	if given(set, "block") {
		c.Sketch.Block = f.Block
	}
	if f.LSH != nil {
		c.LSH = *f.LSH
	}
	if given(set, "threshold") {
		c.Threshold = f.Threshold
	}
	if given(set, "slack") {
		c.Slack = f.Slack
	}
	fo := f.Features
	if !given(set, "shingle") && !given(set, "char-ngrams") {
		fo.K = 0
	}
	if !given(set, "title-boost") {
		fo.TitleBoost = 0
	}
	if !given(set, "heading-boost") {
		fo.HeadingBoost = 0
	}
	c.Sketch.Features = fo
	return c
}
