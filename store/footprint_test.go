package store_test

import (
	"context"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

// The shipped corpus (testdata/licenses: 474 documents) indexed with the
// default scheme posts about 119 lookup keys per document and stores a
// record of about 1.5 KB per document (name, sketch, features). These
// tests write the same shape of data straight into a store: random keys,
// ids and record bytes, which compress no better than real sketches do.
const (
	corpusDocs      = 474
	keysPerDoc      = 119
	recordBytes     = 1500
	docsPerBatch    = 50
	smallStoreLimit = 5 << 20 // issue 13: the shipped corpus's index in at most 5 MB
)

// writeCorpus writes docs documents of that shape in batches, and returns
// the bytes of records and postings written (keys and values).
func writeCorpus(t testing.TB, s store.Store, seed uint64, docs int) int64 {
	t.Helper()
	st := rng.New(seed)
	b := s.NewBatch()
	defer b.Close()
	rec := make([]byte, recordBytes)
	var logical int64
	for d := range docs {
		id := st.Uint64()
		for range keysPerDoc {
			b.AddPosting(st.Uint64(), id)
		}
		for i := range rec {
			rec[i] = byte(st.Uint64())
		}
		b.PutDoc(id, rec)
		logical += keysPerDoc*17 + 9 + recordBytes
		if d%docsPerBatch == docsPerBatch-1 {
			if err := b.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return logical
}

// TestPebbleFootprint checks that the shipped corpus's index takes at most
// 5 MB on disk, with the options the commands use, both while the store is
// open (the write-ahead log holds the data) and after Close (the tables
// do). It used to take 217 MB: each write-ahead log was preallocated at
// 110% of the 64 MiB memtable, and up to five old logs were kept for
// reuse.
func TestPebbleFootprint(t *testing.T) {
	dir := t.TempDir()
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	logical := writeCorpus(t, s, 2, corpusDocs)
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Docs != corpusDocs || st.Postings != corpusDocs*keysPerDoc || st.MetaValues != 1 {
		t.Errorf("Stats counts %d documents, %d postings, %d metadata values; want %d, %d, 1", st.Docs, st.Postings, st.MetaValues, corpusDocs, corpusDocs*keysPerDoc)
	}
	if st.DiskBytes > smallStoreLimit {
		t.Errorf("open store takes %d bytes on disk, want at most %d", st.DiskBytes, smallStoreLimit)
	}
	t.Logf("open: %d bytes on disk for %d bytes of records and postings (log %d, tables %d)", st.DiskBytes, logical, st.LogBytes, st.TableBytes)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	du, err := store.DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if du > smallStoreLimit {
		t.Errorf("closed store takes %d bytes on disk, want at most %d", du, smallStoreLimit)
	}
	t.Logf("closed: %d bytes on disk, %.0f per document", du, float64(du)/corpusDocs)
}

// TestPebbleBytesPerDocument measures a larger store after Compact: its
// size per document must stay within the records themselves (5% for
// tables, Bloom filters and index blocks) plus 24 bytes per posting (a
// random 8-byte lookup key and 8-byte id take at least 14 bytes once
// sorted; Pebble's columnar blocks take about 20) plus 64 bytes per
// document.
func TestPebbleBytesPerDocument(t *testing.T) {
	docs := 4000
	if testing.Short() {
		docs = 1000
	}
	dir := t.TempDir()
	s, err := store.OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeCorpus(t, s, 3, docs)
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	du, err := store.DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	perDoc := float64(du) / float64(docs)
	limit := 1.05*recordBytes + 24*keysPerDoc + 64
	t.Logf("%d documents: %d bytes on disk, %.0f per document (limit %.0f); postings %.1f bytes each, records %.0f bytes each in tables",
		docs, du, perDoc, limit, float64(st.PostingTableBytes)/float64(st.Postings), float64(st.DocTableBytes)/float64(st.Docs))
	if perDoc > limit {
		t.Errorf("%.0f bytes per document, want at most %.0f", perDoc, limit)
	}
}
