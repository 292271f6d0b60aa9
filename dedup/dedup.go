// Package dedup provides the near-duplicate detection pipeline: it takes a
// stream of documents, drops exact duplicates, sketches the documents with
// all cores, finds candidate pairs through the index's lookup keys,
// verifies them, clusters them, and accounts for every record as kept,
// duplicate or rejected.
//
// The stages follow the duplicate suppression of Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book) (ch. 3.1, 3.2, 6.1): an exact
// fingerprint first (identical bodies never reach verification), then
// features and a consistent-sampling sketch (one sample.Sketcher per worker),
// candidates by AltaVista's sort-join over supershingle keys and verification
// by exact Jaccard (or, when asked, by the full-sketch estimate) — both done
// by package index, the one owner of keys,
// candidates and verification — and finally union-find clustering with a
// guard against chaining (package cluster). With a store, this run's
// documents are matched against the documents of earlier runs and added to
// the index, all through package index. Each stage is a file of this package:
// read.go (read and sketch), exact.go, store.go (earlier runs and adds),
// bands.go (the band-key export), join.go (join and verify), cluster.go, output.go, summary.go.
//
// Under a memory budget (Options.Memory) the run goes out of core by
// itself, as AltaVista's clustering did (book 3.1): the sketches move to a
// file in the work directory as they are made, the join sorts (pass, key,
// document) records and then the candidate pairs on disk (package
// dedup/spill: radix-sorted buffers, zstd-compressed sorted runs, k-way
// merge), and verification reads the sketches back in chunks
// (external.go) and the feature sets of the candidates' documents, the only
// ones exact verification needs, in sorted passes over the feature file
// written beside the sketches (features.go, verify_exact.go). The pairs,
// clusters and kept set are those of the run in memory, byte for byte.
// In memory without a budget the run holds each value of a slot-wise
// sketch folded to 32 bits, all that the join and verification compare
// (values.go).
// With Options.Stages such a run is resumable: each stage saves its
// output with a manifest in the work directory, and a killed run
// continues from the last saved stage, within stage 1 from the last
// finished input (stages.go).
//
// The pipeline reads documents from an iterator and never opens a file; it
// reports through an EventListener and never prints. Its result does not
// depend on the order of the input beyond the stated rules that the first
// record with an id wins, that an exact copy pairs with the first copy of
// its body, and the keep policy (cluster.KeepFirst keeps the earliest
// document): candidate pairs come from documents numbered by the hash of
// their names, and the same input and options give the same pairs,
// clusters and kept set whatever the number of workers.
package dedup

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// Rejection reasons added by the pipeline to the corpus reader's.
const (
	// ReasonDuplicateID: a record whose id was already used by an earlier
	// record of the same run.
	ReasonDuplicateID = "duplicate-id"
)

