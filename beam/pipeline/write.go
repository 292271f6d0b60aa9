package pipeline

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/lsh/bandfile"
)

func init() {
	register.DoFn5x1[context.Context, int, func(*fileRef) bool, func(*int64) bool, func(string, int64), error](&keptFn{})
	register.DoFn2x0[[]byte, func(int, int)](&shardIndexFn{})
	register.DoFn2x0[line, func(int, line)](&shardKeyFn{})
	register.DoFn4x1[context.Context, int, func(*int) bool, func(*line) bool, error](&writeShardFn{})
	register.DoFn4x1[context.Context, int, func(*int) bool, func(*bandfile.Row) bool, error](&writeBandsFn{})
	register.Iter1[bandfile.Row]()
	register.DoFn5x1[context.Context, []byte, func(*string, *int64) bool, func(*string, *int64) bool, func(string), error](&summaryFn{})
	register.Function2x0(fileKeyFn)
	register.Function2x0(dropOfRejectFn)
	register.Function2x0(statPartsFn)
	register.Function2x0(rejectPartsFn)
	register.Function1x1(rejectLineFn)
	register.Function1x1(hotLineFn)
	register.DoFn2x0[beam.T, func(string, int64)](&tagFn{})
	register.DoFn3x0[beam.T, beam.U, func(string, int64)](&tagKVFn{})
	register.Emitter2[int, fileRef]()
	register.Emitter2[int, int]()
	register.Emitter2[int, line]()
	register.Emitter1[string]()
	register.Iter1[fileRef]()
	register.Iter1[int64]()
	register.Iter1[int]()
	register.Iter1[line]()
	register.Iter2[string, int64]()
}

