package rdc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/filesim"
)

// tempPrefix starts the names of the temporary files and the staging
// directory a pull makes; trees are scanned without them.
const tempPrefix = ".neardup-pull-"

// DefaultChunk are the chunk sizes of served signatures: 512 bytes on
// average (384 to 640). Small chunks find more of a changed source file
// (most files of a source tree are a few kilobytes); the recursive
// signature keeps the hashes sent for an unchanged stretch few.
var DefaultChunk = chunk.Options{Avg: 512}

// Tree is a scanned directory: its manifest and the signature of every
// file. A Tree is read-only once made and safe for concurrent use.
type Tree struct {
	Dir      string
	Manifest Manifest
	// Sigs[i] is the signature of Manifest.Entries[i] (nil unless a file).
	Sigs []*chunk.Signature
	// Skipped lists the entries left out (special files, unreadable or
	// unsafe names) with the reason.
	Skipped []string
}

// Scan walks dir without following symbolic links and signs every
// regular file with opts (zero fields take DefaultChunk's), on
// GOMAXPROCS goroutines.
func Scan(ctx context.Context, dir string, opts chunk.Options) (*Tree, error) {
	if opts == (chunk.Options{}) {
		opts = DefaultChunk
	}
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t := &Tree{Dir: dir, Manifest: Manifest{Chunk: opts}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err != nil {
			if p == dir {
				return err
			}
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", p, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), tempPrefix) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := CheckName(rel); err != nil {
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", p, err))
			return nil
		}
		info, err := d.Info()
		if err != nil {
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", p, err))
			return nil
		}
		e := Entry{Path: rel, Mode: info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		switch {
		case d.IsDir():
			e.Kind = Dir
		case info.Mode().IsRegular():
			e.Kind, e.Size = File, info.Size()
		case d.Type()&fs.ModeSymlink != 0:
			e.Kind = Symlink
			if e.Target, err = os.Readlink(p); err != nil {
				t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", p, err))
				return nil
			}
		default:
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s: not a regular file, directory or symbolic link", p))
			return nil
		}
		t.Manifest.Entries = append(t.Manifest.Entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ents := t.Manifest.Entries
	sort.Slice(ents, func(i, j int) bool { return ents[i].Path < ents[j].Path })
	t.Sigs = make([]*chunk.Signature, len(ents))
	files := make([]int, 0, len(ents))
	for i := range ents {
		if ents[i].Kind == File {
			files = append(files, i)
		}
	}
	bad := make([]error, len(ents))
	err = parallel(ctx, len(files), func() func(k int) error {
		signer, _ := chunk.NewSigner(opts)
		sk, _ := filesim.NewSketcher(SketchParams)
		return func(k int) error {
			i := files[k]
			sig, err := signPath(signer, filepath.Join(dir, filepath.FromSlash(ents[i].Path)))
			if err != nil {
				bad[i] = err
				return nil
			}
			t.Sigs[i] = sig
			setFileEntry(&ents[i], sig, sk)
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	// Unreadable files are left out, with the reason.
	n := 0
	for i := range ents {
		if bad[i] != nil {
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", ents[i].Path, bad[i]))
			continue
		}
		ents[n], t.Sigs[n] = ents[i], t.Sigs[i]
		n++
	}
	t.Manifest.Entries, t.Sigs = ents[:n], t.Sigs[:n]
	return t, nil
}

func setFileEntry(e *Entry, sig *chunk.Signature, sk *filesim.Sketcher) {
	e.Size, e.Root, e.Depth, e.Chunks = sig.Size, sig.Root, len(sig.Levels), len(sig.Chunks)
	e.Sketch = sk.Sketch(sig.Chunks).Values
}

func signPath(s *chunk.Signer, p string) (*chunk.Signature, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return s.Sign(f, nil)
}

// parallel runs do(0..n-1) on GOMAXPROCS goroutines, each with its own
// state made by mk; the first error stops the rest.
func parallel(ctx context.Context, n int, mk func() func(int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(n, 1))
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do := mk()
			for {
				mu.Lock()
				if first == nil {
					first = ctx.Err()
				}
				if next >= n || first != nil {
					mu.Unlock()
					return
				}
				k := next
				next++
				mu.Unlock()
				if err := do(k); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// leafRange returns the chunks [lo, hi) under node i of level lv.
func leafRange(sig *chunk.Signature, lv, i int) (lo, hi int) {
	n := sig.Levels[lv][i]
	lo, hi = n.Lo, n.Hi
	for l := lv - 1; l >= 0; l-- {
		lo, hi = sig.Levels[l][lo].Lo, sig.Levels[l][hi-1].Hi
	}
	return lo, hi
}

var errChanged = errors.New("rdc: the served file changed since it was scanned")

func sumChunk(b []byte) chunk.Sum { return chunk.SumChunk(b) }
