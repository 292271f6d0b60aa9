package dedup

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup/spill"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// Stage files of a resumable out-of-core run (Options.Stages), in the
// work directory:
//
//	stage-inputs.json   the inputs (names, sizes, modification times)
//	stream.bin          stage 1: the documents, rejected records and input
//	                    ends in input order (the read-and-sketch output)
//	sketches.bin        stage 1: the sketch values
//	stage-sketch.json   stage 1's manifest, rewritten at each input end
//	pairs-*.run         stage 2: the candidate pairs, sorted runs
//	stage-index.json    stage 2's manifest
//	verified.run        stage 3: the verified pairs
//	stage-verify.json   stage 3's manifest
//
// A manifest is written last, atomically (a temporary file renamed over
// it): what it describes is complete on disk before it appears, and a
// file it does not name, or the bytes past the length it records, are
// the leftovers of a killed run and are discarded on resumption.
const (
	stagesVersion = 1
	fileInputs    = "stage-inputs.json"
	fileStream    = "stream.bin"
	fileSketches  = "sketches.bin"
	fileVerified  = "verified.run"
	manSketch     = "stage-sketch.json"
	manIndex      = "stage-index.json"
	manVerify     = "stage-verify.json"
	verifiedWidth = 37 // posA, posB uint32; similarity, estimate, stderr float64; exact byte; keys uint32
)

// Stages makes an out-of-core run resumable: each stage writes its output
// to the work directory with a manifest (the inputs' names, sizes and
// modification times, the configuration, record counts, a format
// version), and a run with Resume continues from the last finished stage,
// within stage 1 (read and sketch) from the last finished input, with the
// result of an uninterrupted run, byte for byte.
//
// Stage files are written only once the run is out of core (Options.Memory):
// a run that stays in memory has nothing to resume and starts over. Within
// stage 1 the run can resume only when the documents' sequence marks the
// ends of inputs (InputEnd) and can skip the inputs finished before
// (corpus.Reader.Skip with InputsDone): standard input cannot be resumed
// within stage 1. Run leaves the stage files in place: the caller removes
// them with RemoveWork once it has written its outputs.
type Stages struct {
	// Dir is the work directory; when empty, Options.WorkDir (one of the
	// two must be set). It replaces Options.WorkDir.
	Dir string
	// Resume continues from the stage files in Dir. Without it a run
	// removes them and starts afresh.
	Resume bool
	// Inputs describe the inputs in reading order; a resumption refuses
	// inputs that changed.
	Inputs []InputFile
	// Config is the caller's description of everything that decides the
	// output (flag name -> value); a resumption refuses a changed one. The
	// run adds its own resolved configuration under keys "dedup.*".
	Config map[string]string
	// Shard and Shards make the run shard Shard (0-based) of Shards: the
	// caller gives it its share of the inputs, the run stops after stage
	// 1, and Merge joins the shards' stage files. Shards 0 or 1 is one
	// whole run.
	Shard, Shards int
}

// InputFile describes one input of a resumable run.
type InputFile struct {
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
}

// InputEnd is yielded, as the error of an element without a document, by
// the documents' sequence of a resumable run when input Input (an index
// in Stages.Inputs) has been read to its end: every record of it was
// yielded before, none of a later input. Warnings and Skipped are the
// reader's counts for that input (Summary.Warnings, Summary.Skipped). It
// is not a failure; a run without Stages ignores it.
type InputEnd struct {
	Input             int
	Warnings, Skipped int64
}

func (e *InputEnd) Error() string { return "dedup: end of input " + strconv.Itoa(e.Input) }

