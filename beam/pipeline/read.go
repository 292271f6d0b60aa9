package pipeline

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Counters, in the namespace "neardup". The summary file carries the same
// numbers, computed from the data (counters may be approximate on some
// runners, where retried bundles count twice).
var (
	cRead       = beam.NewCounter("neardup", "read")
	cYielded    = beam.NewCounter("neardup", "yielded")
	cRejected   = beam.NewCounter("neardup", "rejected")
	cExact      = beam.NewCounter("neardup", "exact_duplicates")
	cNear       = beam.NewCounter("neardup", "near_duplicates")
	cKept       = beam.NewCounter("neardup", "kept")
	cCandidates = beam.NewCounter("neardup", "candidates")
	cPairs      = beam.NewCounter("neardup", "pairs")
	cClusters   = beam.NewCounter("neardup", "clusters")
	cHotKeys    = beam.NewCounter("neardup", "hot_keys")
	cHotDocs    = beam.NewDistribution("neardup", "hot_key_docs")
)

func init() {
	register.DoFn3x1[context.Context, []byte, func(fileRef), error](&expandFn{})
	register.DoFn5x1[context.Context, fileRef, func(string, docRec), func(rejectRec), func(fileStat), error](&readFn{})
	register.DoFn5x1[context.Context, string, func(*docRec) bool, func(string, docRec), func(rejectRec), error](&uniqueIDFn{})
	register.DoFn7x1[context.Context, string, func(*docRec) bool, func(uint64, docRec), func(uint64, nodeInfo), func(uint64, uint64), func(pairRec), error](&exactFn{})
	register.Emitter1[fileRef]()
	register.Emitter2[string, docRec]()
	register.Emitter1[rejectRec]()
	register.Emitter1[fileStat]()
	register.Emitter2[uint64, docRec]()
	register.Emitter2[uint64, nodeInfo]()
	register.Iter1[docRec]()
}

// hasGlob reports whether p has glob metacharacters.
func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// expandFn lists the inputs once, on one worker, and numbers them: the
// inputs in the order given, each glob's matches in lexical order, so that
// every document gets the position dedup would give it. A local path
// without glob characters (a file or a directory, which the core reader
// walks) is passed through, and reported by the reader if it cannot be
// opened; a pattern that matches nothing is an error.
type expandFn struct {
	Inputs []string
}

func (f *expandFn) ProcessElement(ctx context.Context, _ []byte, emit func(fileRef)) error {
	n := 0
	for _, in := range f.Inputs {
		var matches []string
		if isLocal(in) && !hasGlob(in) {
			matches = []string{in}
		} else {
			fs, err := filesystem.New(ctx, in)
			if err != nil {
				return fmt.Errorf("neardup-beam: input %s: %w", in, err)
			}
			matches, err = fs.List(ctx, in)
			fs.Close()
			if err != nil {
				return fmt.Errorf("neardup-beam: listing %s: %w", in, err)
			}
			if len(matches) == 0 {
				return fmt.Errorf("neardup-beam: no input matches %s", in)
			}
			slices.Sort(matches)
		}
		for _, m := range matches {
			emit(fileRef{Index: n, Path: m})
			n++
		}
	}
	return nil
}

// openFS opens path on its Beam filesystem for reading.
func openFS(ctx context.Context, path string) (io.ReadCloser, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		fs.Close()
		return nil, err
	}
	return fsReadCloser{rc, fs}, nil
}

type fsReadCloser struct {
	io.ReadCloser
	fs filesystem.Interface
}

func (r fsReadCloser) Close() error {
	err := r.ReadCloser.Close()
	if ferr := r.fs.Close(); err == nil {
		err = ferr
	}
	return err
}

// readFn reads one input with the core reader and sketches every document:
// it emits the documents keyed by id, the rejected records and the
// input's counts.
type readFn struct {
	Cfg Config
	sk  *sketcher
}

func (f *readFn) Setup() error {
	var err error
	f.sk, err = newSketcher(f.Cfg)
	return err
}

