// Package dedup provides the near-duplicate detection pipeline: it reads a
// corpus, drops exact duplicates, extracts features and sketches with all
// cores, indexes the sketches, verifies candidate pairs, clusters them, and
// accounts for every record read as kept, duplicate or rejected.
//
// The stages follow DESIGN.md's data flow and the book's duplicate
// suppression (ch. 3.2, 6.1): an exact fingerprint first (identical bodies
// never reach the sampler), then features (package feature) and a
// consistent-sampling sketch (package sample), lookup keys from
// supershingles (package lsh) posted in a store (package index over package
// store), candidates verified by the full-sketch estimate and, when the
// feature sets fit in memory, by exact Jaccard, and finally union-find
// clustering with a guard against chaining (package cluster). Each stage is
// a library package; this one only wires them and keeps the books.
//
// The pipeline is deterministic: the same input and options give the same
// pairs, clusters and kept set whatever the number of workers, because
// documents are numbered in input order and every decision is made from
// that order, never from scheduling.
package dedup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/rabin"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/weighted"
)

// Rejection reasons added by the pipeline to the corpus reader's.
const (
	// ReasonDuplicateID: a record whose id was already used by an earlier
	// record of the same run.
	ReasonDuplicateID = "duplicate-id"
)

// ExactMode says when candidate pairs are verified by exact Jaccard.
type ExactMode uint8

// Exact verification modes.
const (
	// ExactAuto keeps feature sets in memory and verifies exactly when the
	// corpus's features fit in Options.ExactBudget; otherwise the sketch
	// estimate decides.
	ExactAuto ExactMode = iota
	// ExactAlways always keeps feature sets and verifies exactly.
	ExactAlways
	// ExactNever verifies by the sketch estimate only.
	ExactNever
)

// Options configure Run. The zero value (with Inputs set) deduplicates at
// threshold 0.8 with OPH sketches of 128 samples, the default feature
// configuration (5-word shingles), an in-memory store, and all cores.
type Options struct {
	// Inputs are the files and directories to read ("-" for stdin).
	Inputs []string
	// Corpus configures the readers.
	Corpus corpus.Options
	// Features configures feature extraction. The default is
	// feature.Options{} (5-word shingles of lower-cased words, as a set).
	Features feature.Options
	// Algorithm is the sampler. The default is sketch.OPH. The weighted
	// samplers sketch.CWS and sketch.ICWS estimate weighted Jaccard
	// (Σmin/Σmax) of the weights Features gives (counts or TF-IDF), and
	// exact verification is then weighted too.
	Algorithm sketch.Algorithm
	// K is the number of samples. The default is 128.
	K int
	// Seed selects the random functions. The default is 0.
	Seed uint64
	// Threshold is the similarity at or above which two documents are
	// near-duplicates. The default is 0.8.
	Threshold float64
	// LSH are the supershingle parameters. The default, nil, is
	// ChooseLSH(Threshold, K, Seed).
	LSH *lsh.Params
	// Store holds the index. The default, nil, indexes in memory by a
	// sort-join: for each lookup key in turn, every document's key is
	// computed and sorted, and documents in runs of equal keys become
	// candidates (8 bytes per document per pass, nothing kept between
	// passes). With a store, documents are added to an index.Index and
	// queried; documents already in a persistent store (an earlier run)
	// are matched too: a document near one of them is a duplicate of it.
	Store store.Store
	// Slack widens verification by sketch estimate (pairs without exact
	// Jaccard; see index.Accept): a pair is accepted when its estimate is
	// at least Threshold − Slack·σ, σ = sqrt(t(1−t)/K). The default,
	// index.DefaultSlack = 1.645, keeps a pair exactly at the threshold
	// with probability 0.95 instead of 0.5. A negative value means none
	// (estimate >= Threshold). Exact verification is never widened.
	Slack float64
	// Exact selects exact verification. The default is ExactAuto.
	Exact ExactMode
	// BloomFP is the false-positive rate of the Bloom filter in front of
	// the exact fingerprints kept in Store (ignored without a Store). The
	// filter is sized for four times the documents of the run (at least
	// 2^20). The default is 1e-6; a false positive costs one store lookup.
	BloomFP float64
	// ExactBudget bounds the feature ids kept in memory for ExactAuto. The
	// default is 64M ids (512 MiB).
	ExactBudget int64
	// Workers is the number of extraction and query goroutines. The
	// default is runtime.GOMAXPROCS(0).
	Workers int
	// Cluster configures clustering.
	Cluster ClusterOptions
	// Progress receives progress bars or log lines. The default, zero,
	// reports nothing.
	Progress progress.Options
	// OnReject, if not nil, is called for every rejected record (by the
	// reader or the pipeline).
	OnReject func(*corpus.RecordError)
}

