package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
)

// levels are the target exact Jaccard similarities of planted
// near-duplicates; a variant takes one at random.
var levels = []float64{0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99}

// genConfig determines a corpus completely: every document is a pure
// function of (genConfig, its index), so any document can be regenerated
// later (for exact Jaccard of reported pairs) without keeping the corpus.
type genConfig struct {
	N        int     `json:"n"`
	Words    int     `json:"words"`
	Vocab    int     `json:"vocab"`
	Zipf     float64 `json:"zipf_s"`
	VarFrac  float64 `json:"variant_fraction"`
	Queries  int     `json:"queries"`
	Seed     uint64  `json:"seed"`
	Compress string  `json:"compress"`
}

// plant is a planted near-duplicate pair: document B is a variant of base A,
// with the exact Jaccard of their 5-shingle sets as neardup's feature
// extractor sees them.
type plant struct {
	A      int     `json:"a"`
	B      int     `json:"b"`
	Target float64 `json:"target"`
	Exact  float64 `json:"exact"`
}

// manifest is written beside a generated corpus so -keep can reuse it.
type manifest struct {
	Config     genConfig `json:"config"`
	Corpus     string    `json:"corpus"`
	Queries    string    `json:"queries"`
	Bytes      int64     `json:"bytes"`
	GenSeconds float64   `json:"gen_seconds"`
	Plants     []plant   `json:"plants"`       // inside the corpus
	QPlants    []plant   `json:"query_plants"` // B is query index; A a corpus doc
}

// generator makes documents. It is safe for concurrent use (read-only after
// construction).
type generator struct {
	cfg   genConfig
	vocab []string
	cdf   []float64
	guide []int32 // guide[g] = smallest rank r with cdf[r] >= g/len(guide)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func hash3(seed, a, b uint64) uint64 { return splitmix(splitmix(seed^splitmix(a)) ^ b) }

func newGenerator(cfg genConfig) *generator {
	g := &generator{cfg: cfg}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x766f636162))
	seen := make(map[string]bool, cfg.Vocab)
	buf := make([]byte, 0, 16)
	for len(g.vocab) < cfg.Vocab {
		// Frequent (low-rank) words are shorter, as in text.
		l := min(2+int(math.Log10(float64(len(g.vocab)+1))*1.5)+r.IntN(4), 11)
		buf = buf[:0]
		for range l {
			buf = append(buf, byte('a'+r.IntN(26)))
		}
		if !seen[string(buf)] {
			seen[string(buf)] = true
			g.vocab = append(g.vocab, string(buf))
		}
	}
	g.cdf = make([]float64, cfg.Vocab)
	sum := 0.0
	for i := range g.cdf {
		sum += 1 / math.Pow(float64(i+1), cfg.Zipf)
		g.cdf[i] = sum
	}
	for i := range g.cdf {
		g.cdf[i] /= sum
	}
	g.guide = make([]int32, 1<<16)
	r0 := 0
	for i := range g.guide {
		u := float64(i) / float64(len(g.guide))
		for r0 < len(g.cdf)-1 && g.cdf[r0] < u {
			r0++
		}
		g.guide[i] = int32(r0)
	}
	return g
}

// draw returns a Zipf rank: exact inversion of the CDF, started from the
// guide table so it takes a few steps on average.
func (g *generator) draw(r *rand.Rand) int {
	u := r.Float64()
	k := int(g.guide[int(u*float64(len(g.guide)))])
	for k < len(g.cdf)-1 && g.cdf[k] < u {
		k++
	}
	return k
}

// isVariant reports whether corpus document i is a planted variant.
func (g *generator) isVariant(i int) bool {
	if i == 0 {
		return false
	}
	return float64(hash3(g.cfg.Seed, 0x76617269, uint64(i))>>11)/(1<<53) < g.cfg.VarFrac
}

// baseOf returns the base document of variant i (an earlier non-variant).
func (g *generator) baseOf(i int) int {
	j := int(hash3(g.cfg.Seed, 0x62617365, uint64(i)) % uint64(i))
	for g.isVariant(j) {
		j = g.baseOf(j)
	}
	return j
}

// target returns the target Jaccard of variant key v.
func (g *generator) target(v uint64) float64 {
	return levels[hash3(g.cfg.Seed, 0x74617267, v)%uint64(len(levels))]
}

