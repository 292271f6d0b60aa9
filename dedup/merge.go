package dedup

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/sketch"
)

// ShardConfig reads the stage 1 manifests of the shards in dirs (the work
// directories of runs with Stages.Shard 0 … Shards-1, in any order) and
// returns their common configuration (Stages.Config, with the run's
// "dedup.*" keys). It fails, in one line, unless every shard of the same
// run is there once, finished stage 1, and has the same inputs and
// configuration as the others.
func ShardConfig(dirs []string) (map[string]string, error) {
	ms, err := readShards(dirs)
	if err != nil {
		return nil, err
	}
	return ms[0].Config, nil
}

// readShards reads and checks the shards' manifests, ordered by shard.
func readShards(dirs []string) ([]*manifest, error) {
	if len(dirs) == 0 {
		return nil, errors.New("dedup merge: no shard work directories")
	}
	var n int
	byShard := map[int]string{}
	var ms []*manifest
	for _, d := range dirs {
		m, err := readManifest(d, manSketch)
		if err != nil {
			return nil, fmt.Errorf("dedup merge: %w", err)
		}
		if m == nil {
			return nil, fmt.Errorf("dedup merge: %s holds no shard's stage files (no %s)", d, manSketch)
		}
		if m.Version != stagesVersion {
			return nil, fmt.Errorf("dedup merge: %s: stage files of format version %d, this is version %d", d, m.Version, stagesVersion)
		}
		if m.Shards <= 1 {
			return nil, fmt.Errorf("dedup merge: %s holds a whole run, not a shard", d)
		}
		if len(ms) == 0 {
			n = m.Shards
		} else if m.Shards != n {
			return nil, fmt.Errorf("dedup merge: %s is a shard of %d, %s of %d", d, m.Shards, dirs[0], n)
		}
		if prev, ok := byShard[m.Shard]; ok {
			return nil, fmt.Errorf("dedup merge: shard %d/%d given twice (%s and %s)", m.Shard+1, n, prev, d)
		}
		byShard[m.Shard] = d
		if !m.Complete {
			return nil, fmt.Errorf("dedup merge: shard %d/%d in %s has not finished stage 1 (its inputs before input %d of %d are done): finish it with --resume", m.Shard+1, n, d, m.InputsDone+1, m.NInputs)
		}
		if len(ms) > 0 {
			if m.Inputs != ms[0].Inputs {
				return nil, fmt.Errorf("dedup merge: shards %d/%d (%s) and %d/%d (%s) read different inputs", ms[0].Shard+1, n, byShard[ms[0].Shard], m.Shard+1, n, d)
			}
			if k, a, b, ok := configDiff(ms[0].Config, m.Config); !ok {
				return nil, fmt.Errorf("dedup merge: shards have different configurations: %s is %q in %s, %q in %s", k, a, byShard[ms[0].Shard], b, d)
			}
		}
		ms = append(ms, m)
	}
	var missing []string
	for s := range n {
		if _, ok := byShard[s]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", s+1, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("dedup merge: shard %s missing (%d of %d given)", strings.Join(missing, ", "), len(dirs), n)
	}
	out := make([]*manifest, n)
	for i, m := range ms {
		m.dir = dirs[i]
		out[m.Shard] = m
	}
	return out, nil
}

// configDiff returns the first key whose values differ.
func configDiff(a, b map[string]string) (key, va, vb string, same bool) {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok1 := a[k]
		w, ok2 := b[k]
		if v != w || ok1 != ok2 {
			return k, v, w, false
		}
	}
	return "", "", "", true
}

