package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sample"
)

// TestMain runs the pipelines of this package's tests on Prism, the SDK's
// local portable runner (override with --runner).
func TestMain(m *testing.M) { ptest.Main(m) }

// shippedCorpus is the repository's licence corpus: 474 documents.
const shippedCorpus = "../../testdata/licenses/docs.jsonl.gz"

// changelogCorpus is the repository's corpus of Debian changelog entries:
// 6,346 documents, where verification by the sketch estimate finds 6 more
// near-duplicates than the exact Jaccard (testdata/changelogs/README.md).
const changelogCorpus = "../../testdata/changelogs/entries.jsonl.gz"

// runPipeline builds and runs the pipeline on Prism and returns the output
// directory.
func runPipeline(t *testing.T, o Options) string {
	t.Helper()
	o.Output = t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	if _, err := Build(s, o); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	return o.Output
}

// readLines returns the lines of every file matching dir/pattern, sorted.
func readLines(t *testing.T, dir, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files %s in %s (%v)", pattern, dir, err)
	}
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(string(b), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// records yields the documents of inputs and, as errors, the records the
// reader rejects: what dedup.Run takes.
func records(inputs []string) iter.Seq2[*corpus.Document, error] {
	return corpus.All(inputs, corpus.Options{})
}

// reference runs the core's dedup.Run (in memory, verification by exact
// Jaccard, or by sketch estimate when cfg.Exact is ExactNever) on the same
// inputs and returns its clusters, removed records
// and kept corpus in the pipeline's formats, and its summary.
func reference(t *testing.T, inputs []string, cfg Config) (clusters, removed, pairs []string, kept []byte, sum dedup.Summary) {
	t.Helper()
	cfg = cfg.withDefaults()
	exact := dedup.ExactAlways
	if cfg.Exact == ExactNever {
		exact = dedup.ExactNever
	}
	o := dedup.Options{Index: index.Config{Sketch: sample.Config{K: cfg.K, Seed: cfg.Seed}, Threshold: cfg.Threshold, Slack: cfg.Slack},
		Exact: exact, Workers: 2}
	res, err := dedup.Run(context.Background(), records(inputs), o)
	if err != nil {
		t.Fatal(err)
	}
	identical := map[string]bool{}
	for _, d := range res.Docs {
		if d.ExactOf != -1 {
			identical[d.Name] = true
		}
	}
	for _, c := range res.Clusters {
		j := ClusterJSON{Kept: c.Kept, Size: len(c.Members)}
		for _, m := range c.Members {
			j.Members = append(j.Members, m.Name)
			if m.Name != c.Kept {
				r := RemovedJSON{ID: m.Name, Kept: c.Kept, Kind: "near"}
				if identical[m.Name] {
					r.Kind = "identical"
				}
				b, _ := json.Marshal(r)
				removed = append(removed, string(b))
			}
		}
		b, _ := json.Marshal(j)
		clusters = append(clusters, string(b))
	}
	for _, p := range res.Pairs {
		j := PairJSON{A: p.A, B: p.B, Similarity: round6(p.Similarity), Keys: int64(p.Keys), Kind: "near"}
		if p.Identical {
			j.Kind = "identical"
		}
		b, _ := json.Marshal(j)
		pairs = append(pairs, string(b))
	}
	slices.Sort(clusters)
	slices.Sort(removed)
	slices.Sort(pairs)
	var buf bytes.Buffer
	w := corpus.NewJSONLWriter(&buf)
	if _, err := dedup.WriteKept(context.Background(), records(inputs), res, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return clusters, removed, pairs, buf.Bytes(), res.Summary
}

func readSummary(t *testing.T, dir string) Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		for i := 0; i < max(len(got), len(want)); i++ {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("%s line %d:\n got %s\nwant %s", what, i, g, w)
				break
			}
		}
		t.Fatalf("%s: %d lines, want %d", what, len(got), len(want))
	}
}

