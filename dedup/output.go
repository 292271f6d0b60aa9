package dedup

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"sync"

	"github.com/neardup/neardup/corpus"
)

// pairJSON is one line of pairs.jsonl.
type pairJSON struct {
	A          string  `json:"a"`
	B          string  `json:"b"`
	Similarity float64 `json:"similarity"`
	Estimate   float64 `json:"estimate"`
	StdErr     float64 `json:"stderr"`
	Exact      bool    `json:"exact"`
	Identical  bool    `json:"identical,omitempty"`
	Keys       int     `json:"keys,omitempty"`
	Stored     bool    `json:"stored,omitempty"`
	SeqA       *int    `json:"seq_a,omitempty"`
	SeqB       int     `json:"seq_b"`
	Kind       string  `json:"kind"`
}

func round(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// WritePairs writes one JSON object per pair: {"a", "b", "similarity",
// "estimate", "stderr", "exact", "identical", "keys", "kind"}, where kind is
// "identical" for exact duplicates and "near" otherwise.
func WritePairs(w io.Writer, pairs []Pair) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, p := range pairs {
		j := pairJSON{A: p.A, B: p.B, Similarity: round(p.Similarity), Estimate: round(p.Estimate), StdErr: round(p.StdErr),
			Exact: p.Exact, Identical: p.Identical, Keys: p.Keys, SeqB: p.SeqB, Kind: "near"}
		if p.Identical {
			j.Kind = "identical"
		}
		if p.SeqA >= 0 {
			a := p.SeqA
			j.SeqA = &a
		} else {
			j.Stored = true
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return bw.Flush()
}

type memberJSON struct {
	ID         string  `json:"id"`
	Similarity float64 `json:"similarity"`
	Exact      bool    `json:"exact"`
	Identical  bool    `json:"identical,omitempty"`
	Stored     bool    `json:"stored,omitempty"`
}

type edgeJSON struct {
	A          string  `json:"a"`
	B          string  `json:"b"`
	Similarity float64 `json:"similarity"`
}

type clusterJSON struct {
	Cluster  int          `json:"cluster"`
	Kept     string       `json:"kept"`
	Size     int          `json:"size"`
	Members  []string     `json:"members"`
	Details  []memberJSON `json:"details"`
	MinSim   float64      `json:"min_similarity"`
	Oversize bool         `json:"oversize,omitempty"`
	Edges    []edgeJSON   `json:"edges"`
}

// WriteClusters writes one JSON object per cluster of two or more
// documents: {"cluster", "kept", "size", "members", "details", "edges",
// ...}. Members lists every document of the cluster, kept first (kept is
// "" under cluster.KeepNone); details gives each member's similarity to
// the first member (exact when known);
// edges are the verified pairs that joined the cluster.
func WriteClusters(w io.Writer, cs []Cluster) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, c := range cs {
		j := clusterJSON{Cluster: c.ID, Kept: c.Kept, Size: len(c.Members), Oversize: c.Oversize, MinSim: 1}
		for i, m := range c.Members {
			j.Members = append(j.Members, m.Name)
			j.Details = append(j.Details, memberJSON{ID: m.Name, Similarity: round(m.Similarity), Exact: m.Exact, Identical: m.Identical, Stored: m.Seq < 0})
			if i > 0 {
				j.MinSim = math.Min(j.MinSim, round(m.Similarity))
			}
		}
		for _, e := range c.Edges {
			j.Edges = append(j.Edges, edgeJSON{A: e.A, B: e.B, Similarity: round(e.Similarity)})
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteSummary writes the summary as indented JSON.
func WriteSummary(w io.Writer, s *Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteKept writes every kept document of res to w, in input order. docs
// must yield the documents Run was given, in the same order (a second
// reading of the same inputs): the documents are matched to res by their
// position among the documents yielded, and a document whose id is not the
// one Run saw there is an error (an input that changed between the two
// readings). Records yielded as *corpus.RecordError are skipped, as Run
// skipped them; any other error stops the writing. It returns the number of
// documents written.
func WriteKept(ctx context.Context, docs iter.Seq2[*corpus.Document, error], res *Result, w corpus.Writer) (int64, error) {
	present := make(map[int]string, len(res.Docs))
	for i := range res.Docs {
		present[res.Docs[i].Seq] = res.Docs[i].Name
	}
	seq := 0
	var n int64
	for d, err := range docs {
		if cerr := ctx.Err(); cerr != nil {
			return n, cerr
		}
		if err != nil {
			var re *corpus.RecordError
			if errors.As(err, &re) {
				continue
			}
			return n, fmt.Errorf("dedup: %w", err)
		}
		s := seq
		seq++
		name, ok := present[s]
		if !ok || res.Duplicate[s] {
			continue // rejected by the pipeline, or a duplicate
		}
		if name != d.ID {
			return n, fmt.Errorf("dedup: document %d is %q, not %q as when deduplicated: did an input change?", s, d.ID, name)
		}
		if err := w.Write(d); err != nil {
			return n, fmt.Errorf("dedup: writing %q: %w", d.ID, err)
		}
		n++
	}
	if len(res.Docs) > 0 && seq <= res.Docs[len(res.Docs)-1].Seq {
		return n, fmt.Errorf("dedup: %d documents, more when deduplicated: did an input change?", seq)
	}
	return n, nil
}

// rejectedJSON is one line of rejected.jsonl.
type rejectedJSON struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Line   int64  `json:"line,omitempty"`
	Offset *int64 `json:"offset,omitempty"`
	Count  int64  `json:"count"`
	Reason string `json:"reason"`
	Error  string `json:"error,omitempty"`
}

// RejectedWriter writes one JSON object per rejected record: {"id",
// "source", "line", "offset", "count", "reason", "error"}: the record's id
// ("" when the reader did not get that far), its input, its 1-based line
// (JSONL, JSON, Parquet row; absent when lines do not apply), its byte
// offset in the decompressed input (absent when unknown), the number of
// records the line stands for (more than 1 for a Parquet row group or the
// rows from a corrupt page on), the reason (corpus.Reason* or
// ReasonDuplicateID) and the cause. Safe for concurrent use; Flush writes
// what is buffered.
type RejectedWriter struct {
	mu  sync.Mutex
	bw  *bufio.Writer
	enc *json.Encoder
	err error
}

// NewRejectedWriter returns a RejectedWriter that writes to w.
func NewRejectedWriter(w io.Writer) *RejectedWriter {
	bw := bufio.NewWriter(w)
	return &RejectedWriter{bw: bw, enc: json.NewEncoder(bw)}
}

// Write writes the line of e. After an error, Write does nothing and
// Flush returns the error.
func (w *RejectedWriter) Write(e *corpus.RecordError) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	j := rejectedJSON{ID: e.ID, Source: e.Path, Line: e.Line, Count: e.Records(), Reason: e.Reason}
	if e.Offset >= 0 {
		off := e.Offset
		j.Offset = &off
	}
	if e.Err != nil {
		j.Error = e.Err.Error()
	}
	w.err = w.enc.Encode(j)
	return w.err
}

// Flush writes the buffered lines and returns the first error met.
func (w *RejectedWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

// removedJSON is one line of removed.jsonl.
type removedJSON struct {
	ID          string  `json:"id"`
	DuplicateOf string  `json:"duplicate_of"`
	Cluster     int     `json:"cluster"`
	Similarity  float64 `json:"similarity"`
	Exact       bool    `json:"exact"`
	Identical   bool    `json:"identical,omitempty"`
	Seq         int     `json:"seq"`
}

// WriteRemoved writes one JSON object per document of this run that res
// drops as a duplicate, in cluster order: {"id", "duplicate_of" (the id of
// the cluster's kept document, which may be stored by an earlier run; when
// none is kept, KeepNone, its first member, or for that one the second),
// "cluster", "similarity" (to the kept document; -1 when never compared),
// "exact", "identical", "seq" (the position in the input)}. It writes
// res.Summary.Duplicates lines, and returns an error if the clusters do
// not account for every dropped document.
func WriteRemoved(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	var n int64
	for _, c := range res.Clusters {
		for _, m := range c.Members {
			if m.Seq < 0 || !res.Duplicate[m.Seq] {
				continue
			}
			of := c.Kept
			if of == "" { // --keep none: the first member, or for it the second
				of = c.Members[0].Name
				if of == m.Name && len(c.Members) > 1 {
					of = c.Members[1].Name
				}
			}
			j := removedJSON{ID: m.Name, DuplicateOf: of, Cluster: c.ID, Similarity: round(m.Similarity), Exact: m.Exact, Identical: m.Identical, Seq: m.Seq}
			if err := enc.Encode(j); err != nil {
				return err
			}
			n++
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if n != res.Summary.Duplicates {
		return fmt.Errorf("dedup: %d removed documents in clusters, %d duplicates counted", n, res.Summary.Duplicates)
	}
	return nil
}

// Keeper is the keep decision of corpus.CopyKept for a second reading of
// Run's inputs, so that a corpus.FilterWriter (corpus.MirrorWriter) also
// learns what is dropped and writes a WARC crawl's kept responses with
// their request, metadata and warcinfo records. It keeps the n-th
// document the reader yields when Run kept the document at that position
// (the reader is deterministic, so the positions agree); a document whose
// id is not the one Run saw there (an input that changed between the two
// readings) is not kept, and Err reports it.
type Keeper struct {
	present map[int]string
	res     *Result
	seen    int
	err     error
}

// NewKeeper returns the Keeper of res.
func NewKeeper(res *Result) *Keeper {
	present := make(map[int]string, len(res.Docs))
	for i := range res.Docs {
		present[res.Docs[i].Seq] = res.Docs[i].Name
	}
	return &Keeper{present: present, res: res}
}

// Keep reports whether the n-th document, d, is kept; it has the signature
// of corpus.CopyKept's keep function.
func (k *Keeper) Keep(n int64, d *corpus.Document) bool {
	s := int(n)
	k.seen = max(k.seen, s+1)
	name, ok := k.present[s]
	if !ok || k.res.Duplicate[s] {
		return false // rejected by the pipeline, or a duplicate
	}
	if name != d.ID {
		if k.err == nil {
			k.err = fmt.Errorf("dedup: document %d is %q, not %q as when deduplicated: did an input change?", s, d.ID, name)
		}
		return false
	}
	return true
}

// Err reports an input that changed between Run and the second reading:
// a document with another id at a position, or fewer documents.
func (k *Keeper) Err() error {
	if k.err != nil {
		return k.err
	}
	if docs := k.res.Docs; len(docs) > 0 && k.seen <= docs[len(docs)-1].Seq {
		return fmt.Errorf("dedup: %d documents, more when deduplicated: did an input change?", k.seen)
	}
	return nil
}