func (o *Options) ensureDefaults() {
	if o.Algorithm == sketch.Invalid {
		o.Algorithm = sketch.OPH
	}
	if o.K == 0 {
		o.K = 128
	}
	if o.Threshold == 0 {
		o.Threshold = 0.8
	}
	if o.Slack == 0 {
		o.Slack = index.DefaultSlack
	}
	if o.BloomFP == 0 {
		o.BloomFP = 1e-6
	}
	if o.ExactBudget == 0 {
		o.ExactBudget = 64 << 20
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	o.Cluster.ensureDefaults()
}

// Validate reports every problem of o at once.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Inputs) == 0 {
		errs = append(errs, errors.New("no inputs"))
	}
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		errs = append(errs, fmt.Errorf("threshold %v outside (0, 1]", o.Threshold))
	}
	if !o.Algorithm.SlotWise() {
		errs = append(errs, fmt.Errorf("sampler %v does not give slot-wise samples, which supershingles need; use oph, minhash, superminhash, prefix or lazybits (sets), cws or icws (weighted)", o.Algorithm))
	}
	if err := o.Features.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Cluster.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("dedup: %w", errors.Join(errs...))
	}
	return nil
}

// Doc is what the pipeline keeps of a document.
type Doc struct {
	// Seq is the document's position among the records the reader yielded.
	Seq int
	// Name is the document's id.
	Name string
	// Bytes is the length of its body.
	Bytes int
	// Key is the value of the cluster policy's metadata field ("" if none).
	Key string
	// Fingerprint is the Rabin fingerprint of the body.
	Fingerprint uint64
	// ExactOf is the Seq of the earlier document with an identical body,
	// -2 for an identical document stored by an earlier run, or -1.
	ExactOf int
	// Shingles is the number of distinct features.
	Shingles int

	sketch   []uint64
	features []uint64          // sorted ids, when verifying exactly (unweighted)
	wfeat    []feature.Feature // sorted by id, when verifying exactly (weighted)
}

// Pair is a verified near-duplicate pair. A is the earlier document (or, for
// a match against a stored document from an earlier run, the stored one).
type Pair struct {
	A, B string
	// SeqA and SeqB are the documents' positions in this run; SeqA is -1
	// for a stored document from an earlier run.
	SeqA, SeqB int
	// Similarity is the exact Jaccard when Exact is true, else the
	// estimate.
	Similarity float64
	// Estimate and StdErr are the sketch estimate and its standard error
	// (for exact duplicates: 1 and 0).
	Estimate, StdErr float64
	// Exact says whether Similarity is an exact Jaccard.
	Exact bool
	// Identical marks exact duplicates (identical bodies).
	Identical bool
	// Keys is the number of LSH keys the two share.
	Keys int
}

// Summary accounts for every record: Read = Kept + Duplicates + Rejected.
type Summary struct {
	Read       int64            `json:"read"`
	Kept       int64            `json:"kept"`
	Duplicates int64            `json:"duplicates"`
	Exact      int64            `json:"exact_duplicates"`
	Near       int64            `json:"near_duplicates"`
	Rejected   int64            `json:"rejected"`
	RejectedBy map[string]int64 `json:"rejected_by,omitempty"`
	Warnings   int64            `json:"warnings"`
	Skipped    int64            `json:"skipped"`
	Bytes      int64            `json:"bytes"`
	Pairs      int              `json:"pairs"`
	Candidates int64            `json:"candidates"`
	Clusters   int              `json:"clusters"`
	Largest    int              `json:"largest_cluster"`
	ExactCheck bool             `json:"exact_verification"`
	Bloom      *BloomSummary    `json:"fingerprint_filter,omitempty"`
	Config     Config           `json:"config"`
	Stages     []Stage          `json:"stages"`
	Seconds    float64          `json:"seconds"`
}

