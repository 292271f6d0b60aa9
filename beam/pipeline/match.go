package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/lsh/bandfile"
)

func init() {
	register.DoFn4x0[uint64, docRec, func(uint64, uint64), func(int, bandfile.Row)](&bandsFn{})
	register.DoFn5x0[context.Context, uint64, func(*uint64) bool, func(uint64, uint64), func(hotKey)](&runFn{})
	register.DoFn5x1[context.Context, uint64, func(*uint64) bool, func(*docRec) bool, func(uint64, half), error](&joinAFn{})
	register.DoFn6x1[context.Context, uint64, func(*half) bool, func(*docRec) bool, func(pairRec), func(line), error](&verifyFn{})
	register.Function3x0(needFn)
	register.DoFn5x1[context.Context, int, func(*fileRef) bool, func(*int64) bool, func(uint64, docRec), error](&featuresFn{})
	register.Function1x1(pairLineFn)
	register.Emitter2[int, bandfile.Row]()
	register.DoFn2x0[pairRec, func(uint64, uint64)](&edgeFn{})
	register.Emitter2[uint64, half]()
	register.Emitter1[pairRec]()
	register.Emitter1[hotKey]()
	register.Iter1[half]()
}

// bandsFn emits the band keys of a unique document: (band key, order) for
// each of the scheme's C(b, m) keys. A document without features has no
// keys (dedup leaves it out of the join). With Shards > 0 it also emits
// the keys as rows for the Parquet export, keyed by shard.
type bandsFn struct {
	Cfg    Config
	Shards int
	sk     *sketcher
	rows   []bandfile.Row
	keys   []uint64
}

func (f *bandsFn) Setup() error {
	var err error
	f.sk, err = newSketcher(f.Cfg)
	return err
}

func (f *bandsFn) ProcessElement(o uint64, d docRec, emit func(uint64, uint64), emitRow func(int, bandfile.Row)) {
	if len(d.Sketch) == 0 {
		return
	}
	f.keys = f.keys[:0]
	for c := 0; c < f.sk.numKeys(); c++ {
		k := f.sk.bandKey(c, d.Sketch)
		f.keys = append(f.keys, k)
		emit(k, o)
	}
	if f.Shards > 0 {
		shard := shardOf(o, f.Shards)
		f.rows = bandfile.AppendRows(f.rows[:0], d.ID, int64(o), f.keys)
		for _, r := range f.rows {
			emitRow(shard, r)
		}
	}
}

// runFn turns the run of documents sharing a band key into candidate
// pairs (earlier, later): in input order, each document is paired with at
// most MaxRun documents before it, as dedup's batchCandidates does. A run
// longer than MaxRun is a hot key (boilerplate, a template): it is
// counted, reported, and costs MaxRun pairs per document instead of a
// quadratic number. Memory: 8 bytes per document of the run.
type runFn struct {
	MaxRun int
	orders []uint64
}

func (f *runFn) ProcessElement(ctx context.Context, key uint64, iter func(*uint64) bool, emit func(uint64, uint64), emitHot func(hotKey)) {
	f.orders = collect(f.orders, iter)
	n := len(f.orders)
	if n > f.MaxRun {
		cHotKeys.Inc(ctx, 1)
		cHotDocs.Update(ctx, int64(n))
		emitHot(hotKey{Key: key, Docs: int64(n)})
	}
	for j := 1; j < n; j++ {
		for i := max(0, j-f.MaxRun); i < j; i++ {
			emit(f.orders[i], f.orders[j])
		}
	}
}

// joinAFn meets the candidates (A, B) of document A with A's sketch: it
// counts the band keys each distinct pair shares and sends A's sketch on
// to B.
type joinAFn struct {
	bs []uint64
}

func (f *joinAFn) ProcessElement(ctx context.Context, a uint64, bs func(*uint64) bool, docs func(*docRec) bool, emit func(uint64, half)) error {
	f.bs = f.bs[:0]
	var b uint64
	for bs(&b) {
		f.bs = append(f.bs, b)
	}
	if len(f.bs) == 0 {
		return nil
	}
	var d docRec
	if !docs(&d) {
		return fmt.Errorf("neardup-beam: candidate pair names document %#x, which has no sketch", a)
	}
	slices.Sort(f.bs)
	for i := 0; i < len(f.bs); {
		j := i + 1
		for j < len(f.bs) && f.bs[j] == f.bs[i] {
			j++
		}
		cCandidates.Inc(ctx, 1)
		emit(f.bs[i], half{A: a, AID: d.ID, Keys: int64(j - i), Sketch: d.Sketch, Features: d.Features})
		i = j
	}
	return nil
}