// manifest is a stage's manifest.
type manifest struct {
	Version  int               `json:"version"`
	Stage    string            `json:"stage"`
	Complete bool              `json:"complete"`
	Inputs   string            `json:"inputs_sha256"`
	NInputs  int               `json:"inputs"`
	Config   map[string]string `json:"config"`
	Shard    int               `json:"shard"`
	Shards   int               `json:"shards"`
	// Stage 1.
	InputsDone  int   `json:"inputs_done,omitempty"`
	Items       int64 `json:"items,omitempty"`
	StreamBytes int64 `json:"stream_bytes,omitempty"`
	SketchBytes int64 `json:"sketch_bytes,omitempty"`
	Docs        int64 `json:"docs,omitempty"`
	// Stage 2.
	Runs    []string `json:"runs,omitempty"`
	Records int64    `json:"records,omitempty"`
	// Stage 3.
	Pairs      int64 `json:"pairs,omitempty"`
	Candidates int64 `json:"candidates,omitempty"`
	// Stat is the stage's time, peak memory and bytes spilled.
	Stat Stage `json:"stat"`

	dir string // where it was read (shards)
}

// readManifest reads a manifest; nil when there is none.
func readManifest(dir, name string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("dedup: stage manifest %s: %w", filepath.Join(dir, name), err)
	}
	return &m, nil
}

// writeAtomic writes a small file under a temporary name and renames it
// over name; with sync, it is synced first and the rename made durable.
// A process killed at any point leaves the old file or the new one.
func writeAtomic(dir, name string, b []byte, sync bool) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	_, err = f.Write(b)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err == nil && sync {
		err = spill.OS.SyncDir(dir)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("dedup: writing %s: %w", name, err)
	}
	return nil
}

// writeManifest writes a stage's manifest atomically; a complete stage's
// is made durable (its files were synced before), a checkpoint within
// stage 1 is not: it survives the process, not the machine.
func writeManifest(dir, name string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	return writeAtomic(dir, name, append(b, '\n'), m.Complete)
}

// inputsHash is the SHA-256 of the inputs' JSON.
func inputsHash(in []InputFile) string {
	b, _ := json.Marshal(in)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// check compares a manifest with this run: format version, inputs and
// configuration (the caller's keys only unless all). The error names the
// first thing that changed.
func (s *Stages) check(m *manifest, cfg map[string]string, all bool) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("dedup: cannot resume from %s: %s", s.Dir, fmt.Sprintf(format, args...))
	}
	if m.Version != stagesVersion {
		return fail("stage files of format version %d, this is version %d", m.Version, stagesVersion)
	}
	if m.Shards != s.Shards || m.Shard != s.Shard {
		return fail("shard %d/%d, this run is %d/%d", m.Shard+1, max(m.Shards, 1), s.Shard+1, max(s.Shards, 1))
	}
	if m.Inputs != inputsHash(s.Inputs) {
		return fail("%s", s.inputsChange())
	}
	keys := slices.Sorted(maps.Keys(cfg))
	for k := range m.Config {
		if _, ok := cfg[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !all && len(k) > 6 && k[:6] == "dedup." {
			continue
		}
		was, ok1 := m.Config[k]
		now, ok2 := cfg[k]
		if was != now || ok1 != ok2 {
			return fail("%s changed (was %q, now %q)", k, was, now)
		}
	}
	return nil
}

// inputsChange describes how the inputs differ from those recorded.
func (s *Stages) inputsChange() string {
	var was []InputFile
	if b, err := os.ReadFile(filepath.Join(s.Dir, fileInputs)); err != nil || json.Unmarshal(b, &was) != nil {
		return "the inputs changed (their list " + fileInputs + " is unreadable)"
	}
	for i := range min(len(was), len(s.Inputs)) {
		a, b := was[i], s.Inputs[i]
		switch {
		case a.Name != b.Name:
			return fmt.Sprintf("input %d is %s, was %s", i+1, b.Name, a.Name)
		case a.Size != b.Size:
			return fmt.Sprintf("input %s changed (size %d, was %d)", b.Name, b.Size, a.Size)
		case !a.ModTime.Equal(b.ModTime):
			return fmt.Sprintf("input %s changed (modified %s, was %s)", b.Name, b.ModTime.Format(time.RFC3339Nano), a.ModTime.Format(time.RFC3339Nano))
		}
	}
	return fmt.Sprintf("%d inputs, were %d", len(s.Inputs), len(was))
}

