package dedup

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// This file holds stage 1's checkpoints: the stream of documents, rejected
// records and input ends saved beside the sketches, and their restoration.

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
	marks  []streamMark // read goroutine: since the last job sent
	names  idTable
	paths  pathTable // of names
	seq    int       // documents numbered when restored
	noDups bool

	// Collector goroutine.
	pending   []streamMark  // marks not yet in the stream
	written   int           // documents of res.Docs in the stream
	places    []recordPlace // where the documents of res.Docs[written:] were read
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
	cfg["dedup.compare"] = r.compareForm() // stages 2 and 3 depend on it
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
	r.ext = &external{dir: st.s.Dir, f: kf, w: bufio.NewWriterSize(kf, r.ioBuf()), off: m.SketchBytes}
	r.sum.External = true
	if m.Features {
		ff, err := open(fileFeatures, m.FeatureBytes)
		if err != nil {
			sf.Close()
			kf.Close()
			return err
		}
		r.ext.feats = &featFile{f: ff, w: bufio.NewWriterSize(ff, r.ioBuf()), off: m.FeatureBytes}
		r.side.dropFeatures() // they are in the feature file
	}
	st.sf, st.sw, st.soff, st.items, st.started, st.restored = sf, bufio.NewWriterSize(sf, r.ioBuf()), m.StreamBytes, m.Items, true, true
	var off int64
	err = readStream(io.NewSectionReader(sf, 0, m.StreamBytes), m.Items, st.hdr, func(it *streamItem) error {
		s := r.sum
		switch {
		case it.doc != nil:
			d := it.doc
			off += 8 * int64(it.x.nvals)
			r.ext.ends.push(off)
			if !st.noDups {
				st.names.add(d.Name, st.paths.ref(it.x.place))
			}
			st.seq = d.Seq + 1
			s.Read++
			s.Bytes += int64(d.Bytes)
			if m.Features || it.x.feats.features != nil || it.x.feats.weighted != nil {
				bud.kept += int64(d.Shingles)
			} else if r.o.Exact != ExactNever {
				bud.on = false
			}
			r.res.Docs = append(r.res.Docs, *d)
			r.side.push(&docIx{size: it.x.size, feats: it.x.feats}, false)
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
	if bud.on && !m.Features && r.o.Exact == ExactAuto && bud.kept > r.o.ExactBudget {
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

// appendStream appends the documents collected and the marks met since
// its last call to the stream (from the collecting goroutine), once the
// run is out of core; before, they wait in memory (st.pending,
// st.places). The marks pending come from the jobs collected, so none
// belongs before a document yet to come. A checkpoint (save) makes what
// it wrote part of the stage.
func (r *run) appendStream() error {
	st := r.st
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
		st.sf, st.sw, st.started = f, bufio.NewWriterSize(f, r.ioBuf()), true
	}
	docs := r.res.Docs
	k := st.written
	for _, m := range st.pending {
		for ; k < len(docs) && docs[k].Seq < m.at; k++ {
			r.writeDoc(k)
		}
		st.writeMark(m)
	}
	for ; k < len(docs); k++ {
		r.writeDoc(k)
	}
	st.places = st.places[:copy(st.places, st.places[k-st.written:])]
	st.written = k
	st.pending = st.pending[:0]
	return nil
}

// writeDoc appends the document at position k, not yet in the stream, to
// it.
func (r *run) writeDoc(k int) {
	st := r.st
	_, n := r.ext.span(k)
	st.writeDoc(&r.res.Docs[k], &streamDoc{nvals: n, size: *r.side.sizes.at(k), place: st.places[k-st.written], feats: r.side.features(k)})
}

// save is a checkpoint of stage 1 (from the collecting goroutine): the
// documents collected and the marks up to an input end are appended to
// the stream (appendStream), the files flushed and the manifest
// rewritten. Before the run goes out of core, nothing is written.
func (r *run) save(final bool) error {
	st := r.st
	if r.ext == nil {
		return nil
	}
	if err := r.appendStream(); err != nil {
		return err
	}
	docs := r.res.Docs
	if err := st.sw.Flush(); err != nil {
		return fmt.Errorf("dedup: writing %s: %w", fileStream, err)
	}
	if err := r.ext.w.Flush(); err != nil {
		return fmt.Errorf("dedup: writing sketches: %w", err)
	}
	ff := r.ext.feats
	if ff != nil {
		if err := ff.flush(); err != nil {
			return err
		}
	}
	if final {
		if err := st.sf.Sync(); err != nil {
			return fmt.Errorf("dedup: writing %s: %w", fileStream, err)
		}
		if err := r.ext.f.Sync(); err != nil {
			return fmt.Errorf("dedup: writing sketches: %w", err)
		}
		if ff != nil {
			if err := ff.f.Sync(); err != nil {
				return fmt.Errorf("dedup: writing feature sets: %w", err)
			}
		}
	}
	m := st.manifest(StageSketch)
	m.Complete, m.InputsDone, m.Items, m.StreamBytes, m.SketchBytes, m.Docs = final, st.inputs, st.items, st.soff, r.ext.off, int64(len(docs))
	if ff != nil {
		m.Features, m.FeatureBytes = true, ff.off
	}
	if err := writeManifest(st.s.Dir, manSketch, m); err != nil {
		return err
	}
	r.ev.checkpoint(CheckpointInfo{Stage: StageSketch, Inputs: st.inputs, Docs: int64(len(docs)), Complete: final})
	return nil
}
