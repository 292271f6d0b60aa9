package dedup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/neardup/neardup/dedup/spill"
	"github.com/neardup/neardup/identity"
)

// Stage files of a resumable out-of-core run (Options.Stages), in the
// work directory:
//
//	stage-inputs.json   the inputs (names, sizes, modification times)
//	identity.key        the identity fingerprints' secret key (mode 0600):
//	                    a resumed run fingerprints with it again
//	stream.bin          stage 1: the documents, rejected records and input
//	                    ends in input order (the read-and-sketch output)
//	sketches.bin        stage 1: the sketch values
//	features.bin        stage 1: the feature sets, while exact
//	                    verification is on (features.go)
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
	stagesVersion = 3 // 3: 128-bit identity fingerprints in the stream; 2: the feature sets in features.bin, not in the stream
	fileInputs    = "stage-inputs.json"
	fileKey       = "identity.key"
	fileStream    = "stream.bin"
	fileSketches  = "sketches.bin"
	fileFeatures  = "features.bin"
	fileVerified  = "verified.run"
	manSketch     = "stage-sketch.json"
	manIndex      = "stage-index.json"
	manVerify     = "stage-verify.json"
	verifiedWidth = 37 // posA, posB uint32; similarity, estimate, stderr float64; exact byte; keys uint32
	// fileHighs names (os.CreateTemp) the high halves of the sketch values
	// of a run in memory that needs them (values.go); not a stage file, it
	// is removed when the run ends.
	fileHighs = "sketch-highs-*.bin"
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
	// Features says that the feature sets are in features.bin, of
	// FeatureBytes bytes.
	Features     bool  `json:"features,omitempty"`
	FeatureBytes int64 `json:"feature_bytes,omitempty"`
	Docs         int64 `json:"docs,omitempty"`
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
var workFiles = []string{manVerify, manIndex, manSketch, fileSketches, fileFeatures, fileStream, fileInputs, fileKey, fileVerified, fileHighs,
	"keys-*.run", "pairs-*.run", "vpairs-*.run", ".vpairs-*.tmp*", ".cands-*.tmp", ".keys-*.tmp*", ".pairs-*.tmp*", ".stage-*.tmp*", "." + fileVerified + ".tmp*", "." + fileKey + ".tmp*"}

// readKeyFile reads the identity key of a resumable run from its work
// directory; ok is false when there is none.
func readKeyFile(dir string) (k identity.Key, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, fileKey))
	if errors.Is(err, os.ErrNotExist) {
		return k, false, nil
	}
	if err != nil {
		return k, false, fmt.Errorf("dedup: %w", err)
	}
	if k, err = identity.ParseKey(string(b)); err != nil || k.IsZero() {
		return k, false, fmt.Errorf("dedup: cannot resume from %s: %s is damaged", dir, fileKey)
	}
	return k, true, nil
}

// writeKeyFile records the identity key of a resumable run in its work
// directory, readable by its owner only.
func writeKeyFile(dir string, k identity.Key) error {
	if err := identity.WriteKeyFile(filepath.Join(dir, fileKey), k, true); err != nil {
		return fmt.Errorf("dedup: writing %s: %w", fileKey, err)
	}
	return nil
}

// keyCheck is what a manifest records of the identity key: a value that
// tells keys apart (a resumed run, or shards, fingerprinting under
// another key is refused) and reveals nothing of the key.
func keyCheck(k identity.Key) string {
	return identity.New(k).Sum([]byte("neardup dedup stage key check")).String()[:16]
}

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