// verifyFn meets the candidates of document B, each carrying A's sketch
// (and feature set), with B's, and keeps the pairs the index's
// verification accepts (index.Index.Verify: the exact Jaccard when both
// feature sets are there, else the estimate within the slack). With
// Candidates set it also emits every candidate pair, accepted or not, as a
// line of candidates/*.jsonl.
type verifyFn struct {
	Cfg        Config
	Candidates bool
	sk         *sketcher
}

func (f *verifyFn) Setup() error {
	var err error
	f.sk, err = newSketcher(f.Cfg)
	return err
}

func (f *verifyFn) ProcessElement(ctx context.Context, b uint64, halves func(*half) bool, docs func(*docRec) bool, emit func(pairRec), emitCand func(line)) error {
	var d docRec
	have := false
	var h half
	for halves(&h) {
		if !have {
			if !docs(&d) {
				return fmt.Errorf("neardup-beam: candidate pair names document %#x, which has no sketch", b)
			}
			have = true
		}
		if f.Cfg.exact() && (h.Features == nil || d.Features == nil) {
			return fmt.Errorf("neardup-beam: exact verification of %q and %q without their feature sets", h.AID, d.ID)
		}
		sim, est, exact, ok, err := f.sk.verify(h.Sketch, d.Sketch, h.Features, d.Features)
		if err != nil {
			return fmt.Errorf("neardup-beam: comparing %#x and %#x: %w", h.A, b, err)
		}
		if ok {
			cPairs.Inc(ctx, 1)
			emit(pairRec{A: h.A, B: b, AID: h.AID, BID: d.ID, Similarity: sim, Keys: h.Keys})
		}
		if f.Candidates {
			c := CandidateJSON{A: h.AID, B: d.ID, SeqA: h.A, SeqB: b, Keys: h.Keys, Estimate: round6(est), Accepted: ok}
			if exact {
				x := round6(sim)
				c.Exact = &x
			}
			j, err := json.Marshal(c)
			if err != nil {
				return err
			}
			emitCand(line{Order: b, Text: string(j)})
		}
	}
	return nil
}

// edgeFn keeps the verified pairs that join clusters (Config.joins) as
// graph edges.
type edgeFn struct {
	Cfg Config
}

func (f *edgeFn) ProcessElement(p pairRec, emit func(uint64, uint64)) {
	if f.Cfg.joins(p.Similarity) {
		emit(p.A, p.B)
	}
}

// CandidateJSON is one line of candidates/*.jsonl (Options.Candidates):
// a distinct candidate pair, the band keys it shares within the MaxRun
// windows, its estimate and whether it was accepted.
type CandidateJSON struct {
	A        string   `json:"a"`
	B        string   `json:"b"`
	SeqA     uint64   `json:"seq_a"`
	SeqB     uint64   `json:"seq_b"`
	Keys     int64    `json:"keys"`
	Estimate float64  `json:"estimate"`
	Exact    *float64 `json:"exact,omitempty"` // the exact Jaccard, when verified exactly
	Accepted bool     `json:"accepted"`
}