// InputsDone returns the number of inputs stage 1 of the run in s.Dir
// finished (in reading order; for a shard, those of its share below that
// number): the caller skips them (corpus.Reader.Skip) when it resumes. It
// is 0 without Resume or when there is nothing to resume, and an error
// when the inputs or the caller's configuration changed since.
func (s *Stages) InputsDone() (int, error) {
	if !s.Resume {
		return 0, nil
	}
	m, err := readManifest(s.Dir, manSketch)
	if err != nil || m == nil {
		return 0, err
	}
	if err := s.check(m, s.Config, false); err != nil {
		return 0, err
	}
	if m.Complete {
		return len(s.Inputs), nil
	}
	return m.InputsDone, nil
}

// workFiles match the files a run writes in its work directory: stage
// files, sorted runs, and the temporary files of a killed run. The
// manifests go first: a removal killed midway leaves files no manifest
// names, which a resumption discards, never a manifest without its files.
var workFiles = []string{manVerify, manIndex, manSketch, fileSketches, fileStream, fileInputs, fileVerified,
	"keys-*.run", "pairs-*.run", ".keys-*.tmp*", ".pairs-*.tmp*", ".stage-*.tmp*", "." + fileVerified + ".tmp*"}

// RemoveWork removes the files a run (resumable or not) writes in its
// work directory dir, and nothing else.
func RemoveWork(dir string) error {
	for _, p := range workFiles {
		ms, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		for _, m := range ms {
			if err := os.Remove(m); err != nil {
				return fmt.Errorf("dedup: work directory: %w", err)
			}
		}
	}
	return nil
}

// streamMark is a rejected record or an input end, in the order the
// reader met them; at is the number of documents numbered before it.
type streamMark struct {
	at  int
	rej *corpus.RecordError
	end *InputEnd
}

// stages is a resumable run's state.
type stages struct {
	s      Stages
	cfg    map[string]string // s.Config and the run's own keys
	hdr    sketch.Header
	marks  []streamMark // read goroutine: since the last input end
	names  map[string]recordPlace
	seq    int // documents numbered when restored
	noDups bool

	// Collector goroutine.
	pending   []streamMark
	written   int // documents of res.Docs in the stream
	sf        *os.File
	sw        *bufio.Writer
	soff      int64
	items     int64
	inputs    int // inputs finished
	warn, skp int64
	buf       []byte
	started   bool // stage files begun (inputs list written)
	restored  bool
	complete  bool // stage 1 restored complete
}

// newStages prepares a resumable run's state (o.Stages set).
func (r *run) newStages() error {
	s := *r.o.Stages
	if s.Dir == "" {
		s.Dir = r.o.WorkDir
	}
	if s.Dir == "" {
		return errors.New("dedup: a resumable run needs a work directory")
	}
	r.o.WorkDir = s.Dir // the spill files go with the stage files
	if s.Shards <= 1 {
		s.Shard, s.Shards = 0, 0
	} else if s.Shard < 0 || s.Shard >= s.Shards {
		return fmt.Errorf("dedup: shard %d of %d", s.Shard, s.Shards)
	}
	cfg := maps.Clone(s.Config)
	if cfg == nil {
		cfg = map[string]string{}
	}
	c, _ := json.Marshal(r.sum.Config)
	cfg["dedup.index"] = string(c)
	cfg["dedup.slack"] = strconv.FormatFloat(r.x.Config().Slack, 'g', -1, 64)
	cfg["dedup.exact"] = fmt.Sprintf("%d/%d", r.o.Exact, r.o.ExactBudget)
	r.st = &stages{s: s, cfg: cfg, hdr: r.x.NewDoc("", &sample.Sketched{}, false).Sketch.Header, noDups: s.Shards > 1}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("dedup: work directory: %w", err)
	}
	return nil
}

