// Command shortdocs measures how well an index finds the near-duplicate
// pairs of a corpus of short documents, against exact Jaccard similarity.
//
// It reads the feature sets 'neardup features' printed for the corpus and
// the answers 'neardup index query' gave for the same corpus queried
// against an index of itself, computes the exact Jaccard similarity of
// every pair of documents, and prints
//
//   - recall: of the ordered pairs (a, b), a ≠ b, with J ≥ -threshold,
//     the share whose query a lists b among its matches, and
//   - precision: of the matches (a, b), a ≠ b, at similarity ≥
//     -threshold, the share with J ≥ -floor.
//
// Usage (the measurement; corpus as in scripts/short-corpus.sh):
//
//	neardup features DIR > feats.jsonl
//	neardup index add -q --store idx DIR
//	neardup index query --store idx DIR > answers.jsonl
//	go run ./shortdocs -features feats.jsonl -answers answers.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strconv"

	"github.com/neardup/neardup/sketch"
)

func main() {
	featsPath := flag.String("features", "", "'neardup features' output for the corpus (JSONL)")
	answersPath := flag.String("answers", "", "'neardup index query' output for the corpus (JSONL)")
	threshold := flag.Float64("threshold", 0.8, "the pairs to find: exact J at least this")
	floor := flag.Float64("floor", 0.7, "a match at -threshold or more is right when its exact J is at least this")
	flag.Parse()
	if *featsPath == "" || *answersPath == "" {
		log.Fatal("give -features and -answers")
	}
	sets, err := readFeatures(*featsPath)
	if err != nil {
		log.Fatal(err)
	}
	answers, exact, err := readAnswers(*answersPath)
	if err != nil {
		log.Fatal(err)
	}

	ids := make([]string, 0, len(sets))
	for id := range sets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// Exact J of every pair, kept for the pairs at -floor or more.
	jac := map[[2]string]float64{}
	want := 0 // ordered pairs at -threshold or more
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			if j := sketch.ExactJaccard(sets[a], sets[b]); j >= *floor {
				jac[[2]string{a, b}], jac[[2]string{b, a}] = j, j
				if j >= *threshold {
					want += 2
				}
			}
		}
	}
	found, matches, right, exactMatches := 0, 0, 0, 0
	for a, ms := range answers {
		for b, sim := range ms {
			if a == b {
				continue
			}
			j := jac[[2]string{a, b}]
			if j >= *threshold {
				found++
			}
			if sim >= *threshold {
				matches++
				if j >= *floor {
					right++
				}
				if exact[[2]string{a, b}] {
					exactMatches++
				}
			}
		}
	}
	fmt.Printf("documents %d, queried %d\n", len(ids), len(answers))
	fmt.Printf("recall: %d of %d ordered pairs with J >= %.2f found (%.2f%%)\n", found, want, *threshold, pct(found, want))
	fmt.Printf("precision: %d of %d matches at >= %.2f have J >= %.2f (%.2f%%)\n", right, matches, *threshold, *floor, pct(right, matches))
	fmt.Printf("exact: %d of %d matches verified exactly (%.1f%%)\n", exactMatches, matches, pct(exactMatches, matches))
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

func lines(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if err := fn(line); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func readFeatures(path string) (map[string][]uint64, error) {
	sets := map[string][]uint64{}
	err := lines(path, func(line []byte) error {
		var rec struct {
			ID       string
			Features []struct{ ID string }
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		set := make([]uint64, 0, len(rec.Features))
		for _, f := range rec.Features {
			v, err := strconv.ParseUint(f.ID, 16, 64)
			if err != nil {
				return err
			}
			set = append(set, v)
		}
		slices.Sort(set)
		sets[rec.ID] = slices.Compact(set)
		return nil
	})
	return sets, err
}

func readAnswers(path string) (map[string]map[string]float64, map[[2]string]bool, error) {
	answers := map[string]map[string]float64{}
	exact := map[[2]string]bool{}
	err := lines(path, func(line []byte) error {
		var rec struct {
			ID      string
			Matches []struct {
				ID         string
				Similarity float64
				Exact      bool
			}
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		ms := map[string]float64{}
		for _, m := range rec.Matches {
			ms[m.ID] = m.Similarity
			if m.Exact {
				exact[[2]string{rec.ID, m.ID}] = true
			}
		}
		answers[rec.ID] = ms
		return nil
	})
	return answers, exact, err
}
