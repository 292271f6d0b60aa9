package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// childResult is what one child process (one configuration) measured.
type childResult struct {
	Config  string  `json:"config"`
	Docs    int64   `json:"docs"`
	Seconds float64 `json:"seconds"` // end to end (dedup.Run, or the peer's phases)
	DocsPS  float64 `json:"docs_per_s"`
	CPU     float64 `json:"cpu_seconds"` // user+system of the child up to the end of the timed part
	Load1   float64 `json:"load1"`       // load average at start

	Stages     []dedup.Stage `json:"stages,omitempty"`
	LSH        string        `json:"lsh,omitempty"`
	Candidates int64         `json:"candidates,omitempty"`
	Pairs      int           `json:"pairs"`
	// SpilledDoc is the bytes the out-of-core run wrote to its work
	// directory per document.
	SpilledDoc float64 `json:"spilled_bytes_per_doc,omitempty"`

	PeakRSS       int64   `json:"peak_rss_bytes"`  // VmHWM after the timed part
	PeakHeap      int64   `json:"peak_heap_bytes"` // peak of heap objects (runtime/metrics)
	PeakGoTotal   int64   `json:"peak_go_total_bytes"`
	IndexBytesDoc float64 `json:"index_bytes_per_doc"` // see IndexNote
	IndexNote     string  `json:"index_note"`
	HeldBytesDoc  float64 `json:"held_bytes_per_doc"` // live heap after the run / docs (sketches kept for verification)

	RecallPlanted map[string]recall      `json:"recall"` // by "J>=0.8", "J>=0.85", "J>=0.9"
	ByLevel       map[string]levelRecall `json:"recall_by_level"`
	Precision     *precision             `json:"precision,omitempty"`

	// Peer and neardup sketching, measured in the same loop.
	ExtractSec     float64 `json:"extract_goroutine_seconds,omitempty"`
	SketchSec      float64 `json:"sketch_goroutine_seconds,omitempty"`
	NeardupSketch  float64 `json:"neardup_oph_goroutine_seconds,omitempty"`
	InsertSec      float64 `json:"insert_seconds,omitempty"`
	InsertsPS      float64 `json:"inserts_per_s,omitempty"`
	QueryAllSec    float64 `json:"query_all_seconds,omitempty"`
	QueriesPS      float64 `json:"queries_per_s,omitempty"`
	PeerCandidates int64   `json:"peer_candidates,omitempty"`
	PeerLSH        string  `json:"peer_lsh,omitempty"`

	Query *queryResult `json:"query,omitempty"`
}

type levelRecall struct {
	recall
	MinJ float64 `json:"min_exact"`
	MaxJ float64 `json:"max_exact"`
}

// recallByLevel splits plantedRecall by target level.
func recallByLevel(plants []plant, found func(a, b int) bool) map[string]levelRecall {
	out := map[string]levelRecall{}
	for _, p := range plants {
		k := fmt.Sprint(p.Target)
		l, ok := out[k]
		if !ok {
			l.MinJ, l.MaxJ = 2, -1
		}
		l.Planted++
		if found(p.A, p.B) {
			l.Found++
		}
		l.MinJ, l.MaxJ = min(l.MinJ, p.Exact), max(l.MaxJ, p.Exact)
		l.Recall = float64(l.Found) / float64(l.Planted)
		out[k] = l
	}
	return out
}

type recall struct {
	Planted int     `json:"planted"`
	Found   int     `json:"found"`
	Recall  float64 `json:"recall"`
}

type precision struct {
	Reported int     `json:"reported_near_pairs"`
	Checked  int     `json:"checked"`
	AtLeast7 int     `json:"exact_ge_0.7"`
	Value    float64 `json:"precision"`
	MinJ     float64 `json:"min_exact"`
}

// queryResult is the streaming-query measurement on held-out documents.
type queryResult struct {
	Queries int     `json:"queries"`
	P50us   float64 `json:"p50_us"`
	P99us   float64 `json:"p99_us"`
	MeanUS  float64 `json:"mean_us"`
	PerSec  float64 `json:"queries_per_s"`
	Recall  recall  `json:"recall_ge_0.8"`
}

func loadManifest(dir string) (*manifest, *generator) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		fatal(err)
	}
	return &m, newGenerator(m.Config)
}

func pairKey(a, b int) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(b)
}

