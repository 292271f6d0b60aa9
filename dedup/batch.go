package dedup

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sketch"
)

// MaxRun bounds the candidates taken from one run of documents sharing a
// lookup key: each document is paired with at most the MaxRun documents
// before it in the run. A key shared by thousands of documents is a
// template or boilerplate, not a duplicate cluster; without the bound one
// such key would make the candidate set quadratic (the "one shared template
// merged 743,779 documents" failure of other tools). Genuine duplicates in
// such a run are still found through their other keys and through the
// members they are paired with.
const MaxRun = 2048

// batchCandidates finds the candidate pairs of the unique documents without
// a store: for each of the scheme's C(b, m) keys in turn it computes that
// key for every document, sorts, and pairs the documents of each run of
// equal keys. An entry packs the key's high 32 bits above the document's
// position, so a pass holds 8 bytes per document and sorts plain integers;
// the truncated key lets unrelated documents collide with probability
// 2^-32 per pass (about n²/2^33 extra candidates per pass, all rejected by
// verification), against P(J) of the full scheme for related ones. Memory:
// 8 bytes per document for the pass, plus 8 bytes per candidate pair. Pairs are returned as (earlier, later) positions in
// unique, sorted, with the number of keys each pair shares.
func batchCandidates(ctx context.Context, o Options, scheme *lsh.Scheme, docs []Doc, unique []int) (pairs []uint64, shared []int32, err error) {
	var nonEmpty []uint32 // positions in unique of documents with a sketch
	for i, u := range unique {
		if len(docs[u].sketch) > 0 {
			nonEmpty = append(nonEmpty, uint32(i))
		}
	}
	n := len(nonEmpty)
	keys := make([]uint64, 0, n)
	bar := progress.New(o.Progress, "index", int64(scheme.NumKeys()), "keys")
	defer bar.Finish()
	var raw []uint64
	for c := 0; c < scheme.NumKeys(); c++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		keys = keys[:n]
		parallel(n, o.Workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				u := nonEmpty[i]
				keys[i] = scheme.Key(c, docs[unique[u]].sketch)&^0xffffffff | uint64(u)
			}
		})
		slices.Sort(keys)
		for lo := 0; lo < n; {
			hi := lo + 1
			for hi < n && keys[hi]>>32 == keys[lo]>>32 {
				hi++
			}
			for j := lo + 1; j < hi; j++ {
				for i := max(lo, j-MaxRun); i < j; i++ {
					raw = append(raw, keys[i]<<32|keys[j]&0xffffffff)
				}
			}
			lo = hi
		}
		bar.Add(1)
	}
	slices.Sort(raw)
	for i := 0; i < len(raw); {
		j := i + 1
		for j < len(raw) && raw[j] == raw[i] {
			j++
		}
		pairs = append(pairs, raw[i])
		shared = append(shared, int32(j-i))
		i = j
	}
	return pairs, shared, nil
}

// batchVerify verifies candidate pairs (positions in unique) in parallel and
// returns those at or above the threshold, in the order of pairs.
func batchVerify(ctx context.Context, o Options, hdr sketch.Header, docs []Doc, unique []int, cand []uint64, shared []int32) ([]Pair, error) {
	bar := progress.New(o.Progress, "verify", int64(len(cand)), "pairs")
	defer bar.Finish()
	keep := make([]bool, len(cand))
	out := make([]Pair, len(cand))
	parallel(len(cand), o.Workers, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if k&1023 == 0 && ctx.Err() != nil {
				return
			}
			a, b := &docs[unique[cand[k]>>32]], &docs[unique[uint32(cand[k])]]
			p := verifyLocal(a, b, hdr)
			p.Keys = int(shared[k])
			if o.accept(p) {
				out[k], keep[k] = p, true
			}
		}
		bar.Add(int64(hi - lo))
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var pairs []Pair
	for k, ok := range keep {
		if ok {
			pairs = append(pairs, out[k])
		}
	}
	return pairs, nil
}

// parallel runs fn over [0, n) split into chunks, on up to workers
// goroutines.
func parallel(n, workers int, fn func(lo, hi int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const chunk = 4096
	if n <= chunk || workers == 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				lo := next
				next += chunk
				mu.Unlock()
				if lo >= n {
					return
				}
				fn(lo, min(lo+chunk, n))
			}
		}()
	}
	wg.Wait()
}