// BloomSummary describes the Bloom filter in front of the stored exact
// fingerprints (store mode).
type BloomSummary struct {
	Bits           uint  `json:"bits"`
	Probes         uint  `json:"probes"`
	Lookups        int64 `json:"confirming_lookups"`
	FalsePositives int64 `json:"false_positives"`
}

// Stage is the time one stage took.
type Stage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Items   int64   `json:"items"`
}

// Config records the parameters a run used.
type Config struct {
	Sampler   string     `json:"sampler"`
	K         int        `json:"k"`
	Seed      uint64     `json:"seed"`
	Threshold float64    `json:"threshold"`
	LSH       lsh.Params `json:"lsh"`
	Features  string     `json:"features"`
}

// Result is the outcome of Run.
type Result struct {
	Summary Summary
	// Docs are the documents yielded by the reader, in input order,
	// except those rejected by the pipeline (Docs[i].Seq is not always i).
	Docs []Doc
	// Pairs are the verified pairs, exact duplicates included, sorted by
	// (SeqB, SeqA).
	Pairs []Pair
	// Clusters are the clusters of two or more documents.
	Clusters []Cluster
	// Duplicate[seq] reports whether the document at Seq seq is dropped.
	Duplicate map[int]bool
	// Scheme is the LSH scheme used (for S-curves in reports).
	Scheme lsh.Params
}

