package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

// corruptModel is what the small store of TestPebbleCorruption holds.
type corruptModel struct {
	postings map[uint64][]uint64
	docs     map[uint64]string
}

// buildSmallStore writes a store of 300 postings, 40 documents and a
// metadata value in dir, in a few batches.
func buildSmallStore(t *testing.T, s *store.Pebble) corruptModel {
	t.Helper()
	m := corruptModel{postings: map[uint64][]uint64{}, docs: map[uint64]string{}}
	st := rng.New(rng.Key(5, 5))
	b := s.NewBatch()
	defer b.Close()
	for i := range 300 {
		key, id := st.Intn(60)*0x9e3779b97f4a7c15, st.Intn(40)
		if !slices.Contains(m.postings[key], id) {
			m.postings[key] = append(m.postings[key], id)
		}
		b.AddPosting(key, id)
		if i%50 == 49 {
			if err := b.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id := range uint64(40) {
		rec := strings.Repeat(fmt.Sprint("record ", id, " "), 30)
		m.docs[id] = rec
		b.PutDoc(id, []byte(rec))
	}
	b.PutMeta("config", []byte("k=84"))
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, ids := range m.postings {
		slices.Sort(ids)
	}
	return m
}

// readAll opens dir and reads everything in it through every read path,
// returning the first error, or an error if the data differs from m.
func readAll(dir string, m corruptModel) (err error) {
	ctx := context.Background()
	s, err := store.OpenPebble(dir, &store.PebbleOptions{CacheBytes: 1 << 20})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil && !errors.Is(cerr, store.ErrClosed) {
			err = cerr
		}
	}()
	keys := slices.Sorted(maps.Keys(m.postings))
	for _, k := range keys {
		ids, err := s.Postings(ctx, k, nil)
		if err != nil {
			return err
		}
		if !slices.Equal(ids, m.postings[k]) {
			return fmt.Errorf("silently wrong: postings %x = %v, want %v", k, ids, m.postings[k])
		}
	}
	err = s.LookupPostings(ctx, keys, func(i int, ids []uint64) error {
		if !slices.Equal(ids, m.postings[keys[i]]) {
			return fmt.Errorf("silently wrong: lookup %x = %v", keys[i], ids)
		}
		return nil
	})
	if err != nil {
		return err
	}
	n := 0
	err = s.ScanPostings(ctx, func(key, id uint64) error {
		n++
		if !slices.Contains(m.postings[key], id) {
			return fmt.Errorf("silently wrong: scanned posting %x %d", key, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	want := 0
	for _, ids := range m.postings {
		want += len(ids)
	}
	if n != want {
		return fmt.Errorf("silently wrong: scanned %d postings, want %d", n, want)
	}
	got := map[uint64]string{}
	if err := s.ScanDocs(ctx, func(id uint64, rec []byte) error { got[id] = string(rec); return nil }); err != nil {
		return err
	}
	if !maps.Equal(got, m.docs) {
		return fmt.Errorf("silently wrong: %d documents scanned, want %d", len(got), len(m.docs))
	}
	for id, want := range m.docs {
		rec, ok, err := s.Doc(ctx, id, nil)
		if err != nil {
			return err
		}
		if !ok || string(rec) != want {
			return fmt.Errorf("silently wrong: document %d", id)
		}
	}
	if v, ok, err := s.Meta(ctx, "config", nil); err != nil {
		return err
	} else if !ok || string(v) != "k=84" {
		return fmt.Errorf("silently wrong: meta %q %v", v, ok)
	}
	return nil
}

// flipBit flips one bit of file name in dir.
func flipBit(t *testing.T, dir, name string, bit int64) {
	t.Helper()
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[bit/8] ^= 1 << (bit % 8)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPebbleCorruption flips one bit in each file of a small store, at
// positions spread over the file (the first and last bytes included), and
// opens and reads everything: there must be no panic (a recovered one
// fails the test) and no hang, and the outcome is either the right data
// or an error; for a table or MANIFEST an error must wrap ErrCorrupt and
// name the file. It does so for a store closed cleanly (its data in
// tables) and for one copied while open after its commits (its data in
// the write-ahead log, as after a crash).
func TestPebbleCorruption(t *testing.T) {
	for _, clean := range []bool{true, false} {
		name := "closed"
		if !clean {
			name = "crashed"
		}
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "index")
			s := openPebble(t, src)
			m := buildSmallStore(t, s)
			if clean {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				src = copyStore(t, src) // a snapshot of the files of an open store
				defer s.Close()
			}
			if err := readAll(copyStore(t, src), m); err != nil {
				t.Fatalf("the intact store: %v", err)
			}
			entries, _ := os.ReadDir(src)
			st := rng.New(rng.Key(9, 9))
			outcomes := map[string]int{}
			for _, e := range entries {
				info, _ := e.Info()
				size := info.Size()
				if e.IsDir() || size == 0 || e.Name() == "LOCK" || e.Name() == "neardup.pid" {
					continue
				}
				bits := []int64{0, size*8 - 1}
				for range 10 {
					bits = append(bits, int64(st.Intn(uint64(size*8))))
				}
				for _, bit := range bits {
					dir := copyStore(t, src)
					flipBit(t, dir, e.Name(), bit)
					err, _ := within(t, fmt.Sprintf("reading with bit %d of %s flipped", bit, e.Name()), func() (err error) {
						defer func() {
							if r := recover(); r != nil {
								err = fmt.Errorf("PANIC: %v", r)
							}
						}()
						return readAll(dir, m)
					})
					kind := kindOf(e.Name())
					switch {
					case err == nil:
						outcomes[kind+": intact"]++
					case strings.HasPrefix(err.Error(), "PANIC") || strings.HasPrefix(err.Error(), "silently wrong"):
						t.Errorf("bit %d of %s: %v", bit, e.Name(), err)
					case strings.Contains(err.Error(), "\n"):
						t.Errorf("bit %d of %s: error of several lines: %q", bit, e.Name(), err)
					case kind == "table" || kind == "manifest":
						if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), e.Name()) || !strings.Contains(err.Error(), "neardup index check --store") {
							t.Errorf("bit %d of %s: %v; want ErrCorrupt naming the file and the check command", bit, e.Name(), err)
						}
						if outcomes[kind+": corrupt"]++; outcomes[kind+": corrupt"] == 1 {
							t.Logf("for example: %v", err)
						}
					default:
						if errors.Is(err, store.ErrCorrupt) {
							outcomes[kind+": corrupt"]++
						} else {
							outcomes[kind+": error"]++
							t.Logf("bit %d of %s: %v", bit, e.Name(), err)
						}
					}
				}
			}
			t.Logf("outcomes: %v", outcomes)
		})
	}
}

func kindOf(name string) string {
	switch {
	case strings.HasSuffix(name, ".sst"):
		return "table"
	case strings.HasPrefix(name, "MANIFEST"):
		return "manifest"
	case strings.HasSuffix(name, ".log"):
		return "wal"
	case strings.HasPrefix(name, "OPTIONS"):
		return "options"
	}
	return name
}

// TestPebbleRepair checks that a store whose log is damaged is refused,
// and that Repair opens it with what precedes the damage.
func TestPebbleRepair(t *testing.T) {
	src := filepath.Join(t.TempDir(), "index")
	s := openPebble(t, src)
	m := buildSmallStore(t, s)
	dir := copyStore(t, src) // as after a crash: the data is in the log
	s.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, _ := e.Info(); strings.HasSuffix(e.Name(), ".log") && info.Size() > 100 {
			flipBit(t, dir, e.Name(), (info.Size()-40)*8) // in the last record: the documents
		}
	}
	if _, err := store.OpenPebble(dir, nil); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), ".log") {
		t.Fatalf("open with a damaged log: %v, want ErrCorrupt naming the log", err)
	}
	s, err := store.OpenPebble(dir, &store.PebbleOptions{Repair: true})
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	defer s.Close()
	ids, err := s.Postings(context.Background(), 0, nil)
	if err != nil || !slices.Equal(ids, m.postings[0]) {
		t.Errorf("postings committed before the damage: %v %v, want %v", ids, err, m.postings[0])
	}
	if _, ok, _ := s.Doc(context.Background(), 1, nil); ok {
		t.Error("a document of the damaged record is there")
	}
}