// compareSummary checks the pipeline's books against dedup's.
func compareSummary(t *testing.T, got Summary, want dedup.Summary) {
	t.Helper()
	type row struct {
		name      string
		got, want int64
	}
	for _, r := range []row{
		{"read", got.Read, want.Read},
		{"kept", got.Kept, want.Kept},
		{"duplicates", got.Duplicates, want.Duplicates},
		{"exact", got.Exact, want.Exact},
		{"near", got.Near, want.Near},
		{"rejected", got.Rejected, want.Rejected},
		{"pairs", got.Pairs, int64(want.Pairs)},
		{"candidates", got.Candidates, want.Candidates},
		{"clusters", got.Clusters, int64(want.Clusters)},
		{"largest", got.Largest, int64(want.Largest)},
	} {
		if r.got != r.want {
			t.Errorf("summary %s = %d, dedup says %d", r.name, r.got, r.want)
		}
	}
	for k, v := range want.RejectedBy {
		if got.RejectedBy[k] != v {
			t.Errorf("rejected by %s: %d, dedup says %d", k, got.RejectedBy[k], v)
		}
	}
	if got.Read != got.Kept+got.Duplicates+got.Rejected {
		t.Errorf("read %d != kept %d + duplicates %d + rejected %d", got.Read, got.Kept, got.Duplicates, got.Rejected)
	}
}

// TestShippedCorpusEqualsDedup runs the pipeline on Prism over the shipped
// corpora and checks clusters, removed records, verified pairs, the kept
// corpus (byte for byte) and the books against dedup.Run with the same
// configuration: by default (exact verification) on the licence texts and
// on the changelog entries, and with verification by sketch estimate
// (ExactNever) on the licence texts.
func TestShippedCorpusEqualsDedup(t *testing.T) {
	for _, c := range []struct {
		name, corpus string
		cfg          Config
	}{
		{"licenses", shippedCorpus, Config{}},
		{"changelogs", changelogCorpus, Config{}},
		{"licenses-never", shippedCorpus, Config{Exact: ExactNever}},
	} {
		t.Run(c.name, func(t *testing.T) { testEqualsDedup(t, c.corpus, c.cfg) })
	}
}