// PairJSON is one line of pairs/*.jsonl: a verified pair (dedup's
// pairs.jsonl, without the standard errors).
type PairJSON struct {
	A          string  `json:"a"`
	B          string  `json:"b"`
	Similarity float64 `json:"similarity"`
	Keys       int64   `json:"keys,omitempty"`
	Kind       string  `json:"kind"` // "identical" or "near"
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func pairLineFn(p pairRec) line {
	kind := "near"
	if p.Identical {
		kind = "identical"
	}
	b, _ := json.Marshal(PairJSON{A: p.AID, B: p.BID, Similarity: round6(p.Similarity), Keys: p.Keys, Kind: kind})
	return line{Order: p.B, Text: string(b)}
}

// needFn sends both documents of a candidate pair to the re-reading of
// their inputs (featuresFn), as (input, position in the input).
func needFn(a, b uint64, emit func(int, int64)) {
	emit(orderFile(a), orderIndex(a))
	emit(orderFile(b), orderIndex(b))
}

// featuresFn reads one input again (as keptFn does) and emits, for every
// document of it named by a candidate pair, the record verification needs:
// its id, sketch and sorted feature set, keyed by order. Only these
// documents' feature sets enter the shuffle; an input without candidate
// documents is not read. Memory: the positions asked for.
type featuresFn struct {
	Cfg Config
	sk  *sketcher
}

func (f *featuresFn) Setup() error {
	var err error
	f.sk, err = newSketcher(f.Cfg)
	return err
}

func (f *featuresFn) ProcessElement(ctx context.Context, idx int, refs func(*fileRef) bool, needs func(*int64) bool, emit func(uint64, docRec)) error {
	want := map[int64]bool{}
	var p int64
	for needs(&p) {
		want[p] = true
	}
	if len(want) == 0 {
		return nil
	}
	var ref fileRef
	if !refs(&ref) {
		return fmt.Errorf("neardup-beam: candidate documents of unknown input %d", idx)
	}
	var i int64
	found := 0
	k := f.sk.cfg.K
	_, err := readInput(ctx, f.Cfg, ref.Path, func() (io.ReadCloser, error) { return openFS(ctx, ref.Path) },
		func(r record) error {
			defer func() { i++ }()
			if !want[i] {
				return nil
			}
			found++
			values, ids := f.sk.features(make([]uint64, 0, k), r.body(), r.html())
			if ids == nil {
				ids = []uint64{}
			}
			o := order(idx, i)
			emit(o, docRec{Order: o, ID: r.id(), Sketch: values, Features: ids})
			return nil
		}, func(rejectRec) {})
	if err != nil {
		return fmt.Errorf("neardup-beam: %s: %w", ref.Path, err)
	}
	if found != len(want) {
		return fmt.Errorf("neardup-beam: %s: %d of %d candidate documents not found on reading it again (did the input change?)", ref.Path, len(want)-found, len(want))
	}
	return nil
}

// Candidates computes the candidate pairs of the unique documents
// (PCollection<KV<uint64, docRec>> keyed by order) and verifies them.
// Under exact verification (the default) the documents of the candidate
// pairs are read again from the inputs (files, PCollection<KV<int,
// fileRef>>) to give their feature sets, which then travel with the
// pairs; the other documents' features are never shuffled. It returns the
// verified pairs (PCollection<pairRec>), the hot keys
// (PCollection<hotKey>), the distinct candidate pairs on their way to
// verification (PCollection<KV<uint64, half>>, for counting), the
// candidate lines (PCollection<line>, empty unless o.Candidates) and the
// band-key rows by shard (PCollection<KV<int, bandfile.Row>>, empty unless
// o.ExportBands).
func Candidates(s beam.Scope, o Options, unique, files beam.PCollection) (pairs, hot, halves, candLines, rows beam.PCollection) {
	s = s.Scope("Candidates")
	cfg := o.Config
	shards := 0
	if o.ExportBands {
		shards = o.Shards
	}
	keys, rows := beam.ParDo2(s, &bandsFn{Cfg: cfg, Shards: shards}, unique)
	m := meter{On: o.ShuffleBytes}
	cands, hot := beam.ParDo2(s, &runFn{MaxRun: cfg.withDefaults().MaxRun}, m.gbk(s, "band_keys", keys))
	docs := unique
	if cfg.exact() {
		needs := beam.ParDo(s, needFn, cands)
		docs = beam.ParDo(s, &featuresFn{Cfg: cfg}, m.cogbk(s, "features", files, needs))
	}
	halves = beam.ParDo(s, &joinAFn{}, m.cogbk(s, "join_a", cands, docs))
	pairs, candLines = beam.ParDo2(s, &verifyFn{Cfg: cfg, Candidates: o.Candidates}, m.cogbk(s, "join_b", halves, docs))
	return pairs, hot, halves, candLines, rows
}