func (f *readFn) ProcessElement(ctx context.Context, in fileRef, emitDoc func(string, docRec), emitRej func(rejectRec), emitStat func(fileStat)) error {
	var i, rejects int64
	k := f.sk.cfg.K
	st, err := readInput(ctx, f.Cfg, in.Path, func() (io.ReadCloser, error) { return openFS(ctx, in.Path) },
		func(r record) error {
			fp, sk := f.sk.sketch(make([]uint64, 0, k), r.body(), r.html())
			emitDoc(r.id(), docRec{Order: order(in.Index, i), ID: r.id(), FP: fp, Sketch: sk, Source: r.source(), Line: r.line(), Offset: r.offset()})
			i++
			return nil
		},
		func(rej rejectRec) {
			rej.Order = order(in.Index, i)
			emitRej(rej)
			rejects++
		})
	if err != nil {
		return fmt.Errorf("neardup-beam: %s: %w", in.Path, err)
	}
	if st.Yielded != i || st.Rejected != rejects || st.Read != st.Yielded+st.Rejected {
		return fmt.Errorf("neardup-beam: %s: accounting error: read %d, yielded %d (%d seen), rejected %d (%d seen)", in.Path, st.Read, st.Yielded, i, st.Rejected, rejects)
	}
	cRead.Inc(ctx, st.Read)
	cYielded.Inc(ctx, st.Yielded)
	cRejected.Inc(ctx, st.Rejected)
	emitStat(fileStat{File: in.Index, Read: st.Read, Yielded: st.Yielded, Rejected: st.Rejected, Warnings: st.Warnings, Skipped: st.Skipped})
	return nil
}

// uniqueIDFn keeps the first document (in input order) of each id and
// rejects the others as dedup does (reason duplicate-id). It emits the
// kept document keyed by its exact fingerprint. Memory: one document
// plus the orders of the others.
type uniqueIDFn struct{}

func (f *uniqueIDFn) ProcessElement(ctx context.Context, id string, iter func(*docRec) bool, emit func(string, docRec), emitRej func(rejectRec)) error {
	var first docRec
	var others []rejectRec
	var d docRec
	n := 0
	later := func(d *docRec) {
		others = append(others, rejectRec{Order: d.Order, Path: d.Source, Line: d.Line, Offset: d.Offset, Reason: reasonDuplicateID, ID: id})
	}
	for iter(&d) {
		switch {
		case n == 0:
			first = d
		case d.Order < first.Order:
			later(&first)
			first = d
		default:
			later(&d)
		}
		n++
	}
	if n == 0 {
		return nil
	}
	emit(first.FP, first)
	for _, r := range others {
		cRejected.Inc(ctx, 1)
		r.Error = fmt.Sprintf("id %q already used by an earlier record", id)
		emitRej(r)
	}
	return nil
}

// exactFn groups the documents of one exact fingerprint: the first (in
// input order) is unique and goes on to the band keys; every other is an
// identical copy, joined to it by an edge of similarity 1 (dedup's
// exactInMemory). It emits every document's node information, and the
// identical pairs for pairs/. Memory: one document plus the orders of the
// copies.
type exactFn struct{}

func (f *exactFn) ProcessElement(ctx context.Context, _ string, iter func(*docRec) bool, emitUnique func(uint64, docRec), emitNode func(uint64, nodeInfo), emitEdge func(uint64, uint64), emitPair func(pairRec)) error {
	var first docRec
	var copies []nodeInfo
	var d docRec
	n := 0
	for iter(&d) {
		switch {
		case n == 0:
			first = d
		case d.Order < first.Order:
			copies = append(copies, nodeInfo{Order: first.Order, ID: first.ID, Exact: true})
			first = d
		default:
			copies = append(copies, nodeInfo{Order: d.Order, ID: d.ID, Exact: true})
		}
		n++
	}
	if n == 0 {
		return nil
	}
	emitUnique(first.Order, first)
	emitNode(first.Order, nodeInfo{Order: first.Order, ID: first.ID})
	for _, c := range copies {
		emitNode(c.Order, c)
		emitEdge(first.Order, c.Order)
		emitPair(pairRec{A: first.Order, B: c.Order, AID: first.ID, BID: c.ID, Similarity: 1, Identical: true})
	}
	return nil
}