// Doc is what the pipeline keeps of a document.
type Doc struct {
	// Seq is the document's position among the documents the iterator
	// yielded (records it yielded as errors are not numbered).
	Seq int
	// Name is the document's id.
	Name string
	// Bytes is the length of its body.
	Bytes int
	// Key is the value of the cluster policy's metadata field ("" if none).
	Key string
	// Fingerprint is the identity fingerprint of the body (package
	// identity: its length and 128 bits under the index's
	// secret key).
	Fingerprint identity.Fingerprint
	// ExactOf is the Seq of the earlier document with an identical body,
	// -2 for an identical document stored by an earlier run, or -1.
	ExactOf int
	// Shingles is the number of distinct features.
	Shingles int
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

// pairOf makes the Pair of a comparison by the index.
func pairOf(a, b *Doc, c index.Comparison) Pair {
	if a.Seq > b.Seq {
		a, b = b, a
	}
	return Pair{A: a.Name, B: b.Name, SeqA: a.Seq, SeqB: b.Seq, Similarity: c.Similarity(), Estimate: c.Estimate.J,
		StdErr: c.Estimate.StdErr, Exact: c.Exact >= 0, Keys: c.Keys}
}

// Result is the outcome of Run.
type Result struct {
	Summary Summary
	// Docs are the documents the iterator yielded, in input order, except
	// those rejected by the pipeline (Docs[i].Seq is not always i).
	Docs []Doc
	// Pairs are the verified pairs, exact duplicates included, sorted by
	// (SeqB, SeqA, A).
	Pairs []Pair
	// Clusters are the clusters of two or more documents.
	Clusters []Cluster
	// Duplicate[seq] reports whether the document at Seq seq is dropped.
	Duplicate map[int]bool
	// Index is the index configuration the run used (recorded in the store,
	// or adopted from it).
	Index index.Config
	// Scheme is the LSH scheme used (for S-curves in reports).
	Scheme lsh.Params
}

// run is the state of one Run, shared by its stages.
type run struct {
	ctx   context.Context
	o     Options
	x     *index.Index
	ev    *events
	res   *Result
	sum   *Summary
	prior bool // the store held an index before this run
	exact bool // exact verification on
	// unique are the positions in res.Docs of the documents to index: the
	// first copy of each body, unless an earlier run stored it.
	unique []int
	// local holds the index ids of this run's documents.
	local map[uint64]bool
	// ext is the out-of-core state, nil in memory (Options.Memory).
	ext *external
	// feats holds the feature sets of a run in memory on disk, when they
	// do not fit in memory (spillFeatures); nil otherwise, and once the
	// run goes out of core (ext.feats then).
	feats *diskFeatures
	// work is the work directory, once made (workDir).
	work struct {
		dir         string
		owned, made bool
	}
	// st is the state of a resumable run, nil without Options.Stages.
	st *stages
	// hdr is the header of the index's sketches (run.indexDoc).
	hdr sketch.Header
	// side is what the run keeps of each document of res.Docs besides
	// its Doc: sketch, size, feature set (side.go).
	side side
	// fold: the batch comparisons see the sketch values folded to 32 bits;
	// narrow: the run holds only the folds in memory; highs: the high
	// halves of a narrow run's values, when it needs the full ones
	// (values.go).
	fold, narrow bool
	highs        *highFile
	// byID is r.unique's indexes in the order of the documents' index
	// ids, made once (uniqueByID).
	byID     []uint32
	byIDOnce sync.Once
}

// Run deduplicates the documents docs yields. An error it yields that is a
// *corpus.RecordError is a rejected record: it is counted, reported to
// Events.Rejected, and the run goes on; any other error stops the run and
// is returned. Only a failure of the run itself (such an error, a store
// error, a contradicting configuration, a cancelled context) is an error.
// docs is read once, from one goroutine; the documents it yields need to
// stay valid only until it is resumed.
func Run(ctx context.Context, docs iter.Seq2[*corpus.Document, error], o Options) (res *Result, err error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	ctx, stop := context.WithCancel(ctx) // stops the adds when Clustered fails
	defer stop()
	r, err := newRun(ctx, o)
	if err != nil {
		return nil, err
	}
	r.ev.startSampling()
	defer r.ev.stopSampling()
	err = r.sketch(docs)
	defer func() {
		if cerr := r.closeFeatures(); cerr != nil && err == nil {
			err = fmt.Errorf("dedup: removing the work files: %w", cerr)
		}
	}()
	if r.st != nil {
		defer r.st.close()
	}
	defer func() {
		if cerr := r.highs.close(); cerr != nil && err == nil {
			err = fmt.Errorf("dedup: removing the work files: %w", cerr)
		}
	}()
	if r.ext != nil {
		defer func() {
			// A resumable run's stage files stay for the caller (RemoveWork).
			if cerr := r.ext.close(r.o.KeepWork || r.st != nil); cerr != nil && err == nil {
				err = fmt.Errorf("dedup: removing the work files: %w", cerr)
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	if r.st != nil && r.st.s.Shards > 1 {
		return r.finishShard(start)
	}
	if err := r.exactDuplicates(); err != nil {
		return nil, err
	}
	if err := r.matchStored(); err != nil {
		return nil, err
	}
	adds := r.startAdds()
	err = r.exportBands()
	if err == nil && r.ext != nil {
		err = r.joinExternal()
	} else if err == nil {
		collectBeforeJoin(len(r.res.Docs))
		err = r.joinAndVerify()
	}
	if err == nil {
		err = r.cluster()
	}
	if err == nil && r.o.Clustered != nil {
		err = r.clustered(adds, stop)
	}
	if aerr := adds.wait(); err == nil {
		err = aerr
	}
	if err != nil {
		return nil, err
	}
	r.side = side{} // nothing reads the sketches once the run is done
	return r.finish(start)
}

// newRun opens the index: over o.Store, or over an in-memory store that
// only serves the batch path.
func newRun(ctx context.Context, o Options) (*run, error) {
	if s := o.Stages; s != nil && s.Resume && o.Index.Identity.IsZero() {
		// A resumed run fingerprints under the key of the run it resumes.
		dir := s.Dir
		if dir == "" {
			dir = o.WorkDir
		}
		k, ok, err := readKeyFile(dir)
		if err != nil {
			return nil, err
		}
		if ok {
			o.Index.Identity = k
		}
	}
	// A nil Store: in memory, with an identity key drawn for this run
	// unless o.Index gives one.
	x, err := index.Open(ctx, o.Store, o.Index)
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	prior := x.Reopened()
	cfg := x.Config()
	res := &Result{Duplicate: map[int]bool{}, Index: cfg, Scheme: cfg.LSH}
	r := &run{ctx: ctx, o: o, x: x, ev: &events{l: o.Events}, res: res, sum: &res.Summary, prior: prior,
		hdr: x.NewDoc("", &sample.Sketched{}, false).Sketch.Header}
	r.fold = r.hdr.Algorithm.SlotWise()
	r.sum.Upgraded = x.Upgraded()
	r.sum.Config = Config{Sampler: cfg.Sketch.Algorithm.String(), K: cfg.Sketch.K, Seed: cfg.Sketch.Seed, Threshold: cfg.Threshold,
		LSH: cfg.LSH, Features: cfg.Sketch.Features.String()}
	if o.Stages != nil {
		if err := r.newStages(); err != nil {
			return nil, err
		}
	}
	return r, nil
}