// joinPath joins a directory of any Beam filesystem and a relative name.
func joinPath(dir, name string) string {
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// writeFile writes name through fn to a temporary file beside it and
// renames it into place, so a retried bundle never leaves half a file.
func writeFile(ctx context.Context, name string, fn func(w io.Writer) error) error {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	i := strings.LastIndex(name, "/")
	tmp := name[:i+1] + ".tmp." + name[i+1:]
	wc, err := fs.OpenWrite(ctx, tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(wc, 256<<10)
	if err := fn(bw); err != nil {
		wc.Close()
		return fmt.Errorf("neardup-beam: writing %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		wc.Close()
		return fmt.Errorf("neardup-beam: writing %s: %w", name, err)
	}
	if err := wc.Close(); err != nil {
		return fmt.Errorf("neardup-beam: writing %s: %w", name, err)
	}
	return filesystem.Rename(ctx, fs, tmp, name)
}

func fileKeyFn(f fileRef, emit func(int, fileRef)) { emit(f.Index, f) }

// dropOfRejectFn turns a duplicate-id rejection into a dropped document.
func dropOfRejectFn(r rejectRec, emit func(int, int64)) {
	emit(orderFile(r.Order), orderIndex(r.Order))
}

// keptFn reads one input again and writes every document that is neither
// dropped as a duplicate nor rejected to OUT/kept/kept-NNNNN.jsonl (NNNNN
// the input's number), in input order: dedup's WriteKept, one shard per
// input, no document shuffled. It emits the number written.
type keptFn struct {
	Cfg    Config
	Output string
}

func (f *keptFn) ProcessElement(ctx context.Context, idx int, refs func(*fileRef) bool, drops func(*int64) bool, emitSum func(string, int64)) error {
	var ref fileRef
	if !refs(&ref) {
		return fmt.Errorf("neardup-beam: dropped documents of unknown input %d", idx)
	}
	drop := map[int64]bool{}
	var d int64
	for drops(&d) {
		drop[d] = true
	}
	var i, n int64
	name := joinPath(f.Output, fmt.Sprintf("kept/kept-%05d.jsonl", idx))
	err := writeFile(ctx, name, func(w io.Writer) error {
		kw := newKeptWriter(w)
		_, err := readInput(ctx, f.Cfg, ref.Path, func() (io.ReadCloser, error) { return openFS(ctx, ref.Path) },
			func(r record) error {
				defer func() { i++ }()
				if drop[i] {
					return nil
				}
				n++
				return kw.write(r)
			}, func(rejectRec) {})
		if err != nil {
			return err
		}
		return kw.close()
	})
	if err != nil {
		return err
	}
	cKept.Inc(ctx, n)
	emitSum("kept", n)
	return nil
}

// shardIndexFn emits every shard number, so that each shard file is written
// even when no line falls into it.
type shardIndexFn struct{ N int }

func (f *shardIndexFn) ProcessElement(_ []byte, emit func(int, int)) {
	for i := 0; i < f.N; i++ {
		emit(i, i)
	}
}

// shardKeyFn assigns a line to a shard by a hash of its order.
type shardKeyFn struct{ N int }

func (f *shardKeyFn) ProcessElement(l line, emit func(int, line)) {
	emit(shardOf(l.Order, f.N), l)
}

// shardOf assigns an order to one of n shards by a hash.
func shardOf(o uint64, n int) int {
	x := o * 0x9e3779b97f4a7c15
	return int((x ^ x>>29) % uint64(n))
}

// writeBandsFn writes the band-key rows of one shard, sorted by (seq,
// band), to DIR/bands/bands-SSSSS-of-NNNNN.parquet.
type writeBandsFn struct {
	Dir string
	N   int
}

func (f *writeBandsFn) ProcessElement(ctx context.Context, shard int, _ func(*int) bool, rows func(*bandfile.Row) bool) error {
	var rs []bandfile.Row
	var r bandfile.Row
	for rows(&r) {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b bandfile.Row) int {
		if a.Seq != b.Seq {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return cmp.Compare(a.Band, b.Band)
	})
	name := joinPath(f.Dir, fmt.Sprintf("bands/bands-%05d-of-%05d.parquet", shard, f.N))
	return writeFile(ctx, name, func(w io.Writer) error {
		bw := bandfile.NewWriter(w)
		if err := bw.Write(rs); err != nil {
			return err
		}
		return bw.Close()
	})
}

// writeBands writes PCollection<KV<int, bandfile.Row>> as n Parquet shards.
func writeBands(s beam.Scope, dir string, n int, rows beam.PCollection) {
	s = s.Scope("Write_bands")
	idx := beam.ParDo(s, &shardIndexFn{N: n}, beam.Impulse(s))
	beam.ParDo0(s, &writeBandsFn{Dir: dir, N: n}, beam.CoGroupByKey(s, idx, rows))
}

// writeShardFn writes the lines of one shard, sorted by order, to
// DIR/NAME-SSSSS-of-NNNNN.jsonl.
type writeShardFn struct {
	Dir, Name string
	N         int
}

func (f *writeShardFn) ProcessElement(ctx context.Context, shard int, _ func(*int) bool, lines func(*line) bool) error {
	var ls []line
	var l line
	for lines(&l) {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b line) int {
		switch {
		case a.Order < b.Order:
			return -1
		case a.Order > b.Order:
			return 1
		}
		return strings.Compare(a.Text, b.Text)
	})
	name := joinPath(f.Dir, fmt.Sprintf("%s/%s-%05d-of-%05d.jsonl", f.Name, f.Name, shard, f.N))
	return writeFile(ctx, name, func(w io.Writer) error {
		for _, l := range ls {
			if _, err := io.WriteString(w, l.Text); err != nil {
				return err
			}
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteLines writes a PCollection<line> as n JSONL shards under
// dir/name/, each sorted by order.
func writeLines(s beam.Scope, m meter, dir, name string, n int, lines beam.PCollection) {
	s = s.Scope("Write_" + name)
	idx := beam.ParDo(s, &shardIndexFn{N: n}, beam.Impulse(s))
	keyed := beam.ParDo(s, &shardKeyFn{N: n}, lines)
	beam.ParDo0(s, &writeShardFn{Dir: dir, Name: name, N: n}, m.cogbk(s, "write", idx, keyed))
}

// RejectedJSON is one line of rejected/*.jsonl.
type RejectedJSON struct {
	Path   string `json:"path,omitempty"`
	Line   int64  `json:"line,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	ID     string `json:"id,omitempty"`
	Reason string `json:"reason"`
	Error  string `json:"error,omitempty"`
}

func rejectLineFn(r rejectRec) line {
	j := RejectedJSON{Path: r.Path, Line: r.Line, ID: r.ID, Reason: r.Reason, Error: r.Error}
	if r.Offset > 0 {
		j.Offset = r.Offset
	}
	b, _ := json.Marshal(j) // plain strings and numbers
	return line{Order: r.Order, Text: string(b)}
}

// HotKeyJSON is one line of hot_keys/*.jsonl: a band key shared by more
// documents than MaxRun.
type HotKeyJSON struct {
	Key  string `json:"key"` // the band key, 16 hex digits
	Docs int64  `json:"docs"`
}

func hotLineFn(h hotKey) line {
	b, _ := json.Marshal(HotKeyJSON{Key: fmt.Sprintf("%016x", h.Key), Docs: h.Docs})
	return line{Order: h.Key, Text: string(b)}
}

// tagFn counts the elements of a PCollection under a name.
type tagFn struct{ Name string }

func (f *tagFn) ProcessElement(_ beam.T, emit func(string, int64)) { emit(f.Name, 1) }

// tagKVFn is tagFn for a PCollection of key-value pairs.
type tagKVFn struct{ Name string }

func (f *tagKVFn) ProcessElement(_ beam.T, _ beam.U, emit func(string, int64)) { emit(f.Name, 1) }

// count returns a part (name, 1) for every element of col.
func count(s beam.Scope, name string, col beam.PCollection) beam.PCollection {
	s = s.Scope("Count_" + name)
	if typex.IsKV(col.Type()) {
		return beam.ParDo(s, &tagKVFn{Name: name}, col)
	}
	return beam.ParDo(s, &tagFn{Name: name}, col)
}

func statPartsFn(st fileStat, emit func(string, int64)) {
	emit("files", 1)
	emit("read", st.Read)
	emit("yielded", st.Yielded)
	emit("warnings", st.Warnings)
	emit("skipped", st.Skipped)
}

func rejectPartsFn(r rejectRec, emit func(string, int64)) {
	emit("rejected_by:"+r.Reason, 1)
}

// Summary accounts for every record: Read = Kept + Duplicates + Rejected.
// It is written to OUT/summary.json with the field names of dedup's
// summary.
type Summary struct {
	Read       int64            `json:"read"`
	Kept       int64            `json:"kept"`
	Duplicates int64            `json:"duplicates"`
	Exact      int64            `json:"exact_duplicates"`
	Near       int64            `json:"near_duplicates"`
	Rejected   int64            `json:"rejected"`
	RejectedBy map[string]int64 `json:"rejected_by,omitempty"`
	Warnings   int64            `json:"warnings"`
	Skipped    int64            `json:"skipped"`
	Files      int64            `json:"files"`
	Pairs      int64            `json:"pairs"`
	Candidates int64            `json:"candidates"`
	Clusters   int64            `json:"clusters"`
	Largest    int64            `json:"largest_cluster"`
	HotKeys    int64            `json:"hot_keys"`
	Rounds     int              `json:"cc_rounds"`
	Config     ConfigSummary    `json:"config"`
}

// summaryFn assembles the summary from the summed and maximal counts and
// writes OUT/summary.json; it fails the pipeline when the books do not
// balance.
type summaryFn struct {
	Output string
	Rounds int
	Config ConfigSummary
}

func (f *summaryFn) ProcessElement(ctx context.Context, _ []byte, sums, maxes func(*string, *int64) bool, emit func(string)) error {
	sum := map[string]int64{}
	var k string
	var v int64
	for sums(&k, &v) {
		sum[k] += v
	}
	for maxes(&k, &v) {
		sum[k] = max(sum[k], v)
	}
	s := Summary{Read: sum["read"], Kept: sum["kept"], Exact: sum["exact_duplicates"], Near: sum["near_duplicates"],
		Warnings: sum["warnings"], Skipped: sum["skipped"], Files: sum["files"], Pairs: sum["pairs"], Candidates: sum["candidates"],
		Clusters: sum["clusters"], Largest: sum["largest_cluster"], HotKeys: sum["hot_keys"], Rounds: f.Rounds, Config: f.Config}
	s.Duplicates = s.Exact + s.Near
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if r, ok := strings.CutPrefix(k, "rejected_by:"); ok {
			if s.RejectedBy == nil {
				s.RejectedBy = map[string]int64{}
			}
			s.RejectedBy[r] = sum[k]
			s.Rejected += sum[k]
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(ctx, joinPath(f.Output, "summary.json"), func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s\n", b)
		return err
	}); err != nil {
		return err
	}
	if s.Read != s.Kept+s.Duplicates+s.Rejected {
		return fmt.Errorf("neardup-beam: accounting error: read %d != kept %d + duplicates %d + rejected %d (did an input change during the run?)", s.Read, s.Kept, s.Duplicates, s.Rejected)
	}
	emit(string(b))
	return nil
}