func testEqualsDedup(t *testing.T, corpus string, cfg Config) {
	out := runPipeline(t, Options{Inputs: []string{corpus}, Config: cfg, Shards: 3})
	clusters, removed, pairs, kept, sum := reference(t, []string{corpus}, cfg)
	if cfg.Exact != ExactNever && !sum.ExactCheck {
		t.Fatal("the reference did not verify exactly")
	}
	if len(clusters) == 0 || sum.Near == 0 {
		t.Fatalf("the reference found %d clusters, %d near duplicates: the test would prove nothing", len(clusters), sum.Near)
	}
	equalLines(t, "clusters", readLines(t, out, "clusters/clusters-*-of-00003.jsonl"), clusters)
	equalLines(t, "removed", readLines(t, out, "removed/removed-*-of-00003.jsonl"), removed)
	equalLines(t, "pairs", readLines(t, out, "pairs/pairs-*-of-00003.jsonl"), pairs)
	got, err := os.ReadFile(filepath.Join(out, "kept", "kept-00000.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, kept) {
		t.Errorf("kept corpus: %d bytes, dedup.WriteKept wrote %d", len(got), len(kept))
	}
	s := readSummary(t, out)
	compareSummary(t, s, sum)
	t.Logf("read %d: kept %d, duplicates %d (%d identical, %d near), %d clusters, %d pairs of %d candidates",
		s.Read, s.Kept, s.Duplicates, s.Exact, s.Near, s.Clusters, s.Pairs, s.Candidates)
}

// writeCorpus writes a small corpus in three inputs that exercises every
// path of the pipeline: near-duplicates within and across inputs, identical
// copies under other ids, an id used twice (across inputs), bad JSON, a
// record without text, a gzip-compressed input, an empty body, and eight
// near-identical documents whose shared band keys make runs longer than a
// small MaxRun.
func writeCorpus(t *testing.T) (dir string, inputs []string) {
	t.Helper()
	dir = t.TempDir()
	r := rand.New(rand.NewPCG(7, 7))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	text := func(n int) []string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[r.IntN(len(vocab))]
		}
		return ws
	}
	edit := func(ws []string, k int) string {
		c := slices.Clone(ws)
		for i := 0; i < k; i++ {
			c[r.IntN(len(c))] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(c, " ")
	}
	rec := func(id, body string) string {
		b, _ := json.Marshal(map[string]string{"id": id, "text": body})
		return string(b)
	}
	var a, b, c []string
	bases := make([][]string, 12)
	for i := range bases {
		bases[i] = text(150)
		a = append(a, rec(fmt.Sprintf("a%d", i), strings.Join(bases[i], " ")))
	}
	a = append(a,
		rec("a-near-0", edit(bases[0], 2)),
		rec("a-near-1", edit(bases[1], 3)),
		rec("a-copy-2", strings.Join(bases[2], " ")),
		`{"id": "broken", "text": "no closing brace"`,
		`{"id": "notext"}`,
		rec("a-empty", ""),
		rec("a-near-0b", edit(bases[0], 1)),
	)
	b = append(b,
		rec("a3", edit(bases[5], 2)), // an id already used in a.jsonl
		rec("b-copy-4", strings.Join(bases[4], " ")),
		rec("b-near-6", edit(bases[6], 2)),
		rec("b-copy-a-near-1", strings.Join(bases[1], " ")),
		rec("b-lone", strings.Join(text(150), " ")),
	)
	hot := text(300)
	for i := 0; i < 8; i++ {
		c = append(c, rec(fmt.Sprintf("c%d", i), edit(hot, 1)))
	}
	c = append(c, rec("c-copy-a7", strings.Join(bases[7], " ")))
	write := func(name string, lines []string, gz bool) string {
		p := filepath.Join(dir, name)
		data := []byte(strings.Join(lines, "\n") + "\n")
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
			data = buf.Bytes()
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inputs = []string{write("a.jsonl", a, false), write("b.jsonl.gz", b, true), write("c.jsonl", c, false)}
	return dir, inputs
}

// TestCraftedCorpusEqualsDedup runs the pipeline over three inputs given
// as one glob and compares with dedup.Run over the same files: with the
// default MaxRun everything must agree, candidates and pairs included;
// with MaxRun 3 the runs of the eight near-identical documents are hot
// keys, so fewer candidates are examined (by design: dedup's MaxRun is
// 2048), yet the clusters, removed records, kept corpus and record
// accounting must still agree.
func TestCraftedCorpusEqualsDedup(t *testing.T) {
	dir, inputs := writeCorpus(t)
	for _, maxRun := range []int{0, 3} {
		t.Run(fmt.Sprintf("maxrun=%d", maxRun), func(t *testing.T) {
			cfg := Config{MaxRun: maxRun}
			out := runPipeline(t, Options{Inputs: []string{filepath.Join(dir, "*.jsonl*")}, Config: cfg, Shards: 2})
			clusters, removed, pairs, kept, sum := reference(t, inputs, cfg)
			if sum.Exact < 3 || sum.Near < 8 || sum.RejectedBy[dedup.ReasonDuplicateID] != 1 || sum.Rejected < 3 {
				t.Fatalf("the corpus does not exercise the pipeline: %+v", sum)
			}
			equalLines(t, "clusters", readLines(t, out, "clusters/*.jsonl"), clusters)
			equalLines(t, "removed", readLines(t, out, "removed/*.jsonl"), removed)
			if maxRun == 0 {
				equalLines(t, "pairs", readLines(t, out, "pairs/*.jsonl"), pairs)
			}
			s := readSummary(t, out)
			hot := readLines(t, out, "hot_keys/*.jsonl")
			if maxRun != 0 {
				if s.HotKeys == 0 || s.Candidates >= sum.Candidates {
					t.Errorf("MaxRun %d: %d hot keys, %d candidates (dedup %d)", maxRun, s.HotKeys, s.Candidates, sum.Candidates)
				}
				s.Candidates, s.Pairs = sum.Candidates, int64(sum.Pairs)
			} else if s.HotKeys != 0 {
				t.Errorf("%d hot keys under the default MaxRun", s.HotKeys)
			}
			if int64(len(hot)) != s.HotKeys {
				t.Errorf("hot keys: summary %d, file %d lines", s.HotKeys, len(hot))
			}
			compareSummary(t, s, sum)
			rej := readLines(t, out, "rejected/*.jsonl")
			if int64(len(rej)) != s.Rejected {
				t.Errorf("rejected.jsonl has %d lines, summary says %d", len(rej), s.Rejected)
			}
			// The kept corpus: one file per input, together the reference's.
			var all []byte
			for i := range inputs {
				b, err := os.ReadFile(filepath.Join(out, "kept", fmt.Sprintf("kept-%05d.jsonl", i)))
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, b...)
			}
			if !bytes.Equal(all, kept) {
				t.Errorf("kept corpus: %d bytes, dedup.WriteKept wrote %d", len(all), len(kept))
			}
			t.Logf("read %d: kept %d, duplicates %d (%d identical, %d near), rejected %d, %d clusters, %d pairs of %d candidates, %d hot keys",
				s.Read, s.Kept, s.Duplicates, s.Exact, s.Near, s.Rejected, s.Clusters, s.Pairs, s.Candidates, s.HotKeys)
		})
	}
}
