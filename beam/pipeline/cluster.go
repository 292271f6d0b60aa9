package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn5x1[context.Context, uint64, func(*uint64) bool, func(*nodeInfo) bool, func(uint64, nodeInfo), error](&memberFn{})
	register.DoFn8x1[context.Context, uint64, func(*nodeInfo) bool, func(line), func(line), func(int, int64), func(string, int64), func(string, int64), error](&clusterFn{})
	register.Iter1[nodeInfo]()
	register.Emitter1[line]()
	register.Emitter2[int, int64]()
	register.Emitter2[string, int64]()
}

// memberFn meets a document's node information with its component root
// (if it has one: a document without verified pairs is a cluster of one,
// kept) and sends it to its cluster.
type memberFn struct{}

func (f *memberFn) ProcessElement(ctx context.Context, o uint64, roots func(*uint64) bool, infos func(*nodeInfo) bool, emit func(uint64, nodeInfo)) error {
	var root uint64
	if !roots(&root) {
		return nil
	}
	var r2 uint64
	if roots(&r2) {
		return fmt.Errorf("neardup-beam: document %#x has two component roots", o)
	}
	var n nodeInfo
	if !infos(&n) {
		return fmt.Errorf("neardup-beam: component member %#x is not a document", o)
	}
	emit(root, n)
	return nil
}

// ClusterJSON is one line of clusters/*.jsonl: a cluster of two or more
// documents, the kept one first, then the others in input order.
type ClusterJSON struct {
	Kept    string   `json:"kept"`
	Size    int      `json:"size"`
	Members []string `json:"members"`
}

// RemovedJSON is one line of removed/*.jsonl: a dropped document, the
// document kept in its place, and whether it was an identical copy of an
// earlier document ("identical") or a near-duplicate ("near").
type RemovedJSON struct {
	ID   string `json:"id"`
	Kept string `json:"kept"`
	Kind string `json:"kind"`
}

// clusterFn builds one cluster from its members: the earliest document
// (the root) is kept, the others are removed. It emits the cluster line,
// a removed line per dropped document, the dropped documents by input (for
// the kept writer), and the counts.
type clusterFn struct {
	members []nodeInfo
}

func (f *clusterFn) ProcessElement(ctx context.Context, root uint64, iter func(*nodeInfo) bool, emitCluster, emitRemoved func(line), emitDrop func(int, int64), emitSum, emitMax func(string, int64)) error {
	f.members = f.members[:0]
	var n nodeInfo
	for iter(&n) {
		f.members = append(f.members, n)
	}
	slices.SortFunc(f.members, func(a, b nodeInfo) int {
		switch {
		case a.Order < b.Order:
			return -1
		case a.Order > b.Order:
			return 1
		}
		return 0
	})
	if len(f.members) < 2 || f.members[0].Order != root {
		return fmt.Errorf("neardup-beam: cluster %#x has %d members, first %#x", root, len(f.members), f.members[0].Order)
	}
	kept := f.members[0].ID
	c := ClusterJSON{Kept: kept, Size: len(f.members)}
	for _, m := range f.members {
		c.Members = append(c.Members, m.ID)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	emitCluster(line{Order: root, Text: string(b)})
	cClusters.Inc(ctx, 1)
	emitSum("clusters", 1)
	emitMax("largest_cluster", int64(len(f.members)))
	var exact, near int64
	for _, m := range f.members[1:] {
		r := RemovedJSON{ID: m.ID, Kept: kept, Kind: "near"}
		if m.Exact {
			r.Kind = "identical"
			exact++
		} else {
			near++
		}
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		emitRemoved(line{Order: m.Order, Text: string(b)})
		emitDrop(orderFile(m.Order), orderIndex(m.Order))
	}
	cExact.Inc(ctx, exact)
	cNear.Inc(ctx, near)
	emitSum("exact_duplicates", exact)
	emitSum("near_duplicates", near)
	return nil
}

// Clusters groups the documents (PCollection<KV<uint64, nodeInfo>> keyed by
// order) by their component roots (PCollection<KV<uint64, uint64>>) into
// clusters. It returns the cluster lines, the removed lines, the dropped
// documents by input (PCollection<KV<int, int64>>), and count parts to sum
// and to take the maximum of (PCollection<KV<string, int64>>).
func Clusters(s beam.Scope, nodes, roots beam.PCollection) (clusters, removed, drops, sums, maxes beam.PCollection) {
	return clustersOf(s, nodes, roots, meter{})
}

// clustersOf is Clusters, its shuffles measured by m.
func clustersOf(s beam.Scope, nodes, roots beam.PCollection, m meter) (clusters, removed, drops, sums, maxes beam.PCollection) {
	s = s.Scope("Clusters")
	members := beam.ParDo(s, &memberFn{}, m.cogbk(s, "clusters", roots, nodes))
	return beam.ParDo5(s, &clusterFn{}, m.gbk(s, "clusters", members))
}