// manifest returns a manifest of this run for stage.
func (st *stages) manifest(stage string) *manifest {
	return &manifest{Version: stagesVersion, Stage: stage, Inputs: inputsHash(st.s.Inputs), NInputs: len(st.s.Inputs),
		Config: st.cfg, Shard: st.s.Shard, Shards: st.s.Shards}
}

// load reads the manifest of a later stage, nil when it is missing (or
// the run does not resume).
func (st *stages) load(name string) (*manifest, error) {
	if !st.s.Resume {
		return nil, nil
	}
	m, err := readManifest(st.s.Dir, name)
	if err != nil || m == nil {
		return nil, err
	}
	if err := st.s.check(m, st.cfg, true); err != nil {
		return nil, err
	}
	if !m.Complete {
		return nil, nil
	}
	return m, nil
}

// restoreSketch begins stage 1 of a resumable run: it restores what the
// stage files hold (documents, rejected records replayed to the
// listener, counts, the exact-verification budget) or, with nothing to
// resume, removes them.
func (r *run) restoreSketch(bud *budget) error {
	st := r.st
	var m *manifest
	if st.s.Resume {
		var err error
		if m, err = readManifest(st.s.Dir, manSketch); err != nil {
			return err
		}
	}
	if m == nil {
		return RemoveWork(st.s.Dir)
	}
	if err := st.s.check(m, st.cfg, true); err != nil {
		return err
	}
	for _, name := range []string{manIndex, manVerify} { // a stage 1 under way has no later stages
		if !m.Complete {
			os.Remove(filepath.Join(st.s.Dir, name))
		}
	}
	open := func(name string, size int64) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(st.s.Dir, name), os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("dedup: cannot resume: %w", err)
		}
		fi, err := f.Stat()
		if err == nil && fi.Size() < size {
			err = fmt.Errorf("%d bytes, its manifest says %d", fi.Size(), size)
		}
		if err == nil {
			err = f.Truncate(size)
		}
		if err == nil {
			_, err = f.Seek(size, io.SeekStart)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("dedup: cannot resume from %s: %w", name, err)
		}
		return f, nil
	}
	sf, err := open(fileStream, m.StreamBytes)
	if err != nil {
		return err
	}
	kf, err := open(fileSketches, m.SketchBytes)
	if err != nil {
		sf.Close()
		return err
	}
	r.ext = &external{dir: st.s.Dir, f: kf, w: bufio.NewWriterSize(kf, 1<<20), off: m.SketchBytes}
	r.sum.External = true
	st.sf, st.sw, st.soff, st.items, st.started, st.restored = sf, bufio.NewWriterSize(sf, 1<<20), m.StreamBytes, m.Items, true, true
	st.names = map[string]recordPlace{}
	var off int64
	err = readStream(io.NewSectionReader(sf, 0, m.StreamBytes), m.Items, st.hdr, func(it *streamItem) error {
		s := r.sum
		switch {
		case it.doc != nil:
			d := it.doc
			d.soff = off
			off += 8 * int64(d.nvals)
			if !st.noDups {
				st.names[d.Name] = it.place
			}
			st.seq = d.Seq + 1
			s.Read++
			s.Bytes += int64(d.Bytes)
			if d.ix.Features != nil || d.ix.Weighted != nil {
				bud.kept += int64(d.Shingles)
			} else if r.o.Exact != ExactNever {
				bud.on = false
			}
			r.res.Docs = append(r.res.Docs, *d)
		case it.rej != nil:
			s.Read += it.rej.Records()
			r.reject(it.rej)
			if it.rej.Reason == ReasonDuplicateID {
				st.seq = it.at + 1
			}
		case it.end != nil:
			st.inputs = it.end.Input + 1
			st.warn += it.end.Warnings
			st.skp += it.end.Skipped
		}
		return nil
	})
	if bud.on && r.o.Exact == ExactAuto && bud.kept > r.o.ExactBudget {
		bud.on = false // merged shards: together over the budget
	}
	if err == nil && off != m.SketchBytes {
		err = fmt.Errorf("the documents hold %d bytes of sketches, the file %d", off, m.SketchBytes)
	}
	if err != nil {
		return fmt.Errorf("dedup: cannot resume from %s: %w", filepath.Join(st.s.Dir, fileStream), err)
	}
	st.written = len(r.res.Docs)
	r.sum.Resumed = StageSketch
	if m.Complete {
		r.sum.Resumed, st.complete = StageIndex, true
	}
	return nil
}

