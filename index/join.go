package index

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/neardup/neardup/internal/radix"
)

// MaxRun is the default BatchOptions.MaxRun: the candidates taken from one
// run of documents sharing a lookup key are bounded by pairing each
// document with at most the MaxRun documents before it in the run. A key
// shared by thousands of documents is a template or boilerplate, not a
// duplicate cluster; without the bound one such key would make the
// candidate set quadratic (the "one shared template merged 743,779
// documents" failure of other tools). Genuine duplicates in such a run are
// still found through their other keys and through the members they are
// paired with.
const MaxRun = 2048

// BatchOptions configure the batch operations Join and VerifyPairs. The
// zero value is valid.
type BatchOptions struct {
	// Workers is the number of goroutines. The default is
	// runtime.GOMAXPROCS(0).
	Workers int
	// MaxRun bounds the pairs Join takes from one run of equal keys (see
	// the constant MaxRun, the default).
	MaxRun int
	// Progress, if not nil, is called as work is done with the units done
	// so far and the total (Join: key passes; VerifyPairs: pairs), from
	// one goroutine at a time.
	Progress func(done, total int64)
	// Visit, if not nil, is the order in which Join asks for the
	// documents' values: a permutation of the document numbers 0..n-1.
	// A caller whose values lie in memory in another order than the
	// documents' numbers gives that order, so that Join's sweep reads
	// them in sequence instead of at random (at a million documents of
	// 119 values, 0.5 s of the join's 1.5). The result does not depend on
	// it.
	Visit []uint32
}

func (o *BatchOptions) ensureDefaults() {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MaxRun <= 0 {
		o.MaxRun = MaxRun
	}
}

// JoinPair is a candidate pair of Join: documents A < B (the caller's
// numbers) sharing Keys lookup keys.
type JoinPair struct {
	A, B uint32
	Keys int32
}

