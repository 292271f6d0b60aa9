package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunParams(t *testing.T) {
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &bytes.Buffer{}}
	plot := filepath.Join(t.TempDir(), "curve.png")
	opts := paramsOptions{threshold: 0.8, fpWeight: 0.5, fnWeight: 0.5, maxSamples: 256, maxKeys: 64, keyBits: 64, sampleBits: 64, plot: plot}
	if err := runParams(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"threshold 0.8: k=", "keys per document", "0.80   ", "S-curve written to"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	f, err := os.Open(plot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("plot is not a PNG: %v", err)
	}
}

func TestRunParamsPresetBing(t *testing.T) {
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &bytes.Buffer{}}
	opts := paramsOptions{threshold: 0.9, fpWeight: 0.5, fnWeight: 0.5, maxSamples: 256, maxKeys: 64, keyBits: 64, sampleBits: 64, preset: "bing"}
	if err := runParams(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "k=30 samples, r=5 per supershingle, b=6 supershingles, at least m=4") || !strings.Contains(s, "supershingle bytes per document: 12 (16-bit values)") {
		t.Errorf("bing preset output:\n%s", s)
	}
}

func TestRunParamsUsage(t *testing.T) {
	env := &Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	good := paramsOptions{threshold: 0.8, fpWeight: 0.5, fnWeight: 0.5, maxSamples: 256, maxKeys: 64, keyBits: 64, sampleBits: 64}
	for _, mut := range []func(*paramsOptions){
		func(o *paramsOptions) { o.threshold = 1 },
		func(o *paramsOptions) { o.fpWeight, o.fnWeight = 0, 0 },
		func(o *paramsOptions) { o.keyBits = 65 },
		func(o *paramsOptions) { o.plot = "curve.gif" },
		func(o *paramsOptions) { o.preset = "google" },
	} {
		o := good
		mut(&o)
		var ue *UsageError
		if err := runParams(context.Background(), env, o); !errors.As(err, &ue) {
			t.Errorf("%+v: err = %v, want a usage error", o, err)
		}
	}
	// through the command line: exit code 2 on a bad flag value
	var stderr bytes.Buffer
	if code := Main(context.Background(), []string{"params", "--threshold", "2"}, &Env{Stdout: &bytes.Buffer{}, Stderr: &stderr}); code != ExitUsage {
		t.Errorf("exit code %d, want %d (%s)", code, ExitUsage, stderr.String())
	}
}

// TestParamsJSON: --json carries the chosen scheme (KeyBits resolved to
// 64, as the text says) and P(J) at the printed similarities.
func TestParamsJSON(t *testing.T) {
	var out bytes.Buffer
	if err := runParams(context.Background(), &Env{Stdout: &out, Stderr: io.Discard}, paramsOptions{threshold: 0.8, fpWeight: 0.02, fnWeight: 0.98,
		maxSamples: 128, maxKeys: 64, keyBits: 64, sampleBits: 64, json: true}); err != nil {
		t.Fatal(err)
	}
	var res paramsResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err, out.String())
	}
	if res.Params.KeyBits != 64 || res.K != res.Params.R*res.Params.B || len(res.Prob) != 9 || res.Prob[4].J != 0.8 || res.Prob[4].P != res.Params.Prob(0.8) {
		t.Errorf("%+v", res)
	}
}