// Run deduplicates the inputs. Bad records are counted and reported to
// OnReject; only a failure of the run itself (an unreadable store, a
// cancelled context) is an error.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.ensureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	featOpts := o.Features
	smp, err := sample.New(sample.Config{Algorithm: o.Algorithm, K: o.K, Seed: o.Seed, Features: featOpts})
	if err != nil {
		return nil, err
	}
	params, err := chooseLSH(o)
	if err != nil {
		return nil, err
	}
	hdr := smp.Header()
	var x *index.Index
	prior := false // the store held an index before this run
	if o.Store != nil {
		if _, _, prior, err = index.Stored(o.Store); err != nil {
			return nil, fmt.Errorf("dedup: %w", err)
		}
		x, err = index.Open(o.Store, index.Config{Header: hdr, LSH: params, Threshold: o.Threshold, Slack: o.Slack})
		if err != nil {
			return nil, fmt.Errorf("dedup: %w", err)
		}
	}
	scheme, err := lsh.New(params)
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	res := &Result{Duplicate: map[int]bool{}, Scheme: params}
	var storeSeconds float64 // written by the background adds before addDone
	sum := &res.Summary
	sum.Config = Config{Sampler: o.Algorithm.String(), K: o.K, Seed: o.Seed, Threshold: o.Threshold, LSH: params, Features: featOpts.String()}

	// Stage 1: read, fingerprint, extract, sketch.
	t0 := time.Now()
	docs, rstats, err := readAndSketch(ctx, o, smp)
	if err != nil {
		return nil, err
	}
	sum.Read = rstats.Read
	sum.Rejected = rstats.Rejected
	sum.RejectedBy = rstats.RejectedBy
	sum.Warnings = rstats.Warnings
	sum.Skipped = rstats.Skipped
	sum.Bytes = rstats.Bytes
	sum.Stages = append(sum.Stages, Stage{"sketch", time.Since(t0).Seconds(), int64(len(docs.docs))})

	// Exact duplicates: a map in memory, or a Bloom filter and the store.
	res.Docs = docs.docs
	var unique []int // indexes into res.Docs of documents to index
	var exactPairs []Pair
	if o.Store == nil {
		unique, exactPairs = exactInMemory(res.Docs)
	} else {
		var bs bloomStats
		capacity := uint(max(4*len(res.Docs), 1<<20))
		unique, exactPairs, bs, err = exactInStore(o.Store, res.Docs, capacity, o.BloomFP)
		if err != nil {
			return nil, fmt.Errorf("dedup: %w", err)
		}
		sum.Bloom = &BloomSummary{Bits: bs.Bits, Probes: bs.Probes, Lookups: bs.Lookups, FalsePositives: bs.FalsePositives}
	}
	res.Pairs = append(res.Pairs, exactPairs...)
	sum.ExactCheck = docs.exact

	// Stages 2 and 3: index and verify. Pairs within this run come from
	// the in-memory sort-join in every mode. With a store, documents of
	// earlier runs are matched by querying it before this run's documents
	// are added, and the adds run in the background meanwhile.
	var near []Pair
	var addDone chan error
	if x != nil {
		if prior {
			t0 = time.Now()
			stored, cands, err := queryStored(ctx, o, x, hdr, res.Docs, unique)
			if err != nil {
				return nil, err
			}
			near = append(near, stored...)
			sum.Candidates += cands
			sum.Stages = append(sum.Stages, Stage{"query-store", time.Since(t0).Seconds(), int64(len(unique))})
		}
		addDone = make(chan error, 1)
		go func() {
			t := time.Now()
			quiet := o
			quiet.Progress = progress.Options{} // its bar would garble the others'
			err := addAll(ctx, quiet, x, hdr, res.Docs, unique)
			storeSeconds = time.Since(t).Seconds()
			addDone <- err
		}()
	}
	t0 = time.Now()
	cand, shared, err := batchCandidates(ctx, o, scheme, res.Docs, unique)
	if err != nil {
		return nil, waitAdds(addDone, err)
	}
	sum.Candidates += int64(len(cand))
	sum.Stages = append(sum.Stages, Stage{"index", time.Since(t0).Seconds(), int64(len(unique))})
	t0 = time.Now()
	local, err := batchVerify(ctx, o, hdr, res.Docs, unique, cand, shared)
	if err != nil {
		return nil, waitAdds(addDone, err)
	}
	near = append(near, local...)
	sum.Stages = append(sum.Stages, Stage{"verify", time.Since(t0).Seconds(), int64(len(cand))})
	res.Pairs = append(res.Pairs, near...)
	sort.Slice(res.Pairs, func(i, j int) bool {
		a, b := res.Pairs[i], res.Pairs[j]
		if a.SeqB != b.SeqB {
			return a.SeqB < b.SeqB
		}
		if a.SeqA != b.SeqA {
			return a.SeqA < b.SeqA
		}
		return a.A < b.A
	})
	sum.Pairs = len(res.Pairs)

	// Stage 4: clusters (while the store may still be taking adds).
	t0 = time.Now()
	if res.Clusters, err = buildClusters(o.Cluster, o.Threshold, res.Docs, res.Pairs, res.Duplicate); err != nil {
		return nil, waitAdds(addDone, fmt.Errorf("dedup: %w", err))
	}
	sum.Stages = append(sum.Stages, Stage{"cluster", time.Since(t0).Seconds(), int64(len(res.Pairs))})
	sum.Clusters = len(res.Clusters)
	if addDone != nil {
		if err := <-addDone; err != nil {
			return nil, err
		}
		sum.Stages = append(sum.Stages, Stage{"store", storeSeconds, int64(len(unique))})
	}
	for _, c := range res.Clusters {
		sum.Largest = max(sum.Largest, len(c.Members))
	}
	for i := range res.Docs {
		d := &res.Docs[i]
		switch {
		case res.Duplicate[d.Seq] && d.ExactOf != -1:
			sum.Exact++
		case res.Duplicate[d.Seq]:
			sum.Near++
		}
	}
	sum.Duplicates = sum.Exact + sum.Near
	sum.Kept = int64(len(res.Docs)) - sum.Duplicates
	// The pipeline's own rejections (duplicate ids) were counted in
	// readAndSketch; the identity must hold.
	if sum.Read != sum.Kept+sum.Duplicates+sum.Rejected {
		return nil, fmt.Errorf("dedup: accounting error: read %d != kept %d + duplicates %d + rejected %d", sum.Read, sum.Kept, sum.Duplicates, sum.Rejected)
	}
	sum.Seconds = time.Since(start).Seconds()
	return res, nil
}

// accept reports whether a verified pair is a near-duplicate (index.Accept).
func (o *Options) accept(p Pair) bool {
	return index.Accept(o.Threshold, o.Slack, o.K, p.Similarity, p.Exact)
}

// chooseLSH returns o.LSH or the default choice for o.Threshold and o.K.
func chooseLSH(o Options) (lsh.Params, error) {
	if o.LSH != nil {
		p := *o.LSH
		if p.K() > o.K {
			return p, fmt.Errorf("dedup: LSH scheme %v needs %d samples, sketches have k = %d", p, p.K(), o.K)
		}
		return p, nil
	}
	return ChooseLSH(o.Threshold, o.K, o.Seed)
}