// MergeShards joins the stage 1 outputs of the shards in dirs into the
// stage files of one whole run in s.Dir, as the run would have written
// them by itself: documents renumbered in input order, repeated ids
// rejected across shards (a shard leaves them to the merge), sketches
// copied. Run with s (Resume set) then continues from stage 2 and writes
// the output of a single-process run, byte for byte. s.Inputs and
// s.Config must be those the shards recorded.
func MergeShards(dirs []string, s *Stages) error {
	ms, err := readShards(dirs)
	if err != nil {
		return err
	}
	m0 := ms[0]
	if m0.Inputs != inputsHash(s.Inputs) {
		return fmt.Errorf("dedup merge: %s", (&Stages{Dir: m0.Runs[0], Inputs: s.Inputs}).inputsChange())
	}
	for k, v := range s.Config {
		if w := m0.Config[k]; w != v {
			return fmt.Errorf("dedup merge: %s is %q in the shards, %q here", k, w, v)
		}
	}
	exactMode, exactBudget := ExactAuto, int64(0)
	if mode, budget, ok := strings.Cut(m0.Config["dedup.exact"], "/"); ok {
		m, _ := strconv.Atoi(mode)
		exactMode = ExactMode(m)
		exactBudget, _ = strconv.ParseInt(budget, 10, 64)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("dedup merge: %w", err)
	}
	if err := RemoveWork(s.Dir); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(s.Inputs, "", " ")
	if err := writeAtomic(s.Dir, fileInputs, b, true); err != nil {
		return err
	}

	type shard struct {
		m     *manifest
		items chan *streamItem
		errc  chan error
		kf    *bufio.Reader
		ff    *bufio.Reader // its feature file, when it has one
		close func()
	}
	var hdr sketch.Header // the documents' index headers are set again when restored
	shards := make([]*shard, len(ms))
	stop := make(chan struct{})
	defer close(stop)
	for i, m := range ms {
		dir := m.dir
		sf, err := os.Open(filepath.Join(dir, fileStream))
		if err != nil {
			return fmt.Errorf("dedup merge: %w", err)
		}
		kf, err := os.Open(filepath.Join(dir, fileSketches))
		if err != nil {
			sf.Close()
			return fmt.Errorf("dedup merge: %w", err)
		}
		sh := &shard{m: m, items: make(chan *streamItem, 256), errc: make(chan error, 1), kf: bufio.NewReaderSize(io.NewSectionReader(kf, 0, m.SketchBytes), 1<<20),
			close: func() { sf.Close(); kf.Close() }}
		defer sh.close()
		if m.Features {
			ff, err := os.Open(filepath.Join(dir, fileFeatures))
			if err != nil {
				return fmt.Errorf("dedup merge: %w", err)
			}
			defer ff.Close()
			sh.ff = bufio.NewReaderSize(io.NewSectionReader(ff, 0, m.FeatureBytes), 1<<20)
		}
		shards[i] = sh
		go func() {
			defer close(sh.items)
			sh.errc <- readStream(io.NewSectionReader(sf, 0, m.StreamBytes), m.Items, hdr, func(it *streamItem) error {
				c := *it
				select {
				case sh.items <- &c:
					return nil
				case <-stop:
					return errors.New("stopped")
				}
			})
		}()
	}

	sf, err := os.Create(filepath.Join(s.Dir, fileStream))
	if err != nil {
		return fmt.Errorf("dedup merge: %w", err)
	}
	defer sf.Close()
	kf, err := os.Create(filepath.Join(s.Dir, fileSketches))
	if err != nil {
		return fmt.Errorf("dedup merge: %w", err)
	}
	defer kf.Close()
	st := &stages{sw: bufio.NewWriterSize(sf, 1<<20)}
	kw := bufio.NewWriterSize(kf, 1<<20)
	// The feature sets, when every shard has its feature file.
	var ff *featFile
	withFeatures := true
	for _, m := range ms {
		withFeatures = withFeatures && m.Features
	}
	if withFeatures {
		if ff, err = createFeatFile(s.Dir, 1<<20); err != nil {
			return fmt.Errorf("dedup merge: %w", err)
		}
		defer ff.close()
	}
	var fbuf []byte
	var koff int64
	var names idTable
	var paths pathTable
	seq := 0
	var shingles int64
	lacking := -1 // a shard whose documents lack feature sets
	var buf []byte
	for i := range s.Inputs {
		sh := shards[i%len(shards)]
		for {
			it, ok := <-sh.items
			if !ok {
				if err := <-sh.errc; err != nil {
					return fmt.Errorf("dedup merge: %s: %w", filepath.Join(sh.m.dir, fileStream), err)
				}
				return fmt.Errorf("dedup merge: shard %d/%d in %s ends before input %d", sh.m.Shard+1, len(shards), sh.m.dir, i)
			}
			if it.end != nil {
				if it.end.Input != i {
					return fmt.Errorf("dedup merge: shard %d/%d in %s holds input %d where %d was due", sh.m.Shard+1, len(shards), sh.m.dir, it.end.Input, i)
				}
				st.writeMark(streamMark{at: seq, end: it.end})
				break
			}
			if it.rej != nil {
				st.writeMark(streamMark{at: seq, rej: it.rej})
				continue
			}
			d := it.doc
			vals := 8 * it.x.nvals
			if cap(buf) < vals {
				buf = make([]byte, vals)
			}
			if _, err := io.ReadFull(sh.kf, buf[:vals]); err != nil {
				return fmt.Errorf("dedup merge: %s: %w", filepath.Join(sh.m.dir, fileSketches), err)
			}
			var frec []byte // the document's feature record
			if sh.ff != nil {
				n, err := binary.ReadUvarint(sh.ff)
				if err == nil && n > 1<<32 {
					err = errCorruptFeatures
				}
				if err == nil {
					fbuf = binary.AppendUvarint(fbuf[:0], n)
					at := len(fbuf)
					fbuf = slices.Grow(fbuf, int(n))[:at+int(n)]
					_, err = io.ReadFull(sh.ff, fbuf[at:])
				}
				if err != nil {
					return fmt.Errorf("dedup merge: %s: %w", filepath.Join(sh.m.dir, fileFeatures), err)
				}
				frec = fbuf
			}
			p := it.x.place
			if first, dup := names.add(d.Name, paths.ref(p)); dup {
				st.writeMark(streamMark{at: seq, rej: &corpus.RecordError{ID: d.Name, Path: p.path, Line: p.line, Offset: p.offset,
					Reason: ReasonDuplicateID, Err: fmt.Errorf("id %q already used by %s", d.Name, paths.String(first))}})
				seq++
				continue
			}
			d.Seq = seq
			seq++
			st.writeDoc(d, &it.x)
			if _, err := kw.Write(buf[:vals]); err != nil {
				return fmt.Errorf("dedup merge: %w", err)
			}
			koff += int64(vals)
			if ff != nil {
				if _, err := ff.w.Write(frec); err != nil {
					return fmt.Errorf("dedup merge: %w", err)
				}
				ff.off += int64(len(frec))
			}
			shingles += int64(d.Shingles)
			if !sh.m.Features && it.x.feats.features == nil && it.x.feats.weighted == nil && lacking < 0 {
				lacking = sh.m.Shard
			}
		}
	}
	for _, sh := range shards {
		if it, ok := <-sh.items; ok && it != nil {
			return fmt.Errorf("dedup merge: shard %d/%d in %s holds records past its inputs", sh.m.Shard+1, len(shards), sh.m.dir)
		}
		if err := <-sh.errc; err != nil {
			return fmt.Errorf("dedup merge: %s: %w", filepath.Join(sh.m.dir, fileStream), err)
		}
	}
	// A whole run verifies exactly when the feature sets of all its
	// documents fit the budget; a shard that went over it alone dropped
	// them, which the whole run would not have.
	if lacking >= 0 && (exactMode == ExactAlways || exactMode == ExactAuto && shingles <= exactBudget) {
		return fmt.Errorf("dedup merge: shard %d/%d dropped its feature sets (over the exact budget by itself), which the whole run keeps: rerun the shards with --exact never, or merge fewer", lacking+1, len(shards))
	}
	if err := st.sw.Flush(); err != nil {
		return fmt.Errorf("dedup merge: %w", err)
	}
	if err := kw.Flush(); err != nil {
		return fmt.Errorf("dedup merge: %w", err)
	}
	if err := sf.Sync(); err != nil {
		return fmt.Errorf("dedup merge: %w", err)
	}
	if err := kf.Sync(); err != nil {
		return fmt.Errorf("dedup merge: %w", err)
	}
	if ff != nil {
		if err := ff.flush(); err != nil {
			return fmt.Errorf("dedup merge: %w", err)
		}
		if err := ff.f.Sync(); err != nil {
			return fmt.Errorf("dedup merge: %w", err)
		}
	}
	m := &manifest{Version: stagesVersion, Stage: StageSketch, Complete: true, Inputs: m0.Inputs, NInputs: m0.NInputs, Config: m0.Config,
		InputsDone: len(s.Inputs), Items: st.items, StreamBytes: st.soff, SketchBytes: koff, Docs: int64(names.len())}
	if ff != nil {
		m.Features, m.FeatureBytes = true, ff.off
	}
	return writeManifest(s.Dir, manSketch, m)
}

// finishShard ends the run of a shard after stage 1: its result holds
// the documents it read and the summary's counts of them (read, rejected,
// bytes); MergeShards and a resumed run do the rest.
func (r *run) finishShard(start time.Time) (*Result, error) {
	sum := r.sum
	sum.Kept = int64(len(r.res.Docs))
	if sum.Read != sum.Kept+sum.Rejected {
		return nil, fmt.Errorf("dedup: accounting error: read %d != sketched %d + rejected %d", sum.Read, sum.Kept, sum.Rejected)
	}
	sum.Stages = r.ev.stages
	sum.Seconds = time.Since(start).Seconds()
	return r.res, nil
}