// plantedRecall counts the planted pairs with exact J >= t among found.
func plantedRecall(plants []plant, found func(a, b int) bool) map[string]recall {
	out := map[string]recall{}
	for _, t := range []float64{0.8, 0.85, 0.9} {
		var r recall
		for _, p := range plants {
			if p.Exact >= t {
				r.Planted++
				if found(p.A, p.B) {
					r.Found++
				}
			}
		}
		if r.Planted > 0 {
			r.Recall = float64(r.Found) / float64(r.Planted)
		}
		out[fmt.Sprintf("J>=%g", t)] = r
	}
	return out
}

// runDedupChild runs dedup.Run in one configuration ("batch", "memstore",
// "pebble") and, for the store configurations, the held-out query timing.
func runDedupChild(o flags) childResult {
	m, g := loadManifest(o.corpusDir)
	r := childResult{Config: o.child, Load1: load1()}
	var st store.Store
	var pebbleDir string
	var memory int64
	var work string
	switch o.child {
	case "batch":
	case "external":
		memory = o.memoryMiB << 20
		debug.SetMemoryLimit(memory)
		d, err := os.MkdirTemp(o.tmp, "work-")
		if err != nil {
			fatal(err)
		}
		work = d
		defer os.RemoveAll(d)
	case "memstore":
		st = store.NewMemory()
	case "pebble":
		d, err := os.MkdirTemp(o.tmp, "pebble-")
		if err != nil {
			fatal(err)
		}
		pebbleDir = d
		defer os.RemoveAll(d)
		p, err := store.OpenPebble(d, nil)
		if err != nil {
			fatal(err)
		}
		st = p
	default:
		fatal(fmt.Errorf("unknown configuration %q", o.child))
	}
	base := liveHeap()
	mon := startHeapMonitor(20 * time.Millisecond)
	cpu0 := cpuSeconds()
	t0 := time.Now()
	rd, docs, err := records(m.Corpus)
	if err != nil {
		fatal(err)
	}
	stopProfile := startProfile(o.profile, o.child)
	res, err := dedup.Run(context.Background(), docs, dedup.Options{
		Index:   index.Config{Sketch: sample.Config{K: o.k}, Threshold: o.threshold},
		Store:   st,
		Workers: 2,
		Exact:   exactMode(o.exact),
		Events:  stageLog(rd, o.profile, o.child),
		Memory:  memory,
		WorkDir: work,
	})
	rd.Close()
	wall := time.Since(t0)
	stopProfile()
	if err != nil {
		fatal(err)
	}
	r.CPU = cpuSeconds() - cpu0
	mon.finish()
	r.PeakRSS = vmHWM()
	r.PeakHeap, r.PeakGoTotal = mon.peakObj, mon.peakTotal
	sum := res.Summary
	r.Docs, r.Seconds, r.Stages = sum.Read, wall.Seconds(), sum.Stages
	r.DocsPS = float64(sum.Read) / wall.Seconds()
	r.LSH, r.Candidates, r.Pairs = fmt.Sprint(res.Scheme), sum.Candidates, len(res.Pairs)
	r.SpilledDoc = float64(sum.Spilled) / float64(sum.Read)
	held := liveHeap()
	r.HeldBytesDoc = float64(held-base) / float64(sum.Read)

	switch o.child {
	case "batch":
		// The stages run back to back from (about) the monitor's start;
		// the sort-join is the "index" stage.
		var from time.Duration
		for _, s := range sum.Stages {
			d := time.Duration(s.Seconds * float64(time.Second))
			if s.Name == "index" {
				at, peak := mon.window(from, from+d)
				r.IndexBytesDoc = float64(peak-at) / float64(sum.Read)
				r.IndexNote = "heap growth during the sort-join (index) stage, sampled every 20 ms / docs"
			}
			from += d
		}
	}

	// Recall of planted pairs, precision of reported near pairs.
	found := make(map[uint64]bool, len(res.Pairs))
	var near []dedup.Pair
	for _, p := range res.Pairs {
		a, okA := parseDocName(p.A)
		b, okB := parseDocName(p.B)
		if okA && okB {
			found[pairKey(a, b)] = true
		}
		if !p.Identical {
			near = append(near, p)
		}
	}
	r.RecallPlanted = plantedRecall(m.Plants, func(a, b int) bool { return found[pairKey(a, b)] })
	r.ByLevel = recallByLevel(m.Plants, func(a, b int) bool { return found[pairKey(a, b)] })
	r.Precision = measurePrecision(g, near, o.precisionSample)

	if st != nil && o.queries > 0 {
		r.Query = timeQueries(o, m, g, st, res)
	}
	if o.child == "memstore" {
		withStore := liveHeap()
		st.Close()
		st = nil
		r.IndexBytesDoc = float64(withStore-liveHeap()) / float64(sum.Read)
		r.IndexNote = "live heap of store.Memory (postings + doc records with sketches) / docs"
	}
	if o.child == "pebble" {
		st.Close()
		n := dirBytes(pebbleDir)
		// One document record: name, sketch encoding, no features.
		var sk sketch.Sketch
		smp := newSampler(o.k)
		sk.Header, sk.Values = smp.Header(), make([]uint64, o.k)
		rec, _ := index.AppendDoc(nil, &index.Doc{Name: docName(0), Sketch: sk, HasFingerprint: true})
		r.IndexBytesDoc = float64(n) / float64(sum.Read)
		r.IndexNote = fmt.Sprintf("Pebble directory after compaction / docs (%.1f MB; doc records ≈ %d B/doc uncompressed, postings the rest)", float64(n)/1e6, len(rec))
	}
	return r
}

