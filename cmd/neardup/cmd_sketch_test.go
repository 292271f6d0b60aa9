package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// licensesPath is the shipped sample corpus (474 licence texts).
var licensesPath = filepath.Join("..", "..", "testdata", "licenses", "docs.jsonl.gz")

// skFlagsFor parses args with the real flag definitions of the sketch,
// compare and count commands, so tests get the command-line defaults.
func skFlagsFor(t *testing.T, defSampler string, defK int, bits, weights bool, args ...string) (skSamplerFlags, featFlags, featCorpusFlags) {
	t.Helper()
	var sf skSamplerFlags
	var ff featFlags
	var cf featCorpusFlags
	cmd := &cobra.Command{Use: "x"}
	sf.bind(cmd.Flags(), defSampler, defK, bits)
	skBindFeatFlags(cmd, &ff, weights)
	cf.bind(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return sf, ff, cf
}

func sketchOpts(t *testing.T, files []string, args ...string) sketchOptions {
	sf, ff, cf := skFlagsFor(t, "oph", 128, true, true, args...)
	return sketchOptions{Files: files, Format: "jsonl", Workers: 3, Sampler: sf, Feature: ff, Corpus: cf}
}

type sketchLine struct {
	ID        string `json:"id"`
	Sketch    string `json:"sketch"`
	Algorithm string `json:"algorithm"`
	K         uint32 `json:"k"`
}

func parseSketchLines(t *testing.T, out []byte) ([]string, []*sketch.Sketch) {
	t.Helper()
	var ids []string
	var sks []*sketch.Sketch
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l sketchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		enc, err := base64.StdEncoding.DecodeString(l.Sketch)
		if err != nil {
			t.Fatalf("%s: base64: %v", l.ID, err)
		}
		s := new(sketch.Sketch)
		if err := s.UnmarshalBinary(enc); err != nil {
			t.Fatalf("%s: decode: %v", l.ID, err)
		}
		if l.Algorithm != s.Header.Algorithm.String() || l.K != s.Header.K {
			t.Fatalf("%s: line says %s k=%d, header %v", l.ID, l.Algorithm, l.K, s.Header)
		}
		ids = append(ids, l.ID)
		sks = append(sks, s)
	}
	return ids, sks
}

// readSketchRecords reads the --format binary stream: uvarint(len(id)) id
// uvarint(len(enc)) enc, repeated.
func readSketchRecords(r io.Reader) ([]string, []*sketch.Sketch, error) {
	br := bufio.NewReader(r)
	var ids []string
	var sks []*sketch.Sketch
	for {
		n, err := binary.ReadUvarint(br)
		if err == io.EOF {
			return ids, sks, nil
		}
		if err != nil {
			return nil, nil, err
		}
		id := make([]byte, n)
		if _, err := io.ReadFull(br, id); err != nil {
			return nil, nil, err
		}
		if n, err = binary.ReadUvarint(br); err != nil {
			return nil, nil, err
		}
		enc := make([]byte, n)
		if _, err := io.ReadFull(br, enc); err != nil {
			return nil, nil, err
		}
		s := new(sketch.Sketch)
		if err := s.UnmarshalBinary(enc); err != nil {
			return nil, nil, err
		}
		ids, sks = append(ids, string(id)), append(sks, s)
	}
}

