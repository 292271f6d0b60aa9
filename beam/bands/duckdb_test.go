//go:build cgo

package bands_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/neardup/neardup/beam/pipeline"
	"github.com/neardup/neardup/lsh/bandfile"
)

// TestMain runs the pipelines of these tests on Prism.
func TestMain(m *testing.M) { ptest.Main(m) }

// lines returns the non-empty lines of the files matching pattern.
func lines(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files %s (%v)", pattern, err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(string(b), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestJoinInDuckDB runs the pipeline on Prism over the shipped corpus with
// the band-key export, runs Query in DuckDB (the Go driver, which links
// DuckDB's library) over the Parquet files, and checks that it yields
// exactly the candidate pairs the pipeline verified, with the same
// shared-key counts: with the default MaxRun, and with MaxRun 4, where the
// corpus's larger clusters make hot keys and the window decides.
func TestJoinInDuckDB(t *testing.T) {
	for _, maxRun := range []int{2048, 4} {
		t.Run(fmt.Sprintf("maxrun=%d", maxRun), func(t *testing.T) {
			out := t.TempDir()
			p, s := beam.NewPipelineWithRoot()
			o := pipeline.Options{Inputs: []string{"../../testdata/licenses/docs.jsonl.gz"}, Output: out, Shards: 2,
				Config: pipeline.Config{MaxRun: maxRun}, Candidates: true, ExportBands: true}
			if _, err := pipeline.Build(s, o); err != nil {
				t.Fatal(err)
			}
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range lines(t, filepath.Join(out, "candidates", "*.jsonl")) {
				var c pipeline.CandidateJSON
				if err := json.Unmarshal([]byte(l), &c); err != nil {
					t.Fatal(err)
				}
				want = append(want, fmt.Sprintf("%s %s %d %d %d", c.A, c.B, c.SeqA, c.SeqB, c.Keys))
			}
			slices.Sort(want)
			var sum pipeline.Summary
			if err := json.Unmarshal([]byte(strings.Join(lines(t, filepath.Join(out, "summary.json")), "\n")), &sum); err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || (maxRun < 100) != (sum.HotKeys > 0) {
				t.Fatalf("%d candidates, %d hot keys: the test would prove nothing", len(want), sum.HotKeys)
			}

			db, err := sql.Open("duckdb", "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			src := bandfile.Source(bandfile.DuckDB, filepath.Join(out, "bands", "*.parquet"))
			q := bandfile.Query(src, maxRun)
			rows, err := db.Query(q)
			if err != nil {
				t.Fatalf("%v\n%s", err, q)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var a, b string
				var sa, sb, keys int64
				if err := rows.Scan(&a, &b, &sa, &sb, &keys); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s %s %d %d %d", a, b, sa, sb, keys))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("DuckDB gives %d candidate pairs, the pipeline %d; first difference:\n%s", len(got), len(want), firstDiff(got, want))
			}
			var n int64
			if err := db.QueryRow("SELECT count(*) FROM " + src).Scan(&n); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d band-key rows; DuckDB and the pipeline agree on %d candidate pairs (%d hot keys)", n, len(got), sum.HotKeys)
		})
	}
}

// TestDedupExportInDuckDB builds the core module's neardup command, runs
// `neardup dedup --export-bands` on the shipped corpus, runs Query in
// DuckDB over the file it wrote, and checks the result against dedup's
// candidates: as many pairs as the run's summary counts candidates, and
// every near pair dedup verified (pairs.jsonl) among them with the same
// positions and number of shared keys. (dedup's join ranks a key's
// documents by a hash of their names, the export by input order; the two
// differ only for keys shared by more than MaxRun documents, and the
// corpus has none.)
func TestDedupExportInDuckDB(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command builds neardup: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "neardup")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/neardup")
	build.Dir = "../.."
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/neardup: %v\n%s", err, b)
	}
	out := filepath.Join(dir, "out")
	file := filepath.Join(dir, "bands.parquet")
	run := exec.Command(bin, "dedup", "../../testdata/licenses/docs.jsonl.gz", "--out", out, "--export-bands", file, "--json", "--quiet")
	stdout, err := run.Output()
	if err != nil {
		t.Fatalf("neardup dedup: %v", err)
	}
	var sum struct {
		Candidates int `json:"candidates"`
		Pairs      int `json:"pairs"`
	}
	if err := json.Unmarshal(stdout, &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := bandfile.Query(bandfile.Source(bandfile.DuckDB, file), 2048)
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var a, b string
		var sa, sb, keys int64
		if err := rows.Scan(&a, &b, &sa, &sb, &keys); err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprintf("%s %s %d %d %d", a, b, sa, sb, keys)] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != sum.Candidates {
		t.Fatalf("DuckDB gives %d candidate pairs, neardup dedup checked %d", len(got), sum.Candidates)
	}
	near := 0
	for _, l := range lines(t, filepath.Join(out, "pairs.jsonl")) {
		var p struct {
			A, B string
			SeqA int `json:"seq_a"`
			SeqB int `json:"seq_b"`
			Keys int
			Kind string
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		if p.Kind != "near" {
			continue
		}
		near++
		if k := fmt.Sprintf("%s %s %d %d %d", p.A, p.B, p.SeqA, p.SeqB, p.Keys); !got[k] {
			t.Errorf("dedup's verified pair %s is not among DuckDB's candidates", k)
		}
	}
	if near == 0 || sum.Candidates == 0 {
		t.Fatalf("%d candidates, %d near pairs: the test would prove nothing", sum.Candidates, near)
	}
	t.Logf("DuckDB's join over neardup dedup --export-bands gives its %d candidates; its %d near pairs among them", len(got), near)
}

func firstDiff(a, b []string) string {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf(" duckdb:   %s\n pipeline: %s", x, y)
		}
	}
	return ""
}
