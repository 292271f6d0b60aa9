package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// outputMode is the mode of the files commands write (before the umask).
const outputMode = 0o644

// outFile says how createOutput writes a file.
type outFile struct {
	// Inputs are files the output must never replace.
	Inputs []string
	// Replace allows replacing an existing file at the path; without it an
	// existing file is an error and is left untouched.
	Replace bool
}

// createOutput writes the file path with write, through a file no one
// else sees: on Linux an unnamed file (O_TMPFILE) in path's directory,
// linked into place when write succeeds, so that a kill, even SIGKILL,
// leaves nothing behind; elsewhere a temporary file removed on failure.
// The file gets mode 0644 (less the umask). Without o.Replace, an existing
// file at path is an error ("exists") and is never touched, even if one
// appears while the file is written (the link fails). Every write checks
// ctx, so a cancelled command (SIGTERM, Ctrl-C) stops at once and writes
// nothing.
func createOutput(ctx context.Context, path string, o outFile, write func(w io.Writer) error) error {
	if p, same := sameAsAny(path, o.Inputs); same {
		return usagef("refusing to write %s: it is the input %s", path, p)
	}
	if !o.Replace {
		if _, err := os.Lstat(path); err == nil {
			return usagef("refusing to write %s: the file exists (--force replaces it)", path)
		}
	}
	f, commit, err := createUnnamed(path, o.Replace)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			commit(false)
		}
	}()
	if err := write(ctxWriter{ctx, f}); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	committed = true
	if err := commit(true); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("refusing to write %s: a file appeared there while it was written", path)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// createTemp is the portable createUnnamed: a temporary file beside path,
// renamed (Replace) or hard-linked (no replacing) into place by commit.
func createTemp(path string, replace bool) (*os.File, func(ok bool) error, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".neardup-*.tmp")
	if err != nil {
		return nil, nil, err
	}
	if err := f.Chmod(outputMode &^ umask()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, nil, err
	}
	commit := func(ok bool) error {
		tmp := f.Name()
		cerr := f.Close()
		if !ok || cerr != nil {
			os.Remove(tmp)
			return cerr
		}
		if replace {
			if err := os.Rename(tmp, path); err != nil {
				os.Remove(tmp)
				return err
			}
			return nil
		}
		err := os.Link(tmp, path)
		os.Remove(tmp)
		return err
	}
	return f, commit, nil
}

// ctxWriter fails every write once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// ctxReader fails every read once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