// licenseDocs reads the licences corpus in input order.
func licenseDocs(t *testing.T) []*corpus.Document {
	t.Helper()
	r, err := corpus.Open([]string{licensesPath}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var docs []*corpus.Document
	for r.Next() {
		docs = append(docs, r.Doc().Clone())
	}
	if len(docs) != 474 {
		t.Fatalf("licences corpus: %d documents, want 474", len(docs))
	}
	return docs
}

// TestRunSketchJSONL checks every line against the library: the sketch of
// each document must be exactly what feature.Extract + sample.Sampler give,
// in input order, whatever the number of workers.
func TestRunSketchJSONL(t *testing.T) {
	docs := licenseDocs(t)
	env, out, errb := featTestEnv()
	opts := sketchOpts(t, []string{licensesPath})
	if err := runSketch(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	ids, sks := parseSketchLines(t, out.Bytes())
	if len(ids) != len(docs) {
		t.Fatalf("%d lines for %d documents", len(ids), len(docs))
	}
	ex, err := feature.New(feature.Options{})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := sample.New(sample.Config{Algorithm: sketch.OPH, K: 128})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		if ids[i] != d.ID {
			t.Fatalf("line %d: id %q, want %q (input order)", i, ids[i], d.ID)
		}
		fs := ex.Extract(nil, d.Body)
		want := smp.Sketch(nil, fs)
		s := sks[i]
		if s.Header != smp.Header() {
			t.Fatalf("%s: header %v, want %v", d.ID, s.Header, smp.Header())
		}
		if !slices.Equal(s.Values, want) || s.Size != float64(len(fs)) {
			t.Fatalf("%s: sketch differs from the library's (size %v, %d features)", d.ID, s.Size, len(fs))
		}
	}
	if !strings.Contains(errb.String(), "yielded 474") {
		t.Fatalf("stderr summary: %q", errb)
	}
}

// TestRunSketchFormatsAndWorkers: the binary stream holds the same sketches
// as JSONL, and the output bytes do not depend on the number of workers.
func TestRunSketchFormatsAndWorkers(t *testing.T) {
	run := func(format string, workers int) []byte {
		env, out, _ := featTestEnv()
		opts := sketchOpts(t, []string{licensesPath}, "--sampler", "minhash", "--k", "16", "--seed", "7")
		opts.Format, opts.Workers = format, workers
		if err := runSketch(context.Background(), env, opts); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	j1, j4 := run("jsonl", 1), run("jsonl", 4)
	if !bytes.Equal(j1, j4) {
		t.Fatal("JSONL output differs between 1 and 4 workers")
	}
	b1, b2 := run("binary", 1), run("binary", 2)
	if !bytes.Equal(b1, b2) {
		t.Fatal("binary output differs between 1 and 2 workers")
	}
	jids, jsks := parseSketchLines(t, j1)
	bids, bsks, err := readSketchRecords(bytes.NewReader(b1))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(jids, bids) || len(jsks) != len(bsks) {
		t.Fatalf("binary ids differ from JSONL ids (%d vs %d)", len(bids), len(jids))
	}
	for i := range jsks {
		if jsks[i].Header != bsks[i].Header || !slices.Equal(jsks[i].Values, bsks[i].Values) {
			t.Fatalf("record %d differs between formats", i)
		}
		if jsks[i].Header.Algorithm != sketch.MinHash || jsks[i].Header.Seed != 7 || jsks[i].Header.K != 16 {
			t.Fatalf("header %v", jsks[i].Header)
		}
	}
}

func TestRunSketchBitsAndWeighted(t *testing.T) {
	path := featCorpus(t)
	env, out, _ := featTestEnv()
	if err := runSketch(context.Background(), env, sketchOpts(t, []string{path}, "--sampler", "superminhash", "--bits", "8", "--k", "64")); err != nil {
		t.Fatal(err)
	}
	_, sks := parseSketchLines(t, out.Bytes())
	if len(sks) != 3 {
		t.Fatalf("%d sketches", len(sks))
	}
	for _, s := range sks {
		if s.Header.Bits != 8 || len(s.Values) != 64 || slices.Max(s.Values) > 255 {
			t.Fatalf("8-bit sketch: header %v, max value %d", s.Header, slices.Max(s.Values))
		}
	}
	// b-bit sketches of a and b estimate their Jaccard (the estimator
	// corrects for chance matches).
	if e, err := sketch.Jaccard(sks[0], sks[1]); err != nil || e.J < 0.2 {
		t.Fatalf("8-bit estimate of a~b: %v, %v", e, err)
	}

	// A weighted sampler weighs by count and records the total weight.
	env, out, _ = featTestEnv()
	if err := runSketch(context.Background(), env, sketchOpts(t, []string{path}, "--sampler", "icws", "--k", "32", "--shingle", "1")); err != nil {
		t.Fatal(err)
	}
	_, sks = parseSketchLines(t, out.Bytes())
	for i, text := range []string{docA, docB, docC} {
		words := float64(len(strings.Fields(text)))
		if sks[i].Header.Algorithm != sketch.ICWS || sks[i].Size != words || len(sks[i].Values) != 32 {
			t.Fatalf("doc %d: header %v size %v (want %v words)", i, sks[i].Header, sks[i].Size, words)
		}
	}
}

// TestRunSketchTFIDF: tf-idf weights without --idf count document
// frequencies in a first pass; the table's checksum enters the header.
func TestRunSketchTFIDF(t *testing.T) {
	path := featCorpus(t)
	env, out, _ := featTestEnv()
	if err := runSketch(context.Background(), env, sketchOpts(t, []string{path}, "--sampler", "cws", "--k", "16", "--weighted", "tfidf")); err != nil {
		t.Fatal(err)
	}
	_, sks := parseSketchLines(t, out.Bytes())
	if len(sks) != 3 || sks[0].Header.Algorithm != sketch.CWS {
		t.Fatalf("%d sketches", len(sks))
	}
	count := feature.Options{Weighting: feature.WeightCount}.ConfigHash()
	if sks[0].Header.Features == count || sks[0].Header.Features == (feature.Options{}).ConfigHash() {
		t.Fatalf("tf-idf header %v carries a count/set feature configuration", sks[0].Header)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestRunSketchWriteError: a failing output stops the run with its error.
func TestRunSketchWriteError(t *testing.T) {
	env, _, _ := featTestEnv()
	env.Stdout = failingWriter{}
	err := runSketch(context.Background(), env, sketchOpts(t, []string{licensesPath}))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("want the write error, got %v", err)
	}
}

// TestSketcherBitsAndSize: --bits < 64 is accepted exactly for the
// slot-wise algorithms, whose sketches sketch.Compress accepts; Size is the
// feature count for unweighted samplers and the total of the present
// weights (weighted.TotalWeight: negative, zero, NaN and infinite weights
// are absent) for weighted ones, and survives compression.
func TestSketcherBitsAndSize(t *testing.T) {
	fs := []feature.Feature{
		{ID: 1, Weight: 2}, {ID: 2, Weight: -1}, {ID: 3, Weight: math.NaN()},
		{ID: 4, Weight: math.Inf(1)}, {ID: 5, Weight: 0.5}, {ID: 6, Weight: 0},
	}
	for _, name := range []string{"minhash", "prefix", "lazybits", "lazybits-batched", "bottomk", "proportional",
		"oph", "superminhash", "cws", "icws", "hmt", "hmt-dep"} {
		alg, err := skParseSampler(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bits := range []int{64, 8} {
			sk, err := newSketcher(skSamplerFlags{Sampler: name, K: 16, Bits: bits, Modulus: 2, Block: 64}, feature.Options{})
			if bits < 64 && !alg.SlotWise() {
				var ue *UsageError
				if !errors.As(err, &ue) {
					t.Errorf("%s --bits %d: want a usage error, got %v", name, bits, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s --bits %d: %v", name, bits, err)
			}
			s, _, err := sk.make(sk.newSampler(), nil, fs)
			if err != nil {
				t.Fatalf("%s --bits %d: %v", name, bits, err)
			}
			want := float64(len(fs))
			if alg.IsWeighted() {
				want = 2.5
			}
			if s.Size != want || int(s.Header.Bits) != bits {
				t.Errorf("%s --bits %d: size %v (want %v), header %v", name, bits, s.Size, want, s.Header)
			}
		}
	}
}

func TestRunSketchUsage(t *testing.T) {
	path := featCorpus(t)
	for _, args := range [][]string{
		{"--sampler", "nope"},
		{"--bits", "3"},
		{"--k", "0"},
		{"--sampler", "bottomk", "--bits", "8"},
		{"--sampler", "hmt", "--bits", "8"},
		{"--sampler", "hmt-dep", "--bits", "8"},
		{"--sampler", "proportional", "--bits", "8"},
		{"--weight", "count"}, // oph ignores weights
		{"--sampler", "lazybits-batched", "--block", "100"},
	} {
		env, _, _ := featTestEnv()
		err := runSketch(context.Background(), env, sketchOpts(t, []string{path}, args...))
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
	env, _, _ := featTestEnv()
	opts := sketchOpts(t, []string{path})
	opts.Format = "xml"
	if err := runSketch(context.Background(), env, opts); err == nil {
		t.Error("--output-format xml accepted")
	}
	opts = sketchOpts(t, []string{path})
	opts.Output = filepath.Join(t.TempDir(), "missing", "out")
	if err := runSketch(context.Background(), env, opts); err == nil {
		t.Error("unwritable --output accepted")
	}
}

// TestSketchCommandLine runs the command through Main, with the renamed
// feature flags.
func TestSketchCommandLine(t *testing.T) {
	path := featCorpus(t)
	dir := filepath.Join(t.TempDir(), "sk")
	env, _, errb := featTestEnv()
	code := Main(context.Background(), []string{"sketch", "--output-format", "binary", "-o", dir, "--shingle", "3", "--feature-seed", "2", "--markup", "text", "--sampler", "lazybits", "--k", "8", path}, env)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	data, err := os.ReadFile(filepath.Join(dir, "sketches.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// The old --output FILE and --format binary still work, with
	// warnings, and write the same bytes.
	old := filepath.Join(t.TempDir(), "s.bin")
	env, _, errb = featTestEnv()
	code = Main(context.Background(), []string{"sketch", "--format", "binary", "--output", old, "--shingle", "3", "--feature-seed", "2", "--markup", "text", "--sampler", "lazybits", "--k", "8", path}, env)
	if b, _ := os.ReadFile(old); code != ExitOK || !bytes.Equal(b, data) || !strings.Contains(errb.String(), "--output has been deprecated") || !strings.Contains(errb.String(), "use --output-format binary") {
		t.Errorf("--output: exit %d, %d bytes, stderr %q", code, len(b), errb.String())
	}
	ids, sks, err := readSketchRecords(bytes.NewReader(data))
	if err != nil || len(ids) != 3 {
		t.Fatalf("%v records, %v", len(ids), err)
	}
	want := feature.Options{K: 3, Seed: 2, Format: feature.FormatText}.ConfigHash()
	if sks[0].Header.Features != want || sks[0].Header.Algorithm != sketch.LazyBits {
		t.Fatalf("header %v, want features %#x", sks[0].Header, want)
	}
	if code := Main(context.Background(), []string{"sketch", "--bogus", path}, env); code != ExitUsage {
		t.Fatalf("unknown flag: exit %d", code)
	}
}

// Example_sketch sketches two short documents and decodes the first
// line's sketch.
func Example_sketch() {
	env := &Env{Stdin: strings.NewReader(`{"id":"a","text":"the quick brown fox jumps over the lazy dog"}` + "\n"), Stdout: new(bytes.Buffer), Stderr: io.Discard}
	Main(context.Background(), []string{"sketch", "--sampler", "minhash", "--k", "4", "-"}, env)
	var l sketchLine
	_ = json.Unmarshal(env.Stdout.(*bytes.Buffer).Bytes(), &l)
	enc, _ := base64.StdEncoding.DecodeString(l.Sketch)
	var s sketch.Sketch
	_ = s.UnmarshalBinary(enc)
	fmt.Println(l.ID, l.Algorithm, l.K, len(s.Values), s.Size)
	// Output: a minhash 4 4 5
}
