package spill

import (
	"bytes"
	"container/heap"
	"fmt"
	"path/filepath"
)

// RadixSort sorts the fixed-width records in recs by their bytes, using
// tmp (at least len(recs) bytes) as scratch, least significant byte first;
// passes over a byte position where every record holds the same value are
// skipped. It allocates nothing and is stable.
func RadixSort(recs, tmp []byte, width int) {
	n := len(recs) / width
	if n < 2 {
		return
	}
	tmp = tmp[:len(recs)]
	src, dst := recs, tmp
	var count [256]int
	for pos := width - 1; pos >= 0; pos-- {
		count = [256]int{}
		for i := pos; i < len(src); i += width {
			count[src[i]]++
		}
		if count[src[pos]] == n {
			continue
		}
		sum := 0
		for b := range count {
			c := count[b]
			count[b] = sum
			sum += c
		}
		for i := 0; i < len(src); i += width {
			o := count[src[i+pos]] * width
			count[src[i+pos]]++
			copy(dst[o:o+width], src[i:i+width])
		}
		src, dst = dst, src
	}
	if &src[0] != &recs[0] {
		copy(recs, src)
	}
}

// Sorter sorts fixed-width records under a memory budget: records go to a
// buffer; a full buffer is sorted and written as a run file in the work
// directory; Sort merges the runs and the buffer.
type Sorter struct {
	fs      FS
	dir     string
	prefix  string
	width   int
	buf     []byte
	tmp     []byte
	cap     int
	budget  int64
	merged  int // runs written by merging runs (Sort)
	runs    []string
	records int64
	spilled int64
}

// Config is a Sorter's configuration.
type Config struct {
	// Dir is the directory of the run files; it must exist.
	Dir string
	// Prefix names the run files: Prefix-000000.run, ...
	Prefix string
	// Width is the record size in bytes.
	Width int
	// Budget is the memory the buffers may take, in bytes (half for the
	// records, half for the radix sort's scratch); at least 64 records.
	Budget int64
	// FS is the file system (nil: OS).
	FS FS
}

// New returns a Sorter.
func New(c Config) (*Sorter, error) {
	if c.Width <= 0 {
		return nil, fmt.Errorf("spill: record width %d", c.Width)
	}
	if c.FS == nil {
		c.FS = OS
	}
	if c.Prefix == "" {
		c.Prefix = "run"
	}
	n := int(c.Budget / int64(2*c.Width))
	n = max(n, 64)
	return &Sorter{fs: c.FS, dir: c.Dir, prefix: c.Prefix, width: c.Width, cap: n * c.Width, budget: c.Budget}, nil
}

