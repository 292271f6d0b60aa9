package spill

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// randomRecords returns n records of width bytes with few distinct leading
// bytes, so that equal prefixes and skipped radix passes both occur.
func randomRecords(r *rand.Rand, n, width int) []byte {
	b := make([]byte, n*width)
	for i := range b {
		if i%width < width/2 {
			b[i] = byte(r.IntN(3))
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func split(b []byte, width int) [][]byte {
	var out [][]byte
	for i := 0; i < len(b); i += width {
		out = append(out, b[i:i+width])
	}
	return out
}

func TestRadixSortMatchesSortSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		width := 1 + r.IntN(16)
		n := r.IntN(300)
		recs := randomRecords(r, n, width)
		want := split(slices.Clone(recs), width)
		sort.Slice(want, func(i, j int) bool { return bytes.Compare(want[i], want[j]) < 0 })
		RadixSort(recs, make([]byte, len(recs)), width)
		if got := bytes.Join(want, nil); !bytes.Equal(recs, got) {
			t.Fatalf("trial %d width %d n %d: radix sort differs from sort.Slice", trial, width, n)
		}
	}
}

func TestSorterMatchesSortSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 30; trial++ {
		dir := t.TempDir()
		width := 1 + r.IntN(12)
		n := r.IntN(3000)
		budget := int64(r.IntN(4000))
		s, err := New(Config{Dir: dir, Width: width, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		recs := randomRecords(r, n, width)
		for rest := recs; len(rest) > 0; {
			k := min(len(rest)/width, r.IntN(100)) * width
			if k == 0 {
				k = len(rest)
			}
			if err := s.Add(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		if s.Records() != int64(n) {
			t.Fatalf("Records %d, want %d", s.Records(), n)
		}
		m, err := s.Sort()
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Runs()) > minFanIn { // a tiny budget's runs are merged minFanIn at a time first
			t.Fatalf("trial %d: a merge of %d runs under a budget of %d bytes", trial, len(s.Runs()), budget)
		}
		var got []byte
		for rec, ok := m.Next(); ok; rec, ok = m.Next() {
			got = append(got, rec...)
		}
		if err := m.Err(); err != nil {
			t.Fatal(err)
		}
		m.Close()
		want := split(recs, width)
		sort.Slice(want, func(i, j int) bool { return bytes.Compare(want[i], want[j]) < 0 })
		if !bytes.Equal(got, bytes.Join(want, nil)) {
			t.Fatalf("trial %d (width %d, n %d, %d runs): merge differs from sort.Slice", trial, width, n, len(s.Runs()))
		}
		if n*width > 64*width*2 && budget < 1000 && len(s.Runs()) == 0 {
			t.Fatalf("trial %d: %d bytes under budget %d wrote no run", trial, n*width, budget)
		}
		if err := s.Remove(); err != nil {
			t.Fatal(err)
		}
		left, _ := os.ReadDir(dir)
		if len(left) != 0 {
			t.Fatalf("files left after Remove: %v", left)
		}
	}
}

// faultFS fails the first operation whose name is op after after calls.
type faultFS struct {
	FS
	op    string
	after int
	calls int
}

var errInjected = errors.New("injected fault")

func (f *faultFS) hit(op string) bool {
	if op != f.op {
		return false
	}
	f.calls++
	return f.calls > f.after
}

type faultFile struct {
	File
	fs *faultFS
}

func (f faultFile) Write(p []byte) (int, error) {
	if f.fs.hit("write") {
		return 0, errInjected
	}
	return f.File.Write(p)
}

func (f faultFile) Sync() error {
	if f.fs.hit("sync") {
		return errInjected
	}
	return f.File.Sync()
}

func (f *faultFS) CreateTemp(dir, pattern string) (File, error) {
	if f.hit("create") {
		return nil, errInjected
	}
	file, err := f.FS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return faultFile{file, f}, nil
}

func (f *faultFS) Rename(a, b string) error {
	if f.hit("rename") {
		return errInjected
	}
	return f.FS.Rename(a, b)
}

func (f *faultFS) SyncDir(dir string) error {
	if f.hit("syncdir") {
		return errInjected
	}
	return f.FS.SyncDir(dir)
}

func (f *faultFS) Open(name string) (io.ReadCloser, error) {
	if f.hit("open") {
		return nil, errInjected
	}
	return f.FS.Open(name)
}

func TestSorterFaults(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	recs := randomRecords(r, 20000, 8)
	for _, op := range []string{"create", "write", "sync", "rename", "syncdir", "open"} {
		for _, after := range []int{0, 1, 3} {
			dir := t.TempDir()
			fs := &faultFS{FS: OS, op: op, after: after}
			s, err := New(Config{Dir: dir, Width: 8, Budget: 16 << 10, FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Add(recs)
			if err == nil {
				var m *Merger
				m, err = s.Sort()
				if err == nil {
					for _, ok := m.Next(); ok; _, ok = m.Next() {
					}
					err = m.Err()
					m.Close()
				}
			}
			if !errors.Is(err, errInjected) {
				t.Fatalf("%s after %d: error %v, want the injected fault", op, after, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s: error spans lines: %q", op, err)
			}
			// Only committed runs may remain; no temporary file.
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if !slices.Contains(s.Runs(), filepath.Join(dir, e.Name())) {
					t.Fatalf("%s after %d: stray file %s", op, after, e.Name())
				}
			}
		}
	}
}

func TestCorruptRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.run")
	w, err := Create(nil, path, 4)
	if err != nil {
		t.Fatal(err)
	}
	recs := randomRecords(rand.New(rand.NewPCG(7, 8)), 10000, 4)
	RadixSort(recs, make([]byte, len(recs)), 4)
	if err := w.Write(recs); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	full, _ := os.ReadFile(path)
	if _, err := Open(nil, path, 8); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("wrong width: %v, want ErrCorrupt", err)
	}
	for _, cut := range []int{len(full) / 2, len(full) - 3} {
		os.WriteFile(path, full[:cut], 0o644)
		m, err := Merge(nil, 4, path)
		if err == nil {
			for _, ok := m.Next(); ok; _, ok = m.Next() {
			}
			err = m.Err()
			m.Close()
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d of %d: %v, want ErrCorrupt", cut, len(full), err)
		}
	}
	flipped := slices.Clone(full)
	flipped[len(flipped)/2] ^= 0x40
	os.WriteFile(path, flipped, 0o644)
	m, err := Merge(nil, 4, path)
	if err == nil {
		n := 0
		for _, ok := m.Next(); ok; _, ok = m.Next() {
			n++
		}
		err = m.Err()
		m.Close()
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped byte: %v, want ErrCorrupt", err)
	}
}

func BenchmarkRadixSort(b *testing.B) {
	recs := randomRecords(rand.New(rand.NewPCG(9, 10)), 1<<16, 12)
	work := make([]byte, len(recs))
	tmp := make([]byte, len(recs))
	b.SetBytes(int64(len(recs)))
	for b.Loop() {
		copy(work, recs)
		RadixSort(work, tmp, 12)
	}
}
