package neardup_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
)

// TestDocLinks checks that every relative link of README.md and docs/*.md
// names a file or directory of the repository, and that every #anchor
// names a heading of its page (GitHub's slugs). Links inside code blocks
// and inline code are not links.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"README.md"}, pages...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		a := map[string]bool{}
		if b, err := os.ReadFile(page); err == nil {
			for _, l := range prose(string(b)) {
				if m := heading.FindStringSubmatch(l); m != nil {
					a[slug(m[1])] = true
				}
			}
		}
		anchors[page] = a
		return a
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range prose(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(stripCode(l), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s:%d: link %s: no file %s", page, i+1, target, path)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
					t.Errorf("%s:%d: link %s: no heading #%s in %s", page, i+1, target, anchor, path)
				}
			}
		}
	}
	if links < 20 {
		t.Errorf("only %d relative links found: the parser is broken", links)
	}
}

// prose returns the lines of a Markdown text with those of fenced code
// blocks blanked (so line numbers stay right).
func prose(s string) []string {
	lines := strings.Split(s, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in || strings.HasPrefix(l, "    ") {
			lines[i] = ""
		}
	}
	return lines
}

// stripCode removes inline code spans from a line.
func stripCode(l string) string {
	var b strings.Builder
	in := false
	for _, c := range l {
		if c == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces to hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(h) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c > 127:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Inputs": "inputs", "Postings, Redis and the journal": "postings-redis-and-the-journal", "Beam (Flink, Spark, Dataflow)": "beam-flink-spark-dataflow", "`--memory` budget": "--memory-budget"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