// records opens path and returns the reader and the records dedup.Run
// takes: the documents, and rejected records as *corpus.RecordError.
func records(path string) (*corpus.Reader, iter.Seq2[*corpus.Document, error], error) {
	var pending []*corpus.RecordError
	r, err := corpus.Open([]string{path}, corpus.Options{OnReject: func(e *corpus.RecordError) { pending = append(pending, e) }})
	if err != nil {
		return nil, nil, err
	}
	return r, func(yield func(*corpus.Document, error) bool) {
		for r.Next() {
			for _, e := range pending {
				if !yield(nil, e) {
					return
				}
			}
			pending = pending[:0]
			if !yield(r.Doc(), nil) {
				return
			}
		}
		if r.Err() != nil {
			yield(nil, r.Err())
		}
	}, nil
}

// stageLog logs each stage's end (the sketch stage with the bytes read),
// with the time since the listener was made (just before the run), and
// progress every 15 seconds to stderr. Stages of the store run beside
// others, and work between stages shows as the gaps.
func stageLog(r *corpus.Reader, profile, name string) dedup.EventListener {
	last := time.Now()
	made := last
	return dedup.EventListener{
		Progress: func(p dedup.ProgressInfo) {
			if time.Since(last) > 15*time.Second {
				last = time.Now()
				fmt.Fprintf(os.Stderr, "%s: %d of %d %s\n", p.Stage, p.Done, p.Total, p.Unit)
			}
		},
		StageEnd: func(s dedup.StageInfo) {
			if profile != "" {
				writeHeapProfile(filepath.Join(profile, name+"."+s.Stage+".heap.pprof"))
			}
			if s.Stage == dedup.StageSketch {
				fmt.Fprintf(os.Stderr, "%s: %d bytes in %v (%.0f bytes/s), ended at %.2f s\n", s.Stage, r.BytesRead(), s.Duration.Round(time.Millisecond), float64(r.BytesRead())/s.Duration.Seconds(), time.Since(made).Seconds())
				return
			}
			fmt.Fprintf(os.Stderr, "%s: %d items in %v, ended at %.2f s\n", s.Stage, s.Items, s.Duration.Round(time.Millisecond), time.Since(made).Seconds())
		},
	}
}

func exactMode(s string) dedup.ExactMode {
	switch s {
	case "never":
		return dedup.ExactNever
	case "auto":
		return dedup.ExactAuto
	case "always":
		return dedup.ExactAlways
	}
	fatal(fmt.Errorf("-exact %q: want never, auto or always", s))
	return 0
}

func newSampler(k int) sample.Sampler {
	smp, err := sample.New(sample.Config{Algorithm: sketch.OPH, K: k})
	if err != nil {
		fatal(err)
	}
	return smp
}