// save is a checkpoint of stage 1 (from the collecting goroutine): the
// documents collected and the marks up to an input end are appended to
// the stream, the files flushed and the manifest rewritten. Before the
// run goes out of core, nothing is written.
func (r *run) save(marks []streamMark, final bool) error {
	st := r.st
	st.pending = append(st.pending, marks...)
	if r.ext == nil {
		return nil
	}
	if !st.started {
		b, _ := json.MarshalIndent(st.s.Inputs, "", " ")
		if err := writeAtomic(st.s.Dir, fileInputs, b, true); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(st.s.Dir, fileStream))
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		st.sf, st.sw, st.started = f, bufio.NewWriterSize(f, 1<<20), true
	}
	docs := r.res.Docs
	k := st.written
	for _, m := range st.pending {
		for ; k < len(docs) && docs[k].Seq < m.at; k++ {
			st.writeDoc(&docs[k])
		}
		st.writeMark(m)
	}
	for ; k < len(docs); k++ {
		st.writeDoc(&docs[k])
	}
	st.written = k
	st.pending = st.pending[:0]
	if err := st.sw.Flush(); err != nil {
		return fmt.Errorf("dedup: writing %s: %w", fileStream, err)
	}
	if err := r.ext.w.Flush(); err != nil {
		return fmt.Errorf("dedup: writing sketches: %w", err)
	}
	if final {
		if err := st.sf.Sync(); err != nil {
			return fmt.Errorf("dedup: writing %s: %w", fileStream, err)
		}
		if err := r.ext.f.Sync(); err != nil {
			return fmt.Errorf("dedup: writing sketches: %w", err)
		}
	}
	m := st.manifest(StageSketch)
	m.Complete, m.InputsDone, m.Items, m.StreamBytes, m.SketchBytes, m.Docs = final, st.inputs, st.items, st.soff, r.ext.off, int64(len(docs))
	if err := writeManifest(st.s.Dir, manSketch, m); err != nil {
		return err
	}
	r.ev.checkpoint(CheckpointInfo{Stage: StageSketch, Inputs: st.inputs, Docs: int64(len(docs)), Complete: final})
	return nil
}

// Stream items: a byte kind, then
//
//	'D' uvarint seq | str name | uvarint bytes | str key | u64 fingerprint |
//	    uvarint shingles | uvarint nvals | f64 size | str path | varint line |
//	    varint offset | byte flags | [features: uvarint n, n delta uvarints] |
//	    [weighted: uvarint n, n × (u64 id, f64 weight)]
//	'R' uvarint at | str JSON of the rejected record
//	'E' uvarint input | uvarint warnings | uvarint skipped
//
// where str is a uvarint length and the bytes, and fixed-width numbers are
// little-endian.
const (
	flagFeatures = 1
	flagWeighted = 2
)

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func (st *stages) put(b []byte) {
	st.sw.Write(b) // errors surface at Flush
	st.soff += int64(len(b))
	st.items++
}

func (st *stages) writeDoc(d *Doc) {
	b := append(st.buf[:0], 'D')
	b = appendDoc(b, d, d.Seq)
	st.buf = b
	st.put(b)
	d.place = nil
}

