package dedup

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

// plantedCorpus returns n documents of 60 random words from a vocabulary of
// 5000, where every tenth is a near copy of an earlier one (a few words
// changed) and every 25th an exact copy.
func plantedCorpus(n int) []*corpus.Document {
	s := rng.New(42)
	docs := make([]*corpus.Document, 0, n)
	for i := range n {
		var body string
		switch {
		case i > 0 && i%25 == 0:
			body = string(docs[s.Intn(uint64(i))].Body)
		case i > 0 && i%10 == 0:
			w := strings.Fields(string(docs[s.Intn(uint64(i))].Body))
			for range 3 {
				w[s.Intn(uint64(len(w)))] = fmt.Sprintf("x%d", s.Intn(5000))
			}
			body = strings.Join(w, " ")
		default:
			w := make([]string, 60)
			for j := range w {
				w[j] = fmt.Sprintf("w%d", s.Intn(5000))
			}
			body = strings.Join(w, " ")
		}
		docs = append(docs, &corpus.Document{ID: fmt.Sprintf("doc%05d", i), Body: []byte(body)})
	}
	return docs
}

// outputs renders what a command writes of a result.
func outputs(t *testing.T, res *Result) (pairs, clusters string) {
	t.Helper()
	var p, c bytes.Buffer
	if err := WritePairs(&p, res.Pairs); err != nil {
		t.Fatal(err)
	}
	if err := WriteClusters(&c, res.Clusters); err != nil {
		t.Fatal(err)
	}
	return p.String(), c.String()
}

// A run under a memory budget small enough to spill the sketches and
// several sorted runs of keys and pairs gives byte-identical pairs and
// clusters, and the same kept set and counts, as the run in memory; the
// work directory is emptied unless KeepWork.
func TestExternalEqualsInMemory(t *testing.T) {
	docs := plantedCorpus(4000)
	for _, exact := range []ExactMode{ExactNever, ExactAlways} {
		mem, err := Run(bg, docsOf(docs...), Options{Exact: exact})
		if err != nil {
			t.Fatal(err)
		}
		if mem.Summary.External {
			t.Fatal("a run without a budget went out of core")
		}
		work := t.TempDir()
		ext, err := Run(bg, docsOf(docs...), Options{Exact: exact, Memory: 256 << 10, WorkDir: work})
		if err != nil {
			t.Fatal(err)
		}
		if !ext.Summary.External || ext.Summary.Spilled == 0 {
			t.Fatalf("exact %d: budget 256 KiB: external %v, spilled %d", exact, ext.Summary.External, ext.Summary.Spilled)
		}
		mp, mc := outputs(t, mem)
		ep, ec := outputs(t, ext)
		if mp != ep || mc != ec {
			t.Fatalf("exact %d: out of core differs: pairs equal %v, clusters equal %v", exact, mp == ep, mc == ec)
		}
		if mem.Summary.Near == 0 || mem.Summary.Exact == 0 {
			t.Fatalf("planted corpus found %d near and %d exact duplicates", mem.Summary.Near, mem.Summary.Exact)
		}
		if !maps.Equal(mem.Duplicate, ext.Duplicate) {
			t.Fatal("kept sets differ")
		}
		ms, es := mem.Summary, ext.Summary
		if ms.Kept != es.Kept || ms.Candidates != es.Candidates || ms.Pairs != es.Pairs || ms.Clusters != es.Clusters {
			t.Fatalf("summaries differ: memory %+v, external %+v", ms, es)
		}
		var stageSpill int64
		for _, st := range es.Stages {
			if st.PeakMemory <= 0 {
				t.Fatalf("stage %s: peak memory %d", st.Name, st.PeakMemory)
			}
			stageSpill += st.Spilled
		}
		if stageSpill != es.Spilled {
			t.Fatalf("stages spilled %d bytes in all, summary says %d", stageSpill, es.Spilled)
		}
		if left, _ := os.ReadDir(work); len(left) != 0 {
			t.Fatalf("work files left: %v", left)
		}
		t.Logf("exact %d: %d docs, %d candidates, %d pairs, %d bytes spilled (%.0f per document)", exact, len(docs), es.Candidates, es.Pairs, es.Spilled, float64(es.Spilled)/float64(len(docs)))
	}
	// What a killed run leaves (a half-written run, a stale sketch file)
	// is removed; other files stay.
	work := t.TempDir()
	for _, name := range []string{".keys-000003.run.tmp123", "pairs-000000.run", "sketches.bin", "mine.txt"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever, Memory: 256 << 10, WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(work); len(left) != 1 || left[0].Name() != "mine.txt" {
		t.Fatalf("work directory after a run over a killed run's files: %v", left)
	}
	mem, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever})
	if err != nil {
		t.Fatal(err)
	}
	mp, mc := outputs(t, mem)
	if ap, ac := outputs(t, again); ap != mp || ac != mc {
		t.Fatal("a run over a killed run's files differs")
	}
	work = t.TempDir()
	if _, err := Run(bg, docsOf(docs[:500]...), Options{Memory: 64 << 10, WorkDir: work, KeepWork: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(work + "/sketches.bin"); err != nil {
		t.Fatalf("KeepWork: %v", err)
	}
}

// With a store (fresh, then holding the first run's index), the out-of-core
// run gives the in-memory run's output too: the query and add stages read
// the sketches back from the work directory.
func TestExternalWithStore(t *testing.T) {
	docs := plantedCorpus(1500)
	first, second := docs[:1000], docs[700:]
	results := map[bool][2]string{}
	for _, ext := range []bool{false, true} {
		st := store.NewMemory()
		o := Options{Store: st, Exact: ExactNever}
		if ext {
			o.Memory, o.WorkDir = 128<<10, t.TempDir()
		}
		if _, err := Run(bg, docsOf(first...), o); err != nil {
			t.Fatal(err)
		}
		res, err := Run(bg, docsOf(second...), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.External != ext {
			t.Fatalf("external %v, want %v", res.Summary.External, ext)
		}
		p, c := outputs(t, res)
		results[ext] = [2]string{p, c}
	}
	if results[false] != results[true] {
		t.Fatal("out of core with a store differs from in memory")
	}
	if !strings.Contains(results[false][0], `"stored":true`) {
		t.Fatal("the second run matched nothing stored")
	}
}

// TestExternalExportBands: out of core, the sketches are read back from the
// work directory for the band-key export, which is byte for byte the
// export of the run in memory.
func TestExternalExportBands(t *testing.T) {
	docs := plantedCorpus(2000)
	var mem, ext bytes.Buffer
	if _, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever, ExportBands: &mem}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever, Memory: 128 << 10, WorkDir: t.TempDir(), ExportBands: &ext})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summary.External {
		t.Fatal("the run with a 128 KiB budget stayed in memory")
	}
	if mem.Len() == 0 || !bytes.Equal(mem.Bytes(), ext.Bytes()) {
		t.Fatalf("exports differ: %d bytes in memory, %d out of core", mem.Len(), ext.Len())
	}
}