// baseWords appends the words (ranks) of non-variant document i.
func (g *generator) baseWords(dst []int32, i int) []int32 {
	r := rand.New(rand.NewPCG(g.cfg.Seed, uint64(i)))
	for range g.cfg.Words {
		dst = append(dst, int32(g.draw(r)))
	}
	return dst
}

// variantWords turns base into a variant aimed at Jaccard target, keyed by
// v: m words at distinct random positions are substituted by other Zipf
// words. With n words and m random substitutions a 5-shingle survives with
// probability s ≈ (1 − m/n)^5, and two equal-size sets sharing a fraction
// s have J = s/(2 − s); so m = n(1 − s^(1/5)) with s = 2J/(1 + J). The
// achieved J is then computed exactly.
func (g *generator) variantWords(base []int32, target float64, v uint64) []int32 {
	r := rand.New(rand.NewPCG(g.cfg.Seed^0x5eed, v))
	n := len(base)
	s := 2 * target / (1 + target)
	m := int(math.Round(float64(n) * (1 - math.Pow(s, 0.2))))
	m = max(m, 1)
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = int32(i)
	}
	for i := 0; i < m; i++ { // partial Fisher–Yates
		j := i + r.IntN(n-i)
		pos[i], pos[j] = pos[j], pos[i]
		w := int32(g.draw(r))
		for w == base[pos[i]] {
			w = int32(g.draw(r))
		}
		base[pos[i]] = w
	}
	return base
}

// words appends the words of corpus document i.
func (g *generator) words(dst []int32, i int) []int32 {
	if !g.isVariant(i) {
		return g.baseWords(dst, i)
	}
	b := g.baseOf(i)
	dst = g.baseWords(dst, b)
	return g.variantWords(dst, g.target(uint64(i)), uint64(i))
}

// queryWords appends the words of held-out query q and returns its base.
func (g *generator) queryWords(dst []int32, q int) ([]int32, int) {
	v := uint64(1)<<40 | uint64(q)
	b := int(hash3(g.cfg.Seed, 0x71756572, uint64(q)) % uint64(g.cfg.N))
	for g.isVariant(b) {
		b = g.baseOf(b)
	}
	dst = g.baseWords(dst, b)
	return g.variantWords(dst, g.target(v), v), b
}

func (g *generator) text(dst []byte, ws []int32) []byte {
	for j, w := range ws {
		if j > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, g.vocab[w]...)
	}
	return dst
}

func docName(i int) string   { return fmt.Sprintf("d%08d", i) }
func queryName(q int) string { return fmt.Sprintf("q%07d", q) }

// parseDocName returns the index of a corpus document name.
func parseDocName(s string) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(s, "d%08d", &i); err != nil {
		return 0, false
	}
	return i, true
}

// exacter computes exact 5-shingle Jaccard with neardup's extractor (the
// features dedup sees). Not safe for concurrent use.
type exacter struct {
	g      *generator
	ex     *feature.Extractor
	fs     []feature.Feature
	ws     []int32
	txt    []byte
	ia, ib []uint64
}

func newExacter(g *generator) *exacter {
	ex, err := feature.New(feature.Options{})
	if err != nil {
		panic(err)
	}
	return &exacter{g: g, ex: ex}
}

func (e *exacter) ids(dst []uint64, txt []byte) []uint64 {
	e.fs = e.ex.Extract(e.fs[:0], txt)
	dst = dst[:0]
	for _, f := range e.fs {
		dst = append(dst, f.ID)
	}
	slices.Sort(dst)
	return dst
}

// docIDs returns the sorted feature ids of corpus document i (valid until
// the next call with the same buffer).
func (e *exacter) docIDs(dst []uint64, i int) []uint64 {
	e.ws = e.g.words(e.ws[:0], i)
	e.txt = e.g.text(e.txt[:0], e.ws)
	return e.ids(dst, e.txt)
}

// pairJ returns the exact Jaccard of corpus documents a and b.
func (e *exacter) pairJ(a, b int) float64 {
	e.ia = e.docIDs(e.ia, a)
	e.ib = e.docIDs(e.ib, b)
	return sketch.ExactJaccard(e.ia, e.ib)
}