// appendDoc encodes a document (after its kind byte) with seq.
func appendDoc(b []byte, d *Doc, seq int) []byte {
	b = binary.AppendUvarint(b, uint64(seq))
	b = appendStr(b, d.Name)
	b = binary.AppendUvarint(b, uint64(d.Bytes))
	b = appendStr(b, d.Key)
	b = binary.LittleEndian.AppendUint64(b, d.Fingerprint)
	b = binary.AppendUvarint(b, uint64(d.Shingles))
	b = binary.AppendUvarint(b, uint64(d.nvals))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.ix.Sketch.Size))
	var p recordPlace
	if d.place != nil {
		p = *d.place
	}
	b = appendStr(b, p.path)
	b = binary.AppendVarint(b, p.line)
	b = binary.AppendVarint(b, p.offset)
	var flags byte
	if d.ix.Features != nil {
		flags |= flagFeatures
	}
	if d.ix.Weighted != nil {
		flags |= flagWeighted
	}
	b = append(b, flags)
	if d.ix.Features != nil {
		b = binary.AppendUvarint(b, uint64(len(d.ix.Features)))
		var prev uint64
		for _, f := range d.ix.Features {
			b = binary.AppendUvarint(b, f-prev)
			prev = f
		}
	}
	if d.ix.Weighted != nil {
		b = binary.AppendUvarint(b, uint64(len(d.ix.Weighted)))
		for _, f := range d.ix.Weighted {
			b = binary.LittleEndian.AppendUint64(b, f.ID)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.Weight))
		}
	}
	return b
}

// rejectJSON is a rejected record in the stream.
type rejectJSON struct {
	ID     string   `json:"id,omitempty"`
	Path   string   `json:"path,omitempty"`
	Line   int64    `json:"line,omitempty"`
	Offset int64    `json:"offset"`
	Reason string   `json:"reason"`
	Err    *string  `json:"err,omitempty"`
	Fields []string `json:"fields,omitempty"`
	Count  int64    `json:"count,omitempty"`
}

func appendMark(b []byte, m streamMark, at int) []byte {
	if m.end != nil {
		b = append(b, 'E')
		b = binary.AppendUvarint(b, uint64(m.end.Input))
		b = binary.AppendUvarint(b, uint64(m.end.Warnings))
		return binary.AppendUvarint(b, uint64(m.end.Skipped))
	}
	e := m.rej
	j := rejectJSON{ID: e.ID, Path: e.Path, Line: e.Line, Offset: e.Offset, Reason: e.Reason, Fields: e.Fields, Count: e.Count}
	if e.Err != nil {
		s := e.Err.Error()
		j.Err = &s
	}
	js, _ := json.Marshal(j)
	b = append(b, 'R')
	b = binary.AppendUvarint(b, uint64(at))
	return appendStr(b, string(js))
}

func (st *stages) writeMark(m streamMark) {
	if m.end != nil {
		st.inputs = m.end.Input + 1
		st.warn += m.end.Warnings
		st.skp += m.end.Skipped
	}
	b := appendMark(st.buf[:0], m, m.at)
	st.buf = b
	st.put(b)
}

// streamItem is one decoded item of a stream.
type streamItem struct {
	doc   *Doc
	place recordPlace
	rej   *corpus.RecordError
	at    int
	end   *InputEnd
}

