package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/chunk/filesim"
	"github.com/neardup/neardup/internal/progress"
)

// newFilesCmd groups the file commands: scan, similar, plan, apply, serve,
// pull and sync.
func newFilesCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "files",
		Short: "Chunk files by winnowing: duplicates, dedup ratio, similar files, sync plans",
		Long: `The files commands cut files into content-defined chunks by winnowing
(book 6.2), hash every chunk, and use the chunk lists to find duplicate and
similar files, to plan and apply deltas between versions of a file, and to
bring a directory up to date with a tree served from another machine
(serve, pull) or on this one (sync), sending only what is new.`,
		Example: `  neardup files scan ~/src
  neardup files similar report.doc --in ~/docs
  neardup files plan old.img new.img --delta new.delta
  neardup files apply old.img new.delta -o rebuilt.img
  neardup files serve ~/src --addr 127.0.0.1:8090
  neardup files pull http://127.0.0.1:8090 ./mirror --delete --json`,
	}
	cmd.AddCommand(newFilesScanCmd(env), newFilesSimilarCmd(env), newFilesPlanCmd(env), newFilesApplyCmd(env),
		newFilesServeCmd(env), newFilesPullCmd(env), newFilesDirSyncCmd(env))
	return cmd
}

// chunkFlags are the chunk-size flags shared by the file commands.
type chunkFlags struct {
	Min, Avg, Max int
}

func (f *chunkFlags) bind(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.Avg, "avg", chunk.DefaultAvg, "average chunk size in bytes")
	cmd.Flags().IntVar(&f.Min, "min", 0, "minimum chunk size in bytes, more than 64; only a file's last chunk is shorter (default 3*avg/4)")
	cmd.Flags().IntVar(&f.Max, "max", 0, "maximum chunk size in bytes (default 2*avg-min, so that avg = (min+max)/2)")
}

func (f chunkFlags) options() (chunk.Options, error) {
	o := chunk.Options{Min: f.Min, Avg: f.Avg, Max: f.Max}.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return o, usagef("%v", err)
	}
	return o, nil
}

func sketchParams(name string) (filesim.Params, error) {
	switch name {
	case "rdc":
		return filesim.RDC, nil
	case "large":
		return filesim.Large, nil
	}
	return filesim.Params{}, usagef("unknown --sketch %q (want rdc or large)", name)
}

// fileEntry is a regular file found by walkFiles.
type fileEntry struct {
	Path string // as walked
	Rel  string // relative to the root it was found under
	Size int64
}

// walkFiles lists the regular files under roots (files or directories),
// without following symbolic links. Broken links, link loops and unreadable
// directories are reported on stderr and skipped; links to existing targets
// are skipped silently, as are special files. It returns the number of
// problems reported.
func walkFiles(ctx context.Context, env *Env, roots []string) ([]fileEntry, int, error) {
	var out []fileEntry
	problems := 0
	report := func(path string, err error) {
		problems++
		fmt.Fprintf(env.Stderr, "neardup: skip %s: %v\n", path, err)
	}
	for _, root := range roots {
		info, err := os.Lstat(root)
		if err != nil {
			return nil, problems, err
		}
		if info.Mode().IsRegular() {
			out = append(out, fileEntry{Path: root, Rel: filepath.Base(root), Size: info.Size()})
			continue
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if err != nil {
				if path == root {
					return err
				}
				report(path, err)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			switch t := d.Type(); {
			case t&fs.ModeSymlink != 0:
				if _, err := os.Stat(path); err != nil {
					if isLoop(err) {
						report(path, fmt.Errorf("symbolic link loop"))
					} else {
						report(path, fmt.Errorf("broken symbolic link"))
					}
				}
				return nil
			case d.IsDir() || !t.IsRegular():
				return nil
			}
			info, err := d.Info()
			if err != nil {
				report(path, err)
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			out = append(out, fileEntry{Path: path, Rel: filepath.ToSlash(rel), Size: info.Size()})
			return nil
		})
		if err != nil {
			return nil, problems, err
		}
	}
	return out, problems, nil
}

var errLoop error = syscall.ELOOP

func isLoop(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return errors.Is(pe.Err, errLoop)
	}
	return errors.Is(err, errLoop)
}

// signedFile is a file with its signature.
type signedFile struct {
	fileEntry
	Sig *chunk.Signature
}

// signFiles signs every file, reporting and skipping unreadable ones.
func signFiles(ctx context.Context, env *Env, files []fileEntry, o chunk.Options, what string) ([]signedFile, int, error) {
	signer, err := chunk.NewSigner(o)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	prog := progress.New(progress.Options{W: env.Stderr, Interactive: env.Interactive, NoSummary: true}, "neardup "+what, total, "bytes")
	defer prog.Finish()
	var out []signedFile
	problems := 0
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, problems, err
		}
		sig, err := signFile(signer, f.Path, func(r chunk.Ref, _ []byte) { prog.Add(int64(r.Length)) })
		if err != nil {
			problems++
			fmt.Fprintf(env.Stderr, "neardup: skip %s: %v\n", f.Path, err)
			continue
		}
		f.Size = sig.Size
		out = append(out, signedFile{fileEntry: f, Sig: sig})
	}
	return out, problems, nil
}

func signFile(s *chunk.Signer, path string, visit func(chunk.Ref, []byte)) (*chunk.Signature, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return s.Sign(f, visit)
}

// sameAsAny reports which of paths names the same file as target, if any.
func sameAsAny(target string, paths []string) (string, bool) {
	ti, err := os.Stat(target)
	if err != nil {
		return "", false
	}
	for _, p := range paths {
		if pi, err := os.Stat(p); err == nil && os.SameFile(ti, pi) {
			return p, true
		}
	}
	return "", false
}

// writeFileSafely writes the file path with createOutput, replacing an
// existing file but never one of inputs.
func writeFileSafely(path string, inputs []string, write func(w io.Writer) error) error {
	return createOutput(context.Background(), path, outFile{Inputs: inputs, Replace: true}, write)
}