// generate writes the corpus (JSONL, plain or zstd) and the held-out queries
// into dir with two goroutines and returns the manifest.
func generate(dir string, cfg genConfig, logw io.Writer) (*manifest, error) {
	start := time.Now()
	g := newGenerator(cfg)
	ext := ".jsonl"
	if cfg.Compress == "zstd" {
		ext = ".jsonl.zst"
	}
	m := &manifest{Config: cfg, Corpus: filepath.Join(dir, "corpus"+ext), Queries: filepath.Join(dir, "queries.jsonl")}
	nb, plants, err := writeDocs(m.Corpus, cfg, g, cfg.N, false, logw)
	if err != nil {
		return nil, err
	}
	m.Bytes, m.Plants = nb, plants
	if _, m.QPlants, err = writeDocs(m.Queries, genConfig{Compress: "none"}, g, cfg.Queries, true, nil); err != nil {
		return nil, err
	}
	m.GenSeconds = time.Since(start).Seconds()
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return m, os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644)
}

type chunkOut struct {
	n      int
	buf    []byte
	plants []plant
}

// writeDocs writes n documents (corpus documents, or queries) to path.
func writeDocs(path string, cfg genConfig, g *generator, n int, queries bool, logw io.Writer) (int64, []plant, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var zw *zstd.Encoder
	if cfg.Compress == "zstd" {
		zw, err = zstd.NewWriter(bw, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return 0, nil, err
		}
		w = zw
	}
	const chunk = 512
	nChunks := (n + chunk - 1) / chunk
	const workers = 2
	out := make(chan chunkOut, 4*workers)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := newExacter(g)
			var ws, bws []int32
			var ia, ib []uint64
			var tb []byte
			for {
				mu.Lock()
				c := next
				next++
				mu.Unlock()
				if c >= nChunks {
					return
				}
				co := chunkOut{n: c}
				for i := c * chunk; i < min((c+1)*chunk, n); i++ {
					var name string
					base := -1
					if queries {
						ws, base = g.queryWords(ws[:0], i)
						name = queryName(i)
					} else {
						ws = g.words(ws[:0], i)
						name = docName(i)
						if g.isVariant(i) {
							base = g.baseOf(i)
						}
					}
					start := len(co.buf)
					co.buf = append(co.buf, `{"id":"`...)
					co.buf = append(co.buf, name...)
					co.buf = append(co.buf, `","text":"`...)
					co.buf = g.text(co.buf, ws)
					txt := co.buf[start+len(`{"id":"","text":"`)+len(name):]
					if base >= 0 {
						ia = e.ids(ia, txt)
						bws = g.baseWords(bws[:0], base)
						tb = g.text(tb[:0], bws)
						ib = e.ids(ib, tb)
						v := uint64(i)
						if queries {
							v = uint64(1)<<40 | uint64(i)
						}
						co.plants = append(co.plants, plant{A: base, B: i, Target: g.target(v), Exact: sketch.ExactJaccard(ib, ia)})
					}
					co.buf = append(co.buf, "\"}\n"...)
				}
				out <- co
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	pending := map[int]chunkOut{}
	want := 0
	var bytes int64
	var plants []plant
	var werr error
	last := time.Now()
	for co := range out {
		pending[co.n] = co
		for {
			p, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			want++
			if werr == nil {
				_, werr = w.Write(p.buf)
			}
			bytes += int64(len(p.buf))
			plants = append(plants, p.plants...)
			if logw != nil && time.Since(last) > 10*time.Second {
				last = time.Now()
				fmt.Fprintf(logw, "generate: %d/%d documents, %.1f GB\n", want*chunk, n, float64(bytes)/1e9)
			}
		}
	}
	if werr != nil {
		return 0, nil, werr
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return 0, nil, err
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, nil, err
	}
	return bytes, plants, f.Close()
}

// loadOrGenerate reuses the corpus in dir if its manifest matches cfg, and
// generates it there otherwise.
func loadOrGenerate(dir string, cfg genConfig, logw io.Writer) (*manifest, bool, error) {
	if b, err := os.ReadFile(filepath.Join(dir, "manifest.json")); err == nil {
		var m manifest
		if json.Unmarshal(b, &m) == nil && m.Config == cfg {
			if _, err := os.Stat(m.Corpus); err == nil {
				return &m, true, nil
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	m, err := generate(dir, cfg, logw)
	return m, false, err
}