// readStream decodes n items of a stream.
func readStream(rd io.Reader, n int64, hdr sketch.Header, fn func(*streamItem) error) error {
	br := bufio.NewReaderSize(rd, 1<<16)
	var it streamItem
	uv := func() uint64 {
		v, err := binary.ReadUvarint(br)
		if err != nil {
			panic(errCorruptStream)
		}
		return v
	}
	sv := func() int64 {
		v, err := binary.ReadVarint(br)
		if err != nil {
			panic(errCorruptStream)
		}
		return v
	}
	u64 := func() uint64 {
		var b [8]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			panic(errCorruptStream)
		}
		return binary.LittleEndian.Uint64(b[:])
	}
	str := func() string {
		l := uv()
		if l > 1<<30 {
			panic(errCorruptStream)
		}
		if l > 1<<16 { // grown as the bytes come: a damaged length allocates nothing
			var sb strings.Builder
			if n, err := io.CopyN(&sb, br, int64(l)); err != nil || n != int64(l) {
				panic(errCorruptStream)
			}
			return sb.String()
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			panic(errCorruptStream)
		}
		return string(b)
	}
	one := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				if p != errCorruptStream {
					panic(p)
				}
				err = errCorruptStream
			}
		}()
		kind, err := br.ReadByte()
		if err != nil {
			return errCorruptStream
		}
		it = streamItem{}
		switch kind {
		case 'D':
			d := &Doc{ExactOf: -1}
			d.Seq = int(uv())
			d.Name = str()
			d.Bytes = int(uv())
			d.Key = str()
			d.Fingerprint = u64()
			d.Shingles = int(uv())
			nv := uv()
			if nv > 1<<24 {
				return errCorruptStream
			}
			d.nvals = int32(nv)
			size := math.Float64frombits(u64())
			it.place = recordPlace{path: str(), line: sv(), offset: sv()}
			d.ix.Sketch.Size = size
			flags, err := br.ReadByte()
			if err != nil {
				return errCorruptStream
			}
			if flags&flagFeatures != 0 {
				nf := uv()
				if nf > 1<<32 {
					return errCorruptStream
				}
				d.ix.Features = make([]uint64, 0, min(nf, 1<<12))
				var prev uint64
				for range nf {
					prev += uv()
					d.ix.Features = append(d.ix.Features, prev)
				}
			}
			if flags&flagWeighted != 0 {
				nf := uv()
				if nf > 1<<32 {
					return errCorruptStream
				}
				d.ix.Weighted = make([]feature.Feature, 0, min(nf, 1<<12))
				for range nf {
					id := u64()
					d.ix.Weighted = append(d.ix.Weighted, feature.Feature{ID: id, Weight: math.Float64frombits(u64())})
				}
			}
			it.doc = d
		case 'R':
			it.at = int(uv())
			var j rejectJSON
			if err := json.Unmarshal([]byte(str()), &j); err != nil {
				return errCorruptStream
			}
			e := &corpus.RecordError{ID: j.ID, Path: j.Path, Line: j.Line, Offset: j.Offset, Reason: j.Reason, Fields: j.Fields, Count: j.Count}
			if j.Err != nil {
				e.Err = errors.New(*j.Err)
			}
			it.rej = e
		case 'E':
			it.end = &InputEnd{Input: int(uv()), Warnings: int64(uv()), Skipped: int64(uv())}
		default:
			return errCorruptStream
		}
		return nil
	}
	for range n {
		if err := one(); err != nil {
			return err
		}
		if err := fn(&it); err != nil {
			return err
		}
	}
	return nil
}

var errCorruptStream = errors.New("corrupt stage file")

// CheckpointInfo describes stage files saved (EventListener.Checkpoint).
type CheckpointInfo struct {
	Stage string
	// Inputs is the number of inputs stage 1 finished, Docs the documents
	// saved.
	Inputs int
	Docs   int64
	// Complete reports the stage's output complete.
	Complete bool
}

// saveIndex records stage 2's output, the sorted runs of candidate pairs.
func (r *run) saveIndex(runs []string, records int64, stat Stage) error {
	st := r.st
	m := st.manifest(StageIndex)
	m.Complete, m.Records, m.Stat = true, records, stat
	for _, p := range runs {
		m.Runs = append(m.Runs, filepath.Base(p))
	}
	if err := writeManifest(st.s.Dir, manIndex, m); err != nil {
		return err
	}
	r.ev.checkpoint(CheckpointInfo{Stage: StageIndex, Docs: int64(len(r.res.Docs)), Complete: true})
	return nil
}

// verifiedPair locates a verified pair by the positions of its documents.
type verifiedPair struct {
	a, b int32
	p    Pair
}