// Out of core, exact verification reads the feature sets of the
// candidates' documents back from the feature file, in one pass per
// block of documents: with blocks and chunks made tiny (many passes, many
// chunks, pairs within a block and across blocks) and with the default
// ExactAuto under a budget (whose ExactBudget, far smaller than the
// corpus's features, no longer turns exact verification off), the pairs
// and clusters are those of the exact run in memory, byte for byte, and
// the summary says how they were verified.
func TestExternalExactOutOfCore(t *testing.T) {
	docs := plantedCorpus(3000)
	mem, err := Run(bg, docsOf(docs...), Options{Exact: ExactAlways})
	if err != nil {
		t.Fatal(err)
	}
	if mem.Summary.Verification != VerifyExact {
		t.Fatalf("in memory: verification %q", mem.Summary.Verification)
	}
	mp, mc := outputs(t, mem)
	for _, c := range []struct {
		name  string
		o     Options
		sizes *[3]int64
	}{
		{"always, blocks of 2 KiB", Options{Exact: ExactAlways, Memory: 256 << 10}, &[3]int64{2 << 10, 1 << 10, 7}},
		{"auto, exact budget 1000 ids", Options{ExactBudget: 1000, Memory: 256 << 10}, nil},
		{"auto, one block", Options{Memory: 256 << 10}, &[3]int64{1 << 30, 1 << 30, 1 << 20}},
	} {
		exactTestSizes = c.sizes
		c.o.WorkDir = t.TempDir()
		ext, err := Run(bg, docsOf(docs...), c.o)
		exactTestSizes = nil
		if err != nil {
			t.Fatal(err)
		}
		if !ext.Summary.External || !ext.Summary.ExactCheck || ext.Summary.Verification != VerifyExact {
			t.Fatalf("%s: external %v, exact %v, verification %q", c.name, ext.Summary.External, ext.Summary.ExactCheck, ext.Summary.Verification)
		}
		ep, ec := outputs(t, ext)
		if mp != ep || mc != ec {
			t.Fatalf("%s: out of core differs: pairs equal %v, clusters equal %v", c.name, mp == ep, mc == ec)
		}
		if mem.Summary.Candidates != ext.Summary.Candidates {
			t.Fatalf("%s: %d candidates, in memory %d", c.name, ext.Summary.Candidates, mem.Summary.Candidates)
		}
		if left, _ := os.ReadDir(c.o.WorkDir); len(left) != 0 {
			t.Fatalf("%s: work files left: %v", c.name, left)
		}
	}
	// In memory without a budget, ExactAuto still falls back to the
	// estimate past ExactBudget, and says so.
	est, err := Run(bg, docsOf(docs...), Options{ExactBudget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if est.Summary.ExactCheck || est.Summary.Verification != VerifyEstimate {
		t.Fatalf("no budget, exact budget 1000: exact %v, verification %q", est.Summary.ExactCheck, est.Summary.Verification)
	}
}

// A damaged feature file is an error, never a wrong answer.
func TestFeatureFileCorrupt(t *testing.T) {
	var ids []uint64
	var ws []feature.Feature
	good := appendFeatureSet(nil, &featureSet{features: []uint64{3, 9, 1 << 60}})
	f, err := decodeFeatureSet(good, &ids, &ws)
	if err != nil || !slices.Equal(f.features, []uint64{3, 9, 1 << 60}) {
		t.Fatalf("round trip: %v, %v", f.features, err)
	}
	// The fixed-width records this release writes, beside the delta
	// records of earlier releases' files.
	fixed := appendFeatureSetFixed(nil, &featureSet{features: []uint64{3, 9, 1 << 60}})
	if len(fixed) != 2+3*8 || fixed[0] != flagFeatures|flagFixed {
		t.Fatalf("fixed-width record %x", fixed)
	}
	if f, err := decodeFeatureSet(fixed, &ids, &ws); err != nil || !slices.Equal(f.features, []uint64{3, 9, 1 << 60}) {
		t.Fatalf("fixed round trip: %v, %v", f.features, err)
	}
	for _, bad := range [][]byte{nil, good[:len(good)-1], append(slices.Clone(good), 0), {flagFeatures, 0xff}, {flagWeighted, 2, 1},
		fixed[:len(fixed)-1], append(slices.Clone(fixed), 0), {flagFeatures | flagFixed, 2, 1, 2, 3, 4, 5, 6, 7, 8}} {
		if _, err := decodeFeatureSet(bad, &ids, &ws); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

// A run whose feature sets pass their share (here Options.ExactBudget,
// 1000 ids, under a budget the rest of the run fits in) stays in memory
// and sends only the feature sets to the feature file, reading back
// those of the candidates' documents for exact verification (in chunks
// made tiny, many of them): the pairs and clusters are those of the run
// with everything in memory, byte for byte, verification is exact, and
// the feature file is removed. With a store holding an earlier run's
// index with feature sets, the queries and the adds read them back too,
// and match the run in memory.
func TestFeaturesOnDisk(t *testing.T) {
	docs := plantedCorpus(3000)
	mem, err := Run(bg, docsOf(docs...), Options{Exact: ExactAlways})
	if err != nil {
		t.Fatal(err)
	}
	mp, mc := outputs(t, mem)
	for _, sizes := range []*[3]int64{nil, {0, 1 << 10, 0}} {
		work := t.TempDir()
		exactTestSizes = sizes
		res, err := Run(bg, docsOf(docs...), Options{Memory: 1 << 30, ExactBudget: 1000, WorkDir: work})
		exactTestSizes = nil
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		if s.External || !s.ExactCheck || s.Verification != VerifyExact || s.Spilled == 0 {
			t.Fatalf("chunks %v: external %v, exact %v, verification %q, spilled %d", sizes, s.External, s.ExactCheck, s.Verification, s.Spilled)
		}
		if p, c := outputs(t, res); p != mp || c != mc {
			t.Fatalf("chunks %v: feature sets on disk differ: pairs equal %v, clusters equal %v", sizes, p == mp, c == mc)
		}
		if s.Candidates != mem.Summary.Candidates {
			t.Fatalf("chunks %v: %d candidates, in memory %d", sizes, s.Candidates, mem.Summary.Candidates)
		}
		if left, _ := os.ReadDir(work); len(left) != 0 {
			t.Fatalf("chunks %v: work files left: %v", sizes, left)
		}
	}

	first, second := docs[:2000], docs[1500:]
	results := map[bool][2]string{}
	for _, disk := range []bool{false, true} {
		st := store.NewMemory()
		o := Options{Store: st, StoreFeatures: true, Exact: ExactAlways}
		if disk {
			o.Memory, o.ExactBudget, o.WorkDir = 1<<30, 1000, t.TempDir()
		}
		if _, err := Run(bg, docsOf(first...), o); err != nil {
			t.Fatal(err)
		}
		res, err := Run(bg, docsOf(second...), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.External || disk != (res.Summary.Spilled > 0) {
			t.Fatalf("feature sets on disk %v: external %v, spilled %d", disk, res.Summary.External, res.Summary.Spilled)
		}
		p, c := outputs(t, res)
		results[disk] = [2]string{p, c}
	}
	if results[false] != results[true] {
		t.Fatal("with a store, feature sets on disk differ from in memory")
	}
	if !strings.Contains(results[false][0], `"stored":true`) || strings.Contains(results[false][0], `"exact":false`) {
		t.Fatal("the second run matched nothing stored, or not exactly")
	}
}

// storedRecords runs docs in memory (ext false) or out of core into a
// store of sketches and returns its records by name, each with the
// identity fingerprint zeroed (keyed by each store's own key).
func storedRecords(t *testing.T, docs []*corpus.Document, ext bool) map[string]*index.Doc {
	t.Helper()
	st := store.NewMemory()
	o := Options{Store: st}
	if ext {
		o.Memory, o.WorkDir = 128<<10, t.TempDir()
	}
	res, err := Run(bg, docsOf(docs...), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.External != ext {
		t.Fatalf("external %v, want %v", res.Summary.External, ext)
	}
	recs := map[string]*index.Doc{}
	if err := st.ScanDocs(bg, func(_ uint64, rec []byte) error {
		d, err := index.DecodeDoc(rec)
		if err != nil {
			return err
		}
		d.Fingerprint = identity.Fingerprint{}
		recs[d.Name] = d
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return recs
}

// sameRecords fails unless the runs in memory and out of core stored the
// same records.
func sameRecords(t *testing.T, mem, ext map[string]*index.Doc) {
	t.Helper()
	if len(mem) != len(ext) {
		t.Fatalf("%d records in memory, %d out of core", len(mem), len(ext))
	}
	for name, m := range mem {
		if e := ext[name]; !reflect.DeepEqual(m, e) {
			t.Fatalf("%s: the out-of-core run stores another record than the run in memory:\n%+v\n%+v", name, m, e)
		}
	}
}

// An out-of-core run's store of sketches (no StoreFeatures) keeps the
// short documents' feature ids (index.Doc.TrimFeatures), as a run in
// memory's does: the records are the same (but for the identity
// fingerprints, keyed by each store's own key), and every
// document of the planted corpus (56 shingles, well under the 256 a
// 128-sample sketch's bytes hold) has its ids, so later runs and queries
// verify it exactly.
func TestExternalStoreKeepsShortFeatures(t *testing.T) {
	docs := plantedCorpus(1500)
	records := map[bool]map[string]*index.Doc{}
	for _, ext := range []bool{false, true} {
		recs, withIDs := storedRecords(t, docs, ext), 0
		for _, d := range recs {
			if len(d.Features) > 0 {
				withIDs++
			}
		}
		if len(recs) == 0 || withIDs != len(recs) {
			t.Fatalf("external %v: %d of %d stored documents keep their feature ids, want all", ext, withIDs, len(recs))
		}
		records[ext] = recs
	}
	sameRecords(t, records[false], records[true])
}

// The out-of-core store reads a document's feature set back only when
// index.Cheap may keep it, judged by the recorded size (docLoader.mayBeCheap).
// At the bound itself the records must still match a run in memory's:
// documents of 254 to 258 distinct 5-shingles, around the 256 ids a
// 128-sample sketch's bytes hold, keep their ids up to 256 and not past it,
// out of core as in memory. A bound one too tight drops the ids of the
// 256-shingle documents; one too loose only reads more.
func TestExternalStoreShortFeaturesAtTheBound(t *testing.T) {
	s := rng.New(7)
	var docs []*corpus.Document
	want := map[string]bool{} // name: keeps its ids
	for i := range 300 {
		n := 254 + i%5 // distinct shingles
		w := make([]string, n+4)
		for j := range w {
			w[j] = fmt.Sprintf("b%d_%d", i, s.Intn(1<<40)) // distinct words: n distinct shingles
		}
		name := fmt.Sprintf("doc%03d-%d", i, n)
		docs = append(docs, &corpus.Document{ID: name, Body: []byte(strings.Join(w, " "))})
		want[name] = n <= 256
	}
	docs = append(docs, plantedCorpus(1200)...)
	records := map[bool]map[string]*index.Doc{}
	for _, ext := range []bool{false, true} {
		recs := storedRecords(t, docs, ext)
		for name, keeps := range want {
			d := recs[name]
			if d == nil {
				t.Fatalf("external %v: %s not stored", ext, name)
			}
			if (len(d.Features) > 0) != keeps {
				t.Fatalf("external %v: %s keeps %d feature ids, want them kept: %v", ext, name, len(d.Features), keeps)
			}
		}
		records[ext] = recs
	}
	sameRecords(t, records[false], records[true])
}