// ChooseLSH returns the supershingle parameters neardup uses by default for
// a threshold and k samples: lsh.Choose with false negatives weighted 49
// times more than false positives (a missed duplicate cannot be recovered;
// an extra candidate only costs a verification), which puts P(threshold)
// near 0.98 at every threshold.
func ChooseLSH(threshold float64, k int, seed uint64) (lsh.Params, error) {
	c, err := lsh.Choose(lsh.ChooseOptions{Threshold: math.Min(threshold, 0.99), FPWeight: 0.02, FNWeight: 0.98, MaxSamples: k, Seed: seed})
	if err != nil {
		return lsh.Params{}, fmt.Errorf("dedup: %w", err)
	}
	return c.Params, nil
}

type sketched struct {
	docs  []Doc
	exact bool
}

// rawDoc is a document handed to the workers.
type rawDoc struct {
	seq  int
	name string
	body []byte
	key  string
	html bool // the reader knows the body is HTML (HTML files, WARC responses)
}

type job struct {
	n    int // batch number
	docs []rawDoc
	out  []Doc
}

// readAndSketch reads every input and sketches the documents with
// o.Workers goroutines, returning them in input order.
func readAndSketch(ctx context.Context, o Options, smp sample.Sampler) (*sketched, corpus.Stats, error) {
	copts := o.Corpus
	var pipelineRejects []*corpus.RecordError
	userReject := copts.OnReject
	copts.OnReject = func(e *corpus.RecordError) {
		if userReject != nil {
			userReject(e)
		}
		if o.OnReject != nil {
			o.OnReject(e)
		}
	}
	r, err := corpus.Open(o.Inputs, copts)
	if err != nil {
		return nil, corpus.Stats{}, fmt.Errorf("dedup: %w", err)
	}
	defer r.Close()
	bar := progress.New(o.Progress, "sketch", r.TotalBytes(), "bytes")

	weightedAlg := o.Algorithm.IsWeighted()
	exactOn := o.Exact != ExactNever // guarded by mu
	var kept int64                   // feature ids kept for exact verification; guarded by mu
	var mu sync.Mutex

	jobs := make(chan *job, 2*o.Workers)
	done := make(chan *job, 2*o.Workers)
	var wg sync.WaitGroup
	werr := make([]error, o.Workers)
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ex, err := feature.New(o.Features)
			exHTML := ex
			if err == nil && o.Features.Format == feature.FormatAuto {
				ho := o.Features
				ho.Format = feature.FormatHTML
				exHTML, err = feature.New(ho)
			}
			if err != nil {
				werr[w] = err
				for j := range jobs {
					done <- j
				}
				return
			}
			s := smp
			if c, ok := smp.(sample.Cloner); ok {
				s = c.Clone()
			}
			fp := rabin.New(rabin.DefaultPoly)
			var fs []feature.Feature
			for j := range jobs {
				j.out = make([]Doc, len(j.docs))
				for i, rd := range j.docs {
					if rd.html {
						fs = exHTML.Extract(fs[:0], rd.body)
					} else {
						fs = ex.Extract(fs[:0], rd.body)
					}
					d := &j.out[i]
					*d = Doc{Seq: rd.seq, Name: rd.name, Bytes: len(rd.body), Key: rd.key, Fingerprint: fp.Hash(rd.body), ExactOf: -1, Shingles: len(fs)}
					d.sketch = s.Sketch(make([]uint64, 0, o.K), fs)
					if o.Exact != ExactNever {
						mu.Lock()
						keep := exactOn && (o.Exact == ExactAlways || kept+int64(len(fs)) <= o.ExactBudget)
						if keep {
							kept += int64(len(fs))
						} else {
							exactOn = false
						}
						mu.Unlock()
						if keep && weightedAlg {
							d.wfeat = slices.Clone(fs)
							slices.SortFunc(d.wfeat, func(a, b feature.Feature) int { return cmp.Compare(a.ID, b.ID) })
						} else if keep {
							ids := make([]uint64, len(fs))
							for k, f := range fs {
								ids[k] = f.ID
							}
							slices.Sort(ids)
							d.features = ids
						}
					}
				}
				j.docs = nil
				done <- j
			}
		}(w)
	}

	// Reader: batches of documents, numbered.
	readErr := make(chan error, 1)
	go func() {
		defer close(jobs)
		names := make(map[string]struct{})
		seq, n := 0, 0
		const size = 64
		cur := &job{n: n}
		for r.Next() {
			if ctx.Err() != nil {
				readErr <- ctx.Err()
				return
			}
			d := r.Doc()
			if _, dup := names[d.ID]; dup {
				e := &corpus.RecordError{Path: d.Source, Line: d.Line, Offset: d.Offset, Reason: ReasonDuplicateID, Err: fmt.Errorf("id %q already used by an earlier record", d.ID)}
				mu.Lock()
				pipelineRejects = append(pipelineRejects, e)
				mu.Unlock()
				copts.OnReject(e)
				seq++
				continue
			}
			names[d.ID] = struct{}{}
			rd := rawDoc{seq: seq, name: d.ID, body: slices.Clone(d.Body), html: d.HTML}
			if f := o.Cluster.KeyField; f != "" {
				rd.key = d.Meta[f]
			}
			seq++
			cur.docs = append(cur.docs, rd)
			if len(cur.docs) == size {
				jobs <- cur
				n++
				cur = &job{n: n}
			}
			bar.Set(r.BytesRead())
		}
		if len(cur.docs) > 0 {
			jobs <- cur
		}
		readErr <- r.Err()
	}()
	go func() { wg.Wait(); close(done) }()

	// Collect in order.
	var out []Doc
	pending := map[int]*job{}
	next := 0
	for j := range done {
		pending[j.n] = j
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			out = append(out, p.out...)
			delete(pending, next)
			next++
		}
	}
	bar.Finish()
	if err := <-readErr; err != nil {
		return nil, corpus.Stats{}, fmt.Errorf("dedup: %w", err)
	}
	for _, err := range werr {
		if err != nil {
			return nil, corpus.Stats{}, fmt.Errorf("dedup: %w", err)
		}
	}
	stats := r.Stats()
	if len(pipelineRejects) > 0 {
		if stats.RejectedBy == nil {
			stats.RejectedBy = map[string]int64{}
		}
		stats.Rejected += int64(len(pipelineRejects))
		stats.RejectedBy[ReasonDuplicateID] += int64(len(pipelineRejects))
	}
	// The identity the reader guarantees, extended by our rejections.
	if stats.Read != int64(len(out))+stats.Rejected {
		return nil, stats, fmt.Errorf("dedup: accounting error: read %d != sketched %d + rejected %d", stats.Read, len(out), stats.Rejected)
	}
	if !exactOn {
		for i := range out {
			out[i].features, out[i].wfeat = nil, nil
		}
	}
	return &sketched{docs: out, exact: exactOn}, stats, nil
}