// writeVerified writes stage 3's output, the verified pairs; it returns
// the bytes written.
func (r *run) writeVerified(pairs []verifiedPair) (int64, error) {
	w, err := spill.Create(spill.OS, filepath.Join(r.st.s.Dir, fileVerified), verifiedWidth)
	if err != nil {
		return 0, err
	}
	var rec [verifiedWidth]byte
	for _, v := range pairs {
		binary.LittleEndian.PutUint32(rec[0:], uint32(v.a))
		binary.LittleEndian.PutUint32(rec[4:], uint32(v.b))
		binary.LittleEndian.PutUint64(rec[8:], math.Float64bits(v.p.Similarity))
		binary.LittleEndian.PutUint64(rec[16:], math.Float64bits(v.p.Estimate))
		binary.LittleEndian.PutUint64(rec[24:], math.Float64bits(v.p.StdErr))
		rec[32] = 0
		if v.p.Exact {
			rec[32] = 1
		}
		binary.LittleEndian.PutUint32(rec[33:], uint32(v.p.Keys))
		if err := w.Write(rec[:]); err != nil {
			w.Abort()
			return 0, fmt.Errorf("dedup: %w", err)
		}
	}
	n, err := w.Commit()
	if err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	return n, nil
}

// saveVerify writes stage 3's manifest (after writeVerified).
func (r *run) saveVerify(pairs, candidates int64, stat Stage) error {
	st := r.st
	m := st.manifest(StageVerify)
	m.Complete, m.Pairs, m.Candidates, m.Stat = true, pairs, candidates, stat
	if err := writeManifest(st.s.Dir, manVerify, m); err != nil {
		return err
	}
	r.ev.checkpoint(CheckpointInfo{Stage: StageVerify, Docs: int64(len(r.res.Docs)), Complete: true})
	return nil
}

// loadVerify reads stage 3's verified pairs into res.Pairs.
func (r *run) loadVerify(m *manifest) error {
	rd, err := spill.Open(spill.OS, filepath.Join(r.st.s.Dir, fileVerified), verifiedWidth)
	if err != nil {
		return fmt.Errorf("dedup: cannot resume: %w", err)
	}
	defer rd.Close()
	docs := r.res.Docs
	var n int64
	for rec, ok := rd.Next(); ok; rec, ok = rd.Next() {
		a, b := int(binary.LittleEndian.Uint32(rec[0:])), int(binary.LittleEndian.Uint32(rec[4:]))
		if a >= len(docs) || b >= len(docs) {
			return fmt.Errorf("dedup: cannot resume: %s names document %d of %d", fileVerified, max(a, b), len(docs))
		}
		da, db := &docs[a], &docs[b]
		r.res.Pairs = append(r.res.Pairs, Pair{A: da.Name, B: db.Name, SeqA: da.Seq, SeqB: db.Seq,
			Similarity: math.Float64frombits(binary.LittleEndian.Uint64(rec[8:])),
			Estimate:   math.Float64frombits(binary.LittleEndian.Uint64(rec[16:])),
			StdErr:     math.Float64frombits(binary.LittleEndian.Uint64(rec[24:])),
			Exact:      rec[32] == 1, Keys: int(binary.LittleEndian.Uint32(rec[33:]))})
		n++
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("dedup: cannot resume: %w", err)
	}
	if n != m.Pairs {
		return fmt.Errorf("dedup: cannot resume: %s holds %d pairs, its manifest says %d", fileVerified, n, m.Pairs)
	}
	r.sum.Candidates += m.Candidates
	return nil
}

// sortedRuns returns the run files of a stage 2 manifest.
func (st *stages) sortedRuns(m *manifest) []string {
	out := make([]string, len(m.Runs))
	for i, n := range m.Runs {
		out[i] = filepath.Join(st.s.Dir, n)
	}
	return out
}

// close closes the stream file.
func (st *stages) close() {
	if st.sf != nil {
		st.sf.Close()
		st.sf = nil
	}
}
