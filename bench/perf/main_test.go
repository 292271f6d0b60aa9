package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRewriteSection(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"# T\n\n## A\na\n\n## Performance\nold\nold\n\n## B\nb\n", "# T\n\n## A\na\n\n## Performance\nnew\n\n## B\nb\n"},
		{"# T\n\n## Performance\nold\n", "# T\n\n## Performance\nnew\n"},
		{"# T\n\n## A\na\n", "# T\n\n## A\na\n\n## Performance\nnew\n"},
	} {
		path := filepath.Join(t.TempDir(), "README.md")
		if err := os.WriteFile(path, []byte(c.in), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := rewriteSection(path, "## Performance", "## Performance\nnew\n"); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != c.want {
			t.Errorf("rewrite of %q:\n%q\nwant\n%q", c.in, got, c.want)
		}
	}
}

func TestNum(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := num(x); got != want {
			t.Errorf("num(%v) = %q, want %q", x, got, want)
		}
	}
}