// Add appends records (a whole number of them), spilling the buffer when it
// is full.
func (s *Sorter) Add(recs []byte) error {
	if len(recs)%s.width != 0 {
		return fmt.Errorf("spill: %d bytes is not a whole number of %d-byte records", len(recs), s.width)
	}
	for len(recs) > 0 {
		if s.buf == nil {
			// It grows to the budget as records come: a large budget
			// costs nothing for a small sort.
			s.buf = make([]byte, 0, min(s.cap, 1<<20))
		}
		k := min(len(recs), s.cap-len(s.buf))
		if need := len(s.buf) + k; need > cap(s.buf) {
			nb := make([]byte, len(s.buf), min(s.cap, max(need, 2*cap(s.buf))))
			copy(nb, s.buf)
			s.buf = nb
		}
		s.buf = append(s.buf, recs[:k]...)
		recs = recs[k:]
		s.records += int64(k / s.width)
		if len(s.buf) == s.cap {
			if err := s.spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Sorter) sortBuf() {
	if cap(s.tmp) < len(s.buf) {
		s.tmp = make([]byte, len(s.buf))
	}
	RadixSort(s.buf, s.tmp, s.width)
}

func (s *Sorter) spill() error {
	s.sortBuf()
	path := filepath.Join(s.dir, fmt.Sprintf("%s-%06d.run", s.prefix, len(s.runs)))
	w, err := Create(s.fs, path, s.width)
	if err != nil {
		return err
	}
	if err := w.Write(s.buf); err != nil {
		w.Abort()
		return err
	}
	n, err := w.Commit()
	if err != nil {
		return err
	}
	s.runs = append(s.runs, path)
	s.spilled += n
	s.buf = s.buf[:0]
	return nil
}

// Records is the number of records added.
func (s *Sorter) Records() int64 { return s.records }

// Flush sorts what is buffered and writes it as a run, so that Runs holds
// every record added: a resumable run keeps them as a stage's output and
// merges them later with Merge.
func (s *Sorter) Flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	return s.spill()
}

// Runs lists the run files written so far.
func (s *Sorter) Runs() []string { return s.runs }

// Spilled is the number of compressed bytes written to run files.
func (s *Sorter) Spilled() int64 { return s.spilled }

// Sort sorts what remains in the buffer and returns an iterator over all
// records in order. The Sorter must not be used after it.
func (s *Sorter) Sort() (*Merger, error) {
	s.sortBuf()
	// A merge holds a reader per run (about mergeRunBytes): past what the
	// budget allows (8 runs at least: each pass over the records costs
	// their compression again), runs are first merged into longer ones,
	// fanIn at a time.
	fanIn := max(minFanIn, int(s.budget/mergeRunBytes))
	for len(s.runs) > fanIn {
		if err := s.mergeRuns(fanIn); err != nil {
			return nil, err
		}
	}
	rs := make([]*Reader, 0, len(s.runs))
	for _, p := range s.runs {
		r, err := Open(s.fs, p, s.width)
		if err != nil {
			for _, r := range rs {
				r.Close()
			}
			return nil, err
		}
		rs = append(rs, r)
	}
	m := newMerger(rs, s.buf, s.width)
	s.buf, s.tmp = nil, nil
	return m, nil
}

// mergeRunBytes is what a merge holds per run it reads: a zstd decoder
// with its window (runWindow) and blocks, and a read buffer (about 360
// KiB, measured).
const mergeRunBytes = 512 << 10

// minFanIn is the fewest runs a merge reads at once.
const minFanIn = 8

// mergeRuns merges the first n runs into one, which takes their place at
// the end of the list.
func (s *Sorter) mergeRuns(n int) error {
	m, err := Merge(s.fs, s.width, s.runs[:n]...)
	if err != nil {
		return err
	}
	open := true
	defer func() {
		if open {
			m.Close()
		}
	}()
	path := filepath.Join(s.dir, fmt.Sprintf("%s-m%06d.run", s.prefix, s.merged))
	s.merged++
	w, err := Create(s.fs, path, s.width)
	if err != nil {
		return err
	}
	const batch = 4096
	buf := make([]byte, 0, batch*s.width)
	for rec, ok := m.Next(); ok; rec, ok = m.Next() {
		if buf = append(buf, rec...); len(buf) == cap(buf) {
			if err := w.Write(buf); err != nil {
				w.Abort()
				return err
			}
			buf = buf[:0]
		}
	}
	if err := m.Err(); err != nil {
		w.Abort()
		return err
	}
	if err := w.Write(buf); err != nil {
		w.Abort()
		return err
	}
	written, err := w.Commit()
	if err != nil {
		return err
	}
	s.spilled += written
	open = false
	m.Close()
	for _, p := range s.runs[:n] {
		if err := s.fs.Remove(p); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
	}
	s.runs = append(s.runs[n:], path)
	return nil
}

// Remove deletes the run files.
func (s *Sorter) Remove() error {
	var first error
	for _, p := range s.runs {
		if err := s.fs.Remove(p); err != nil && first == nil {
			first = err
		}
	}
	s.runs = nil
	return first
}

// Merge returns an iterator over the records of sorted run files in order.
func Merge(fs FS, width int, paths ...string) (*Merger, error) {
	rs := make([]*Reader, 0, len(paths))
	for _, p := range paths {
		r, err := Open(fs, p, width)
		if err != nil {
			for _, r := range rs {
				r.Close()
			}
			return nil, err
		}
		rs = append(rs, r)
	}
	return newMerger(rs, nil, width), nil
}

// source is one input of a merge: a run file or the sorted buffer.
type source struct {
	r   *Reader
	mem []byte
	cur []byte
	idx int
}

func (s *source) next(width int) bool {
	if s.r != nil {
		rec, ok := s.r.Next()
		s.cur = rec
		return ok
	}
	if len(s.mem) == 0 {
		return false
	}
	s.cur, s.mem = s.mem[:width], s.mem[width:]
	return true
}

type mheap []*source

func (h mheap) Len() int { return len(h) }
func (h mheap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].cur, h[j].cur); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}
func (h mheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mheap) Push(x any)   { *h = append(*h, x.(*source)) }
func (h *mheap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Merger is a k-way merge of sorted inputs; equal records come in the
// order of their inputs (runs in the order written, then the buffer).
type Merger struct {
	width int
	all   []*source
	h     mheap
	top   *source
	out   []byte
	err   error
}

func newMerger(rs []*Reader, mem []byte, width int) *Merger {
	m := &Merger{width: width, out: make([]byte, width)}
	for i, r := range rs {
		m.all = append(m.all, &source{r: r, idx: i})
	}
	if len(mem) > 0 {
		m.all = append(m.all, &source{mem: mem, idx: len(rs)})
	}
	for _, s := range m.all {
		if s.next(width) {
			m.h = append(m.h, s)
		} else if s.r != nil && s.r.Err() != nil {
			m.err = s.r.Err()
		}
	}
	heap.Init(&m.h)
	return m
}

// Next returns the next record, valid until the following call, or false at
// the end or on an error (see Err).
func (m *Merger) Next() ([]byte, bool) {
	if m.err != nil {
		return nil, false
	}
	if m.top != nil {
		if m.top.next(m.width) {
			heap.Fix(&m.h, 0)
		} else {
			if m.top.r != nil && m.top.r.Err() != nil {
				m.err = m.top.r.Err()
				return nil, false
			}
			heap.Pop(&m.h)
		}
		m.top = nil
	}
	if len(m.h) == 0 {
		return nil, false
	}
	m.top = m.h[0]
	copy(m.out, m.top.cur)
	return m.out, true
}

// Err is the error that ended Next.
func (m *Merger) Err() error { return m.err }

// Close closes the run files.
func (m *Merger) Close() error {
	var first error
	for _, s := range m.all {
		if s.r != nil {
			if err := s.r.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
