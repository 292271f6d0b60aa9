package dedup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/dedup"
)

func Example() {
	dir, _ := os.MkdirTemp("", "dedup-example")
	defer os.RemoveAll(dir)
	var words []string
	for i := 0; i < 50; i++ {
		words = append(words, fmt.Sprintf("word%d", i))
	}
	text := strings.Join(words, " ")
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(strings.Join([]string{
		`{"id":"original","text":"` + text + `"}`,
		`{"id":"copy","text":"` + text + `"}`,
		`{"id":"edited","text":"` + text + ` and one more"}`,
		`{"id":"other","text":"something else entirely"}`,
		`{"id":"broken"`,
	}, "\n")+"\n"), 0o644)

	res, err := dedup.Run(context.Background(), dedup.Options{Inputs: []string{in}, Threshold: 0.8})
	if err != nil {
		panic(err)
	}
	s := res.Summary
	fmt.Printf("read %d = kept %d + duplicates %d + rejected %d\n", s.Read, s.Kept, s.Duplicates, s.Rejected)
	for _, c := range res.Clusters {
		for _, m := range c.Members[1:] {
			fmt.Printf("%s duplicates %s (J = %.3f, identical %v)\n", m.Name, c.Kept, m.Similarity, m.Identical)
		}
	}
	// Output:
	// read 5 = kept 2 + duplicates 2 + rejected 1
	// copy duplicates original (J = 1.000, identical true)
	// edited duplicates original (J = 0.939, identical false)
}

func ExampleChooseLSH() {
	p, _ := dedup.ChooseLSH(0.8, 128, 0)
	fmt.Printf("%v: P(0.8) = %.3f, P(0.5) = %.3f\n", p, p.Prob(0.8), p.Prob(0.5))
	// Output: k=119 r=7 b=17 m=1 keybits=64: P(0.8) = 0.982, P(0.5) = 0.125
}

func ExampleParseKeepPolicy() {
	keep, desc, _ := dedup.ParseKeepPolicy("key-desc")
	fmt.Println(keep, desc)
	// Output: 2 true
}

func ExampleWritePairs() {
	pairs := []dedup.Pair{{A: "a", B: "b", SeqA: 0, SeqB: 3, Similarity: 0.91, Estimate: 0.9, StdErr: 0.027, Exact: true, Keys: 4}}
	dedup.WritePairs(os.Stdout, pairs)
	// Output: {"a":"a","b":"b","similarity":0.91,"estimate":0.9,"stderr":0.027,"exact":true,"keys":4,"seq_a":0,"seq_b":3,"kind":"near"}
}