// Join finds the candidate pairs among n documents without a store — the
// batch path of the index, AltaVista's sort-join (book 3.1): for each of
// the scheme's keys in turn it computes that key for every document,
// sorts, and pairs the documents of each run of equal keys (each with at
// most MaxRun before it, in the order of their numbers). values(dst, i)
// appends the sketch values of document i (made with the index's
// configuration; none for a document without features, which joins
// nothing) to dst and returns the extended slice: dst is a buffer of
// Join's, reused from call to call, so that a caller whose values are not
// held as []uint64 (narrower words, say) allocates nothing. It is
// called once per document, from several goroutines at once, each with a
// buffer of its own. Pairs come sorted by (A, B).
//
// An entry of a pass packs the key's high 32 bits above the document's
// number, so a pass holds 8 bytes per document and sorts plain integers;
// the truncated key lets unrelated documents collide with probability
// 2^-32 per pass (about n²/2^33 extra candidates per pass, all rejected by
// verification), against P(J) of the full scheme for related ones. Memory:
// 4 bytes per document and key (the keys' high halves, computed in one
// sweep over the sketches) and 1 per document (whether it has values),
// 16 bytes per document for each worker's pass (its entries, sorted by
// a radix sort into a second array; the workers sort whole passes at
// once), plus 8 bytes per candidate pair and key shared, and with
// o.Visit 4 more per document. The result is the same for any number of
// workers and any o.Visit; it depends on the numbering only through runs
// longer than MaxRun.
func (x *Index) Join(ctx context.Context, n int, values func(dst []uint64, i int) []uint64, o BatchOptions) ([]JoinPair, error) {
	o.ensureDefaults()
	if n > math.MaxUint32 {
		return nil, fmt.Errorf("index: join of %d documents: at most 2^32-1", n)
	}
	passes := x.scheme.NumKeys()
	if o.Visit != nil {
		notPerm := fmt.Errorf("index: join of %d documents: Visit is not a permutation of 0..%d", n, n-1)
		if len(o.Visit) != n {
			return nil, notPerm
		}
		seen := make([]bool, n)
		for _, i := range o.Visit {
			if int(i) >= n || seen[i] {
				return nil, notPerm
			}
			seen[i] = true
		}
	}
	// Every document's keys in one sweep over the sketches (each sketch
	// read once, not once per pass; the bands shared by combination keys
	// hashed once), in the order of o.Visit: the high half of key c of
	// the document visited k-th at his[c*n+k] (so written in sequence),
	// and whether it has no values.
	his := make([]uint32, passes*n)
	empty := make([]bool, n)
	var mu sync.Mutex
	var keyErr error
	parallel(n, o.Workers, func(lo, hi int) {
		var keys, vs []uint64
		for i := lo; i < hi; i++ {
			var err error
			d := i
			if o.Visit != nil {
				d = int(o.Visit[i])
			}
			if vs = values(vs[:0], d); len(vs) == 0 {
				empty[d] = true
				continue
			}
			if keys, err = x.scheme.Keys(keys[:0], vs); err != nil {
				mu.Lock()
				keyErr = fmt.Errorf("index: join: document %d: %w", d, err)
				mu.Unlock()
				return
			}
			for c, k := range keys {
				his[c*n+i] = uint32(k >> 32)
			}
		}
	})
	if keyErr != nil {
		return nil, keyErr
	}
	// inv[i] is where document i's keys are in his: where it was
	// visited (nil: at i).
	var inv []uint32
	if o.Visit != nil {
		inv = make([]uint32, n)
		for k, i := range o.Visit {
			inv[i] = uint32(k)
		}
	}
	var nonEmpty []uint32
	for i, e := range empty {
		if !e {
			nonEmpty = append(nonEmpty, uint32(i))
		}
	}
	// The passes are independent: each worker sorts whole passes, with
	// entries of its own.
	m := len(nonEmpty)
	workers := max(1, min(o.Workers, passes))
	raws := make([][]uint64, workers)
	var wg sync.WaitGroup
	var passErr error
	next, done := 0, 0 // guarded by mu
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entries := make([]uint64, m)
			scratch := make([]uint64, m)
			for {
				mu.Lock()
				c := next
				next++
				mu.Unlock()
				if c >= passes {
					return
				}
				if err := ctx.Err(); err != nil {
					mu.Lock()
					passErr = err
					mu.Unlock()
					return
				}
				hc := his[c*n : (c+1)*n]
				if inv == nil {
					for k, i := range nonEmpty {
						entries[k] = uint64(hc[i])<<32 | uint64(i)
					}
				} else {
					for k, i := range nonEmpty {
						entries[k] = uint64(hc[inv[i]])<<32 | uint64(i)
					}
				}
				// The entries are in increasing order of their low half
				// (the document numbers): a stable sort by the high half
				// sorts them.
				entries, scratch = radix.SortHigh32(entries, scratch)
				raws[w] = runPairs(raws[w], entries, o.MaxRun)
				mu.Lock()
				done++
				if o.Progress != nil {
					o.Progress(int64(done), int64(passes))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if passErr != nil {
		return nil, passErr
	}
	raw := slices.Concat(raws...)
	slices.Sort(raw)
	var pairs []JoinPair
	for i := 0; i < len(raw); {
		j := i + 1
		for j < len(raw) && raw[j] == raw[i] {
			j++
		}
		pairs = append(pairs, JoinPair{A: uint32(raw[i] >> 32), B: uint32(raw[i]), Keys: int32(j - i)})
		i = j
	}
	return pairs, nil
}

// runPairs appends the pairs of the runs of equal keys in sorted entries
// (key high bits | document number), packed as A<<32 | B with A < B.
func runPairs(dst, entries []uint64, maxRun int) []uint64 {
	for lo := 0; lo < len(entries); {
		hi := lo + 1
		for hi < len(entries) && entries[hi]>>32 == entries[lo]>>32 {
			hi++
		}
		for j := lo + 1; j < hi; j++ {
			for i := max(lo, j-maxRun); i < j; i++ {
				dst = append(dst, entries[i]<<32|entries[j]&0xffffffff)
			}
		}
		lo = hi
	}
	return dst
}

// VerifyPairs verifies candidate pairs with Verify, in parallel: it calls
// fn(k, c, ok) for every pairs[k], with the comparison of doc(A) and
// doc(B) (its Keys set from the pair) and whether it is a match. doc is
// called from several goroutines at once, and so is fn (for distinct k).
// It stops at the first error (headers that differ) or when ctx is done.
func (x *Index) VerifyPairs(ctx context.Context, pairs []JoinPair, doc func(i uint32) *Doc, o BatchOptions, fn func(k int, c Comparison, ok bool)) error {
	o.ensureDefaults()
	var mu sync.Mutex // guards firstErr, done and Progress
	var firstErr error
	var done int64
	parallel(len(pairs), o.Workers, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if k&1023 == 0 && ctx.Err() != nil {
				return
			}
			p := pairs[k]
			c, ok, err := x.Verify(doc(p.A), doc(p.B))
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			c.Keys = int(p.Keys)
			fn(k, c, ok)
		}
		mu.Lock()
		done += int64(hi - lo)
		if o.Progress != nil {
			o.Progress(done, int64(len(pairs)))
		}
		mu.Unlock()
	})
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// parallel runs fn over [0, n) split into chunks, on up to workers
// goroutines.
func parallel(n, workers int, fn func(lo, hi int)) {
	const chunk = 4096
	if n <= chunk || workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range workers {
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
