package report

import (
	"maps"
	"slices"
)

// RunCluster is a cluster of a deduplication run as the report's examples
// need it: the caller converts its pipeline's clusters (package dedup's
// Cluster has these fields) into RunClusters.
type RunCluster struct {
	// ID is the cluster's id.
	ID int
	// Kept is the name of the member that is kept.
	Kept string
	// Members lists every member, the kept one included.
	Members []RunMember
	// Oversize marks a cluster larger than the run's limit.
	Oversize bool
	// Dropped marks a cluster of which every member was dropped (the keep
	// policy none): Kept then names the member the similarities refer to
	// (the first), which was dropped too.
	Dropped bool
}

// RunMember is a member of a RunCluster.
type RunMember struct {
	Name string
	// Seq numbers the document among the records the run read, in the
	// order it read them (0, 1, 2, …); negative for a document the run
	// did not read (one stored in an index by an earlier run), whose text
	// cannot be shown.
	Seq int
	// Similarity to the kept document, as ExampleDoc.Similarity.
	Similarity       float64
	Exact, Identical bool
}

// ExampleOptions say which clusters Examples shows and how much of each.
// The zero value takes every default.
type ExampleOptions struct {
	// Largest is how many of the largest clusters to show. The default is
	// 4; negative means none.
	Largest int
	// Random is how many other clusters to draw at random (keyed by Seed,
	// so the same run shows the same ones). The default is 4; negative
	// means none.
	Random int
	// Listed is how many members besides the kept one each example lists.
	// The default is 40.
	Listed int
	// Diffed is how many of the listed members get their text (to be
	// diffed against the kept document); it should be DedupData.MaxDiffs.
	// The default is 5.
	Diffed int
	// Seed keys the random choice. The default is 0.
	Seed uint64
}

func (o ExampleOptions) withDefaults() ExampleOptions {
	def := func(v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	def(&o.Largest, 4)
	def(&o.Random, 4)
	def(&o.Listed, 40)
	def(&o.Diffed, 5)
	return o
}

// RunExamples are the example clusters of a run, waiting for the texts of
// their documents. A run numbers its records as it reads them; the texts
// are found by reading the inputs again in the same order and numbering the
// records the same way (Want tells which to keep, Last when to stop), then
// handed over with SetText. The zero value holds no examples. Not safe for
// concurrent use.
type RunExamples struct {
	// Examples are the examples, in order of display; put them into
	// DedupData.Examples once the texts are set.
	Examples []Example
	docs     map[int][]docRef // Seq -> the example documents with that Seq
}

// docRef locates an example document: Examples[ex].Kept when member < 0,
// else Examples[ex].Members[member].
type docRef struct{ ex, member int }

// Examples picks the example clusters of a run (PickExamples: the largest,
// then a deterministic random draw) and lists, for each, the kept document
// and up to Listed other members. The texts it asks for are the kept
// document's and those of the first Diffed members the run read (Seq >= 0).
// Cost: O(n log n) for n clusters plus the members listed.
func Examples(clusters []RunCluster, o ExampleOptions) *RunExamples {
	o = o.withDefaults()
	r := &RunExamples{docs: map[int][]docRef{}}
	sizes := make([]int, len(clusters))
	for i, c := range clusters {
		sizes[i] = len(c.Members)
	}
	big, sample := PickExamples(sizes, o.Largest, o.Random, o.Seed)
	add := func(i int, why string) {
		cl := clusters[i]
		ei := len(r.Examples)
		ex := Example{Cluster: cl.ID, Why: why, Size: len(cl.Members), Oversize: cl.Oversize, Dropped: cl.Dropped}
		diffed := 0
		for _, m := range cl.Members {
			doc := ExampleDoc{Name: m.Name, Similarity: m.Similarity, Exact: m.Exact, Identical: m.Identical}
			if m.Name == cl.Kept {
				ex.Kept = doc
				if m.Seq >= 0 {
					r.docs[m.Seq] = append(r.docs[m.Seq], docRef{ei, -1})
				}
				continue
			}
			if len(ex.Members) >= o.Listed {
				continue
			}
			if diffed < o.Diffed && m.Seq >= 0 {
				r.docs[m.Seq] = append(r.docs[m.Seq], docRef{ei, len(ex.Members)})
				diffed++
			}
			ex.Members = append(ex.Members, doc)
		}
		r.Examples = append(r.Examples, ex)
	}
	for _, i := range big {
		add(i, "largest")
	}
	for _, i := range sample {
		add(i, "random")
	}
	return r
}

// Seqs returns the record numbers whose texts the examples show, in
// increasing order.
func (r *RunExamples) Seqs() []int { return slices.Sorted(maps.Keys(r.docs)) }

// Want reports whether the examples show the text of record seq.
func (r *RunExamples) Want(seq int) bool {
	_, ok := r.docs[seq]
	return ok
}

// Last returns the largest record number whose text the examples show, or
// -1 when they need none: a reader can stop after it.
func (r *RunExamples) Last() int {
	last := -1
	for s := range r.docs {
		last = max(last, s)
	}
	return last
}

// SetText gives the text of record seq to every example document that is
// that record. Records the examples do not show are ignored.
func (r *RunExamples) SetText(seq int, text string) {
	for _, d := range r.docs[seq] {
		doc := &r.Examples[d.ex].Kept
		if d.member >= 0 {
			doc = &r.Examples[d.ex].Members[d.member]
		}
		doc.Text, doc.HasText = text, true
	}
}