// addAll adds the unique documents to the index in batches and compacts
// the store.
func addAll(ctx context.Context, o Options, x *index.Index, hdr sketch.Header, docs []Doc, unique []int) error {
	bar := progress.New(o.Progress, "index", int64(len(unique)), "docs")
	defer bar.Finish()
	const batchSize = 2048
	batch := make([]*index.Doc, 0, batchSize)
	for lo := 0; lo < len(unique); lo += batchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = batch[:0]
		for _, i := range unique[lo:min(lo+batchSize, len(unique))] {
			d := &docs[i]
			batch = append(batch, &index.Doc{Name: d.Name, Sketch: sketch.Sketch{Header: hdr, Values: d.sketch, Size: float64(d.Shingles)}, Features: d.features})
		}
		if err := x.Add(batch...); err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		bar.Add(int64(len(batch)))
	}
	if err := store.Compact(context.TODO(), o.Store); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	return nil
}

// queryStored queries every unique document against the index, before this
// run's documents are added, and keeps the verified pairs with documents of
// earlier runs. Candidates named like a document of this run are skipped:
// this run replaces them, and the sort-join compares it. It returns the
// pairs and the number of candidates examined.
func queryStored(ctx context.Context, o Options, x *index.Index, hdr sketch.Header, docs []Doc, unique []int) ([]Pair, int64, error) {
	local := make(map[uint64]int, len(unique)) // index id -> position in docs
	for _, i := range unique {
		local[index.ID(docs[i].Name)] = i
	}
	bar := progress.New(o.Progress, "query", int64(len(unique)), "docs")
	defer bar.Finish()
	var (
		mu       sync.Mutex // guards pairs, cands, firstErr
		pairs    []Pair
		cands    int64
		firstErr error
	)
	parallel(len(unique), o.Workers, func(lo, hi int) {
		var found []Pair
		var n int64
		err := func() error {
			var cs []index.Candidate
			var rec []byte
			for _, i := range unique[lo:hi] {
				if err := ctx.Err(); err != nil {
					return err
				}
				d := &docs[i]
				q := sketch.Sketch{Header: hdr, Values: d.sketch}
				var err error
				if cs, err = x.Candidates(cs[:0], &q); err != nil {
					return err
				}
				for _, c := range cs {
					if _, ok := local[c.ID]; ok {
						continue // replaced by this run
					}
					n++
					var ok bool
					if rec, ok, err = o.Store.Doc(context.TODO(), c.ID, rec[:0]); err != nil {
						return err
					}
					if !ok {
						continue
					}
					sd, err := index.DecodeDoc(rec)
					if err != nil {
						return err
					}
					pr, err := verifyStored(sd, d, &q)
					if err != nil {
						return err
					}
					pr.Keys = c.Keys
					if o.accept(pr) {
						found = append(found, pr)
					}
				}
			}
			return nil
		}()
		mu.Lock()
		pairs, cands = append(pairs, found...), cands+n
		if err != nil && firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		bar.Add(int64(hi - lo))
	})
	if firstErr != nil {
		return nil, 0, fmt.Errorf("dedup: %w", firstErr)
	}
	return pairs, cands, nil
}