// measurePrecision computes the exact Jaccard of (a deterministic sample of)
// the reported near pairs from regenerated documents.
func measurePrecision(g *generator, near []dedup.Pair, sampleN int) *precision {
	p := &precision{Reported: len(near), MinJ: 2}
	if len(near) == 0 || sampleN <= 0 { // -precision-sample 0: none measured
		return p
	}
	step := max(1, len(near)/sampleN)
	e := newExacter(g)
	for i := 0; i < len(near); i += step {
		a, okA := parseDocName(near[i].A)
		b, okB := parseDocName(near[i].B)
		if !okA || !okB {
			continue
		}
		j := e.pairJ(a, b)
		p.Checked++
		if j >= 0.7 {
			p.AtLeast7++
		}
		p.MinJ = min(p.MinJ, j)
	}
	if p.Checked > 0 {
		p.Value = float64(p.AtLeast7) / float64(p.Checked)
	}
	return p
}

// queryDocs extracts and sketches the held-out queries (not timed).
func queryDocs(o flags, g *generator, m *manifest) ([][]uint64, []int) {
	smp := newSampler(o.k)
	e := newExacter(g)
	var ws []int32
	var txt []byte
	sks := make([][]uint64, m.Config.Queries)
	bases := make([]int, m.Config.Queries)
	for q := range sks {
		ws, bases[q] = g.queryWords(ws[:0], q)
		txt = g.text(txt[:0], ws)
		e.fs = e.ex.Extract(e.fs[:0], txt)
		sks[q] = smp.Sketch(make([]uint64, 0, o.k), e.fs)
	}
	return sks, bases
}

// timeQueries times index.Query, one held-out document at a time, over the
// index dedup.Run built in st.
func timeQueries(o flags, m *manifest, g *generator, st store.Store, res *dedup.Result) *queryResult {
	smp := newSampler(o.k)
	x, err := index.Open(context.Background(), st, index.Config{Threshold: o.threshold})
	if err != nil {
		fatal(err)
	}
	sks, bases := queryDocs(o, g, m)
	lat := make([]time.Duration, len(sks))
	hit := make([]bool, len(sks))
	var matches []index.Match
	t0 := time.Now()
	for q, v := range sks {
		s := sketch.Sketch{Header: smp.Header(), Values: v}
		t := time.Now()
		matches, err = x.Query(context.Background(), matches[:0], &index.Doc{Sketch: s}, "")
		lat[q] = time.Since(t)
		if err != nil {
			fatal(err)
		}
		want := docName(bases[q])
		for _, mt := range matches {
			if mt.Name == want {
				hit[q] = true
			}
		}
	}
	total := time.Since(t0)
	qr := &queryResult{Queries: len(sks), P50us: percentile(lat, 0.5), P99us: percentile(lat, 0.99),
		MeanUS: float64(total.Nanoseconds()) / 1e3 / float64(len(sks)), PerSec: float64(len(sks)) / total.Seconds()}
	qr.Recall = plantedRecall(m.QPlants, func(_, b int) bool { return hit[b] })["J>=0.8"]
	return qr
}

