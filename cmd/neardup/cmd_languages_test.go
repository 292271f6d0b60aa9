package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/neardup/neardup/feature/featuretest"
)

const multilingualCorpus = "../../testdata/multilingual/docs.jsonl"

// refShingles is the ground truth's set of 5-token shingles of s, the
// tokens cut by the reference tokenizer of the unicode-v1 rule
// (featuretest.UnicodeTokens), a shorter text one shingle of all its
// tokens.
func refShingles(s string) map[string]bool {
	toks := featuretest.UnicodeTokens(s)
	set := map[string]bool{}
	if len(toks) < 5 {
		set[strings.Join(toks, " ")] = true
	}
	for i := 0; i+5 <= len(toks); i++ {
		set[strings.Join(toks[i:i+5], " ")] = true
	}
	return set
}

func jaccard(a, b map[string]bool) float64 {
	c := 0
	for x := range a {
		if b[x] {
			c++
		}
	}
	return float64(c) / float64(len(a)+len(b)-c)
}

// TestDedupMultilingual runs dedup at default settings on real Chinese,
// Japanese and Thai documents (testdata/multilingual): every pair with
// exact Jaccard >= 0.8 is in one cluster, every reported pair has
// Jaccard >= 0.7, the Thai near-copy is found and the unrelated Thai pair
// is not. (With the words-v1 tokenizer, 3 of the 6 pairs are found.)
func TestDedupMultilingual(t *testing.T) {
	b, err := os.ReadFile(multilingualCorpus)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	sets := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d struct{ ID, Text string }
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
		sets[d.ID] = refShingles(d.Text)
	}
	dir := t.TempDir()
	env, _, _ := testEnv()
	if err := runDedup(context.Background(), env, dedupDefaults([]string{multilingualCorpus}, dir)); err != nil {
		t.Fatal(err)
	}
	cluster := map[string]int{}
	for i, c := range readLines(t, filepath.Join(dir, "clusters.jsonl")) {
		for _, m := range c["members"].([]any) {
			cluster[m.(string)] = i + 1
		}
	}
	reported := map[[2]string]bool{}
	for _, p := range readLines(t, filepath.Join(dir, "pairs.jsonl")) {
		a, b := p["a"].(string), p["b"].(string)
		if a > b {
			a, b = b, a
		}
		reported[[2]string{a, b}] = true
		if j := jaccard(sets[a], sets[b]); j < 0.7 {
			t.Errorf("reported pair %s %s has Jaccard %.3f < 0.7", a, b, j)
		}
	}
	sort.Strings(ids)
	high := 0
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			if j := jaccard(sets[a], sets[b]); j >= 0.8 {
				high++
				if cluster[a] == 0 || cluster[a] != cluster[b] {
					t.Errorf("pair %s %s (Jaccard %.3f) not in one cluster", a, b, j)
				}
			}
		}
	}
	if high < 6 {
		t.Errorf("%d pairs with Jaccard >= 0.8 in the fixture, want 6", high)
	}
	if !reported[[2]string{"th/dpkg", "th/dpkg-one-word"}] {
		t.Error("the Thai near-copy was not found")
	}
	if reported[[2]string{"th/apt", "th/dpkg"}] || cluster["th/apt"] != 0 {
		t.Error("an unrelated Thai document was paired")
	}
}

// With the words-v1 tokenizer, Chinese and Japanese text is not segmented:
// summary.json counts those documents, with an example, and the run says
// so in one line; at default settings the fixture has none.
func TestDedupNotSegmented(t *testing.T) {
	for _, c := range []struct {
		tokenizer string
		want      bool
	}{{"", false}, {"words-v1", true}} {
		// The fixture and the Han characters of its Chinese paragraph
		// without the punctuation and Latin words between them: one
		// words-v1 token.
		b, err := os.ReadFile(multilingualCorpus)
		if err != nil {
			t.Fatal(err)
		}
		var han []rune
		for _, line := range strings.Split(string(b), "\n") {
			var d struct{ ID, Text string }
			if json.Unmarshal([]byte(line), &d) == nil && d.ID == "edit/zh-para" {
				for _, r := range d.Text {
					if unicode.Is(unicode.Han, r) {
						han = append(han, r)
					}
				}
			}
		}
		doc, _ := json.Marshal(map[string]string{"id": "derived/zh-han-only", "text": string(han)})
		in := filepath.Join(t.TempDir(), "docs.jsonl")
		if err := os.WriteFile(in, append(append(b, doc...), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		env, stdout, _ := testEnv()
		o := dedupDefaults([]string{in}, dir)
		o.Feature.Tokenizer = c.tokenizer
		if err := runDedup(context.Background(), env, o); err != nil {
			t.Fatal(err)
		}
		var sum struct {
			NotSegmented        int64  `json:"not_segmented"`
			NotSegmentedExample string `json:"not_segmented_example"`
		}
		b, err = os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		line := strings.Contains(stdout.String(), "not segmented: ")
		if (sum.NotSegmented > 0) != c.want || line != c.want || (c.want && sum.NotSegmentedExample != "derived/zh-han-only") {
			t.Errorf("tokenizer %q: not segmented %d (%q), line %v:\n%s", c.tokenizer, sum.NotSegmented, sum.NotSegmentedExample, line, stdout)
		}
	}
}

// features --text and explain show the tokens as the tokenizer cut them.
func TestTokensShown(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(a, []byte("近似重复文档的检测。Near-duplicate detection!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("近似重复文件的检测。Near-duplicate detection!"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `"tokens":["近","似","重","复","文","档","的","检","测","near","duplicate","detection"]`
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"features", "--text", a}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("features: exit %d: %s", code, &stderr)
	}
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("features --text: %s", &stdout)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"explain", a, b}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("explain: exit %d: %s", code, &stderr)
	}
	if !strings.Contains(stdout.String(), "B tokens           近 | 似 | 重 | 复 | 文 | 件 | 的") ||
		!strings.Contains(stdout.String(), "(55 bytes, 12 tokens, 8 features)") {
		t.Errorf("explain: %s", &stdout)
	}
}
