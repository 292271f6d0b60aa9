package dedup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log"
	"os"
	"strings"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/store"
)

var ctx = context.Background()

func words(n int) string {
	var w []string
	for i := 0; i < n; i++ {
		w = append(w, fmt.Sprintf("word%d", i))
	}
	return strings.Join(w, " ")
}

// records yields documents and, for a nil body, a rejected record (as a
// corpus reader's rejection would come).
func records(docs ...[2]string) iter.Seq2[*corpus.Document, error] {
	return func(yield func(*corpus.Document, error) bool) {
		for i, d := range docs {
			if d[1] == "" {
				if !yield(nil, &corpus.RecordError{Path: "docs.jsonl", Line: int64(i + 1), Reason: corpus.ReasonBadJSON}) {
					return
				}
				continue
			}
			if !yield(&corpus.Document{ID: d[0], Body: []byte(d[1])}, nil) {
				return
			}
		}
	}
}

func Example() {
	text := words(50)
	docs := records(
		[2]string{"original", text},
		[2]string{"copy", text},
		[2]string{"edited", text + " and one more"},
		[2]string{"other", "something else entirely"},
		[2]string{"broken", ""},
	)
	res, err := dedup.Run(ctx, docs, dedup.Options{Index: index.Config{Threshold: 0.8}})
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

func ExampleRun_store() {
	// With a store, each run is matched against the earlier ones.
	st := store.NewMemory()
	text := words(40)
	dedup.Run(ctx, records([2]string{"a", text}), dedup.Options{Store: st})
	res, _ := dedup.Run(ctx, records([2]string{"b", text}, [2]string{"c", text + " tail"}), dedup.Options{Store: st})
	for _, p := range res.Pairs {
		fmt.Printf("%s ~ %s identical=%v stored=%v\n", p.A, p.B, p.Identical, p.SeqA < 0)
	}
	// Output:
	// a ~ b identical=true stored=true
	// a ~ c identical=false stored=true
}

func ExampleEventListener() {
	var stages []string
	o := dedup.Options{Events: dedup.EventListener{
		StageEnd: func(s dedup.StageInfo) { stages = append(stages, s.Stage) },
		Rejected: func(e *corpus.RecordError) { fmt.Println("rejected:", e.Reason) },
	}}
	dedup.Run(ctx, records([2]string{"a", "some text"}, [2]string{"b", ""}), o)
	fmt.Println(stages)
	// Output:
	// rejected: bad-json
	// [sketch index verify cluster]
}

func ExampleMakeLoggingEventListener() {
	var log bytes.Buffer
	dedup.Run(ctx, records([2]string{"a", "some text"}, [2]string{"a", "again"}), dedup.Options{Events: dedup.MakeLoggingEventListener(&log)})
	fmt.Print(strings.Split(log.String(), "\n")[0], "\n")
	// Output: dedup: rejected: corpus: @0: duplicate-id: id "a" already used by @0
}

func ExampleOptions_Validate() {
	var o dedup.Options // the zero value is valid
	fmt.Println(o.Validate())
	o.ExactBudget, o.Exact = -1, 9
	fmt.Println(o.Validate())
	// Output:
	// <nil>
	// dedup: unknown exact mode 9
	// exact budget -1 < 0
}

func ExampleWriteKept() {
	docs := records([2]string{"a", words(30)}, [2]string{"b", words(30)}, [2]string{"c", "other"})
	res, _ := dedup.Run(ctx, docs, dedup.Options{})
	var out bytes.Buffer
	w := corpus.NewJSONLWriter(&out)
	n, err := dedup.WriteKept(ctx, docs, res, w) // the same documents again
	w.Close()
	fmt.Println(n, err)
	fmt.Print(out.String())
	// Output:
	// 2 <nil>
	// {"id":"a","text":"word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11 word12 word13 word14 word15 word16 word17 word18 word19 word20 word21 word22 word23 word24 word25 word26 word27 word28 word29"}
	// {"id":"c","text":"other"}
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

func ExampleWriteClusters() {
	res, _ := dedup.Run(ctx, records([2]string{"a", words(30)}, [2]string{"b", words(30)}), dedup.Options{})
	dedup.WriteClusters(os.Stdout, res.Clusters)
	// Output: {"cluster":1,"kept":"a","size":2,"members":["a","b"],"details":[{"id":"a","similarity":1,"exact":true},{"id":"b","similarity":1,"exact":true,"identical":true}],"min_similarity":1,"edges":[{"a":"a","b":"b","similarity":1}]}
}

func ExampleWriteSummary() {
	res, _ := dedup.Run(ctx, records([2]string{"a", "text"}), dedup.Options{})
	var b bytes.Buffer
	dedup.WriteSummary(&b, &res.Summary)
	fmt.Println(strings.Contains(b.String(), `"read": 1`), errors.Is(nil, nil))
	// Output: true true
}

func ExampleNewRejectedWriter() {
	rw := dedup.NewRejectedWriter(os.Stdout)
	o := dedup.Options{Events: dedup.EventListener{Rejected: func(e *corpus.RecordError) { rw.Write(e) }}}
	dedup.Run(ctx, records([2]string{"a", "some text"}, [2]string{"b", ""}), o)
	if err := rw.Flush(); err != nil {
		fmt.Println(err)
	}
	// Output: {"id":"","source":"docs.jsonl","line":2,"offset":0,"count":1,"reason":"bad-json"}
}

func ExampleWriteRemoved() {
	text := words(200)
	res, err := dedup.Run(ctx, records([2]string{"a", text}, [2]string{"b", "other " + words(50)}, [2]string{"c", text}), dedup.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := dedup.WriteRemoved(os.Stdout, res); err != nil {
		fmt.Println(err)
	}
	// Output: {"id":"c","duplicate_of":"a","cluster":1,"similarity":1,"exact":true,"identical":true,"seq":2}
}

// ExampleKeeper writes the kept documents of a JSONL file with
// corpus.CopyKept, which reads the file a second time; the output has
// every field of the kept records.
func ExampleKeeper() {
	dir, _ := os.MkdirTemp("", "keeper")
	defer os.RemoveAll(dir)
	text := words(50)
	in := dir + "/in/docs.jsonl"
	_ = os.MkdirAll(dir+"/in", 0o755)
	_ = os.WriteFile(in, []byte(`{"id":"a","text":"`+text+`","lang":"en"}`+"\n"+`{"id":"b","text":"`+text+` more","lang":"en"}`+"\n"), 0o644)
	r, docs, _ := corpus.Records([]string{in}, corpus.Options{})
	res, err := dedup.Run(ctx, docs, dedup.Options{})
	r.Close()
	if err != nil {
		panic(err)
	}
	m, _ := corpus.NewMirrorWriter(dir + "/kept")
	k := dedup.NewKeeper(res)
	n, err := corpus.CopyKept(ctx, []string{in}, corpus.Options{}, m, k.Keep)
	if err == nil {
		err = k.Err()
	}
	_ = m.Close()
	out, _ := os.ReadFile(dir + "/kept/docs.jsonl")
	fmt.Println(n, err, strings.Contains(string(out), `"id":"a"`) && strings.Contains(string(out), `"lang":"en"`), strings.Contains(string(out), `"id":"b"`))
	// Output: 1 <nil> true false
}

// A memory budget lets the run go out of core by itself: past a quarter of
// it in sketches, they move to the work directory and the join runs over
// sorted runs on disk, with the same result.
func ExampleOptions_memory() {
	var docs [][2]string
	for i := range 200 {
		docs = append(docs, [2]string{fmt.Sprintf("d%d", i), words(40) + fmt.Sprintf(" unique%d", i%150)})
	}
	work, err := os.MkdirTemp("", "neardup-work")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	res, err := dedup.Run(ctx, records(docs...), dedup.Options{Memory: 64 << 10, WorkDir: work})
	if err != nil {
		log.Fatal(err)
	}
	s := res.Summary
	fmt.Println(s.External, s.Spilled > 0, s.Read, s.Kept, s.Duplicates)
	// Output: true true 200 1 199
}