// waitAdds waits for the background adds, if any, and returns err (or
// the adds' error when err is nil).
func waitAdds(done chan error, err error) error {
	if done == nil {
		return err
	}
	if aerr := <-done; err == nil {
		return aerr
	}
	return err
}

// verifyLocal compares an earlier document a with b, both of this run.
func verifyLocal(a, b *Doc, hdr sketch.Header) Pair {
	sa := sketch.Sketch{Header: hdr, Values: a.sketch}
	sb := sketch.Sketch{Header: hdr, Values: b.sketch}
	est, _ := sketch.Jaccard(&sa, &sb) // same header by construction
	p := Pair{A: a.Name, B: b.Name, SeqA: a.Seq, SeqB: b.Seq, Similarity: est.J, Estimate: est.J, StdErr: est.StdErr}
	switch {
	case a.features != nil && b.features != nil:
		p.Similarity = index.ExactJaccard(a.features, b.features)
		p.Exact = true
	case a.wfeat != nil && b.wfeat != nil:
		p.Similarity = weighted.JaccardSorted(a.wfeat, b.wfeat)
		p.Exact = true
	}
	return p
}

// verifyStored compares a stored document s from an earlier run with d.
func verifyStored(s *index.Doc, d *Doc, q *sketch.Sketch) (Pair, error) {
	est, err := sketch.Jaccard(&s.Sketch, q)
	if err != nil {
		return Pair{}, err
	}
	p := Pair{A: s.Name, B: d.Name, SeqA: -1, SeqB: d.Seq, Similarity: est.J, Estimate: est.J, StdErr: est.StdErr}
	if s.Features != nil && d.features != nil {
		p.Similarity = index.ExactJaccard(s.Features, d.features)
		p.Exact = true
	}
	return p, nil
}

// WriteKept re-reads the inputs and writes every kept document to w, in
// input order. The reader is deterministic, so the records it yields are the
// ones Run numbered.
func WriteKept(ctx context.Context, o Options, res *Result, w corpus.Writer) (int64, error) {
	copts := o.Corpus
	copts.OnReject, copts.OnWarning = nil, nil
	r, err := corpus.Open(o.Inputs, copts)
	if err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	defer r.Close()
	dropped := map[int]bool{}
	for k, v := range res.Duplicate {
		dropped[k] = v
	}
	present := make(map[int]bool, len(res.Docs))
	for _, d := range res.Docs {
		present[d.Seq] = true
	}
	seq := 0
	var n int64
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		s := seq
		seq++
		if !present[s] || dropped[s] {
			continue // rejected by the pipeline, or a duplicate
		}
		if err := w.Write(r.Doc()); err != nil {
			return n, fmt.Errorf("dedup: writing %q: %w", r.Doc().ID, err)
		}
		n++
	}
	if err := r.Err(); err != nil {
		return n, fmt.Errorf("dedup: %w", err)
	}
	return n, nil
}
