package dedup

import (
	"testing"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/store"
)

type collect struct{ ids []string }

func (c *collect) Write(d *corpus.Document) error { c.ids = append(c.ids, d.ID); return nil }
func (*collect) Close() error                     { return nil }

// TestKeepNone drops every member of every cluster: the same pairs and
// clusters as KeepFirst, each cluster's first member dropped too, and the
// kept corpus holds no member of any cluster.
func TestKeepNone(t *testing.T) {
	first, err := Run(bg, read(sampleCorpus), Options{})
	if err != nil {
		t.Fatal(err)
	}
	none, err := Run(bg, read(sampleCorpus), Options{Cluster: ClusterOptions{Keep: cluster.KeepNone}})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Clusters) == 0 || len(none.Clusters) != len(first.Clusters) || len(none.Pairs) != len(first.Pairs) {
		t.Fatalf("clusters %d / %d, pairs %d / %d", len(none.Clusters), len(first.Clusters), len(none.Pairs), len(first.Pairs))
	}
	members := map[string]bool{}
	for i, c := range none.Clusters {
		if c.Kept != "" {
			t.Errorf("cluster %d keeps %q", c.ID, c.Kept)
		}
		if c.Members[0].Name != first.Clusters[i].Kept || len(c.Members) != len(first.Clusters[i].Members) {
			t.Errorf("cluster %d: representative %q, KeepFirst kept %q", c.ID, c.Members[0].Name, first.Clusters[i].Kept)
		}
		for _, m := range c.Members {
			members[m.Name] = true
			if !none.Duplicate[m.Seq] {
				t.Errorf("cluster %d: member %q not dropped", c.ID, m.Name)
			}
		}
	}
	s, f := none.Summary, first.Summary
	if s.Duplicates != int64(len(members)) || s.Kept != f.Kept-int64(f.Clusters) || s.Read != s.Kept+s.Duplicates+s.Rejected {
		t.Errorf("summary: kept %d, duplicates %d, %d members; KeepFirst kept %d in %d clusters", s.Kept, s.Duplicates, len(members), f.Kept, f.Clusters)
	}
	var w collect
	n, err := WriteKept(bg, read(sampleCorpus), none, &w)
	if err != nil || n != s.Kept {
		t.Fatalf("WriteKept: %d of %d, %v", n, s.Kept, err)
	}
	for _, id := range w.ids {
		if members[id] {
			t.Errorf("cluster member %q written", id)
		}
	}
}

// Under KeepNone a document of an earlier run stays (this run cannot drop
// it) and is the cluster's kept member; this run's near-duplicate of it
// is dropped.
func TestKeepNoneStored(t *testing.T) {
	st := store.NewMemory()
	if _, err := Run(bg, docsOf(&corpus.Document{ID: "old", Body: []byte(body(1, 60))}), Options{Store: st}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(bg, docsOf(&corpus.Document{ID: "new", Body: []byte(body(1, 60) + " extra")}, &corpus.Document{ID: "other", Body: []byte(body(2, 60))}),
		Options{Store: st, Cluster: ClusterOptions{Keep: cluster.KeepNone}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Clusters) != 1 || res.Clusters[0].Kept != "old" || res.Summary.Kept != 1 || res.Summary.Duplicates != 1 {
		t.Fatalf("clusters %+v, summary kept %d duplicates %d", res.Clusters, res.Summary.Kept, res.Summary.Duplicates)
	}
}

// The Keeper detects an input that changed between the two readings: a
// document with another id at a position, or fewer documents.
func TestKeeperChangedInput(t *testing.T) {
	a := []*corpus.Document{{ID: "a", Body: []byte("x y z")}, {ID: "b", Body: []byte("p q r")}}
	res, err := Run(bg, docsOf(a...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := NewKeeper(res)
	if !k.Keep(0, a[0]) || !k.Keep(1, a[1]) || k.Err() != nil {
		t.Fatalf("unchanged input: %v", k.Err())
	}
	k = NewKeeper(res)
	if k.Keep(0, a[1]) || k.Err() == nil {
		t.Error("another id at position 0 kept")
	}
	k = NewKeeper(res)
	k.Keep(0, a[0])
	if k.Err() == nil {
		t.Error("fewer documents not reported")
	}
}