// runPeerChild runs ekzhu/minhash-lsh on the same corpus: the same
// extracted shingle ids (8-byte little-endian) pushed into its Minhash with
// k hash functions, then MinhashLSH64 at the threshold: Add + Index
// (inserts), Query of every document (queries), recall of planted pairs
// among its candidates (it has no verification step), held-out query
// latency. neardup's OPH sketch of the same features is timed in the same
// loop for a like-with-like sketching figure.
func runPeerChild(o flags) childResult {
	m, g := loadManifest(o.corpusDir)
	n := m.Config.N
	r := childResult{Config: "ekzhu/minhash-lsh", Docs: int64(n), Load1: load1()}
	mon := startHeapMonitor(20 * time.Millisecond)
	cpu0 := cpuSeconds()
	t0 := time.Now()
	sigs := make([][]uint64, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := 0
	const chunk = 256
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := newExacter(g)
			smp := newSampler(o.k)
			if c, ok := smp.(sample.Cloner); ok {
				smp = c.Clone()
			}
			var ws []int32
			var txt []byte
			var kb [8]byte
			var nd []uint64
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var tx, tm, tn time.Duration
			for {
				mu.Lock()
				lo := next
				next += chunk
				mu.Unlock()
				if lo >= n {
					break
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					ws = g.words(ws[:0], i)
					txt = g.text(txt[:0], ws)
					a := threadCPU()
					e.fs = e.ex.Extract(e.fs[:0], txt)
					b := threadCPU()
					mh := minhashlsh.NewMinhash(1, o.k)
					for _, f := range e.fs {
						binary.LittleEndian.PutUint64(kb[:], f.ID)
						mh.Push(kb[:])
					}
					sigs[i] = mh.Signature()
					c := threadCPU()
					nd = smp.Sketch(nd[:0], e.fs)
					tx += b - a
					tm += c - b
					tn += threadCPU() - c
				}
			}
			mu.Lock()
			r.ExtractSec += tx.Seconds()
			r.SketchSec += tm.Seconds()
			r.NeardupSketch += tn.Seconds()
			mu.Unlock()
		}()
	}
	wg.Wait()
	sketchWall := time.Since(t0)
	r.Stages = append(r.Stages, dedup.Stage{Name: "generate+extract+sketch", Seconds: sketchWall.Seconds(), Items: int64(n)})

	before := liveHeap()
	lsh := minhashlsh.NewMinhashLSH64(o.k, o.threshold)
	kk, ll := lsh.Params()
	r.PeerLSH = fmt.Sprintf("k=%d per band, l=%d bands", kk, ll)
	t1 := time.Now()
	for i, s := range sigs {
		lsh.Add(i, s)
	}
	lsh.Index()
	r.InsertSec = time.Since(t1).Seconds()
	r.InsertsPS = float64(n) / r.InsertSec
	r.Stages = append(r.Stages, dedup.Stage{Name: "insert", Seconds: r.InsertSec, Items: int64(n)})
	after := liveHeap()
	r.IndexBytesDoc = float64(after-before) / float64(n)
	r.IndexNote = "live heap of MinhashLSH after Add+Index minus before / docs (signatures not counted)"

	found := make(map[uint64]bool)
	t2 := time.Now()
	var cands int64
	for i, s := range sigs {
		for _, k := range lsh.Query(s) {
			j := k.(int)
			if j != i {
				cands++
				found[pairKey(i, j)] = true
			}
		}
	}
	r.QueryAllSec = time.Since(t2).Seconds()
	r.QueriesPS = float64(n) / r.QueryAllSec
	r.Stages = append(r.Stages, dedup.Stage{Name: "query", Seconds: r.QueryAllSec, Items: int64(n)})
	r.PeerCandidates = cands
	r.Seconds = time.Since(t0).Seconds()
	r.DocsPS = float64(n) / r.Seconds
	r.CPU = cpuSeconds() - cpu0
	mon.finish()
	r.PeakRSS = vmHWM()
	r.PeakHeap, r.PeakGoTotal = mon.peakObj, mon.peakTotal
	r.RecallPlanted = plantedRecall(m.Plants, func(a, b int) bool { return found[pairKey(a, b)] })
	r.ByLevel = recallByLevel(m.Plants, func(a, b int) bool { return found[pairKey(a, b)] })
	r.Pairs = len(found)

	// Held-out query latency.
	e := newExacter(g)
	var ws []int32
	var txt []byte
	var kb [8]byte
	qs := make([][]uint64, m.Config.Queries)
	bases := make([]int, len(qs))
	for q := range qs {
		ws, bases[q] = g.queryWords(ws[:0], q)
		txt = g.text(txt[:0], ws)
		e.fs = e.ex.Extract(e.fs[:0], txt)
		mh := minhashlsh.NewMinhash(1, o.k)
		for _, f := range e.fs {
			binary.LittleEndian.PutUint64(kb[:], f.ID)
			mh.Push(kb[:])
		}
		qs[q] = mh.Signature()
	}
	lat := make([]time.Duration, len(qs))
	hit := make([]bool, len(qs))
	t3 := time.Now()
	for q, s := range qs {
		t := time.Now()
		res := lsh.Query(s)
		lat[q] = time.Since(t)
		for _, k := range res {
			if k.(int) == bases[q] {
				hit[q] = true
			}
		}
	}
	total := time.Since(t3)
	r.Query = &queryResult{Queries: len(qs), P50us: percentile(lat, 0.5), P99us: percentile(lat, 0.99),
		MeanUS: float64(total.Nanoseconds()) / 1e3 / float64(len(qs)), PerSec: float64(len(qs)) / total.Seconds()}
	r.Query.Recall = plantedRecall(m.QPlants, func(_, b int) bool { return hit[b] })["J>=0.8"]
	runtime.KeepAlive(sigs)
	return r
}
