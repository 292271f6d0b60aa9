package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/neardup/neardup/store"
)

// A checkpoint holds what was committed before it and nothing after, the
// restored copy opens as a store, and restore refuses a directory that is
// not empty and a backup that is not a store.
func TestCheckpointRestore(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenPebble(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put := func(id uint64) {
		b := st.NewBatch()
		b.PutDoc(id, []byte{byte(id)})
		b.AddPosting(7, id)
		if err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	put(1)
	put(2)
	dir := filepath.Join(t.TempDir(), "cp")
	if err := st.Checkpoint(ctx, dir); err != nil {
		t.Fatal(err)
	}
	put(3)
	if err := st.Checkpoint(ctx, dir); err == nil {
		t.Fatal("checkpoint into an existing directory")
	}
	restored := filepath.Join(t.TempDir(), "r")
	if err := store.RestorePebble(dir, restored); err != nil {
		t.Fatal(err)
	}
	r, err := store.OpenPebble(restored, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := r.Postings(ctx, 7, nil)
	if err != nil || len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("restored postings %v %v, want [1 2]", ids, err)
	}
	if _, ok, _ := r.Doc(ctx, 3, nil); ok {
		t.Fatal("a write after the checkpoint is in it")
	}
	r.Close()
	if err := store.RestorePebble(dir, restored); err == nil {
		t.Fatal("restored into a directory that is not empty")
	}
	notStore := t.TempDir()
	os.WriteFile(filepath.Join(notStore, "x"), []byte("x"), 0o644)
	if err := store.RestorePebble(notStore, filepath.Join(t.TempDir(), "r2")); !errors.Is(err, store.ErrNotStore) {
		t.Fatalf("restore of a directory holding no store: %v", err)
	}
}

// TestCheckpointFaults fails the backup directory's disk (ENOSPC, EIO)
// at each step of a checkpoint of a live store — the directory's
// creation, the tables' links and copies, the MANIFEST, the copies of the
// write-ahead log, the syncs, the final rename, and the removal of the
// partial copy — through Pebble's errorfs, and checks that the checkpoint
// returns a one-line error naming the cause, that no directory is left at
// the backup's path (a partial copy never looks like a backup), that the
// store is unharmed (it commits and reads as before, and is not failed),
// and that a checkpoint once the fault is gone holds every batch.
func TestCheckpointFaults(t *testing.T) {
	under := func(dir string, kinds ...errorfs.OpKind) func(errorfs.Op) bool {
		return func(op errorfs.Op) bool {
			return strings.HasPrefix(op.Path, dir) && slices.Contains(kinds, op.Kind)
		}
	}
	writes := []errorfs.OpKind{errorfs.OpCreate, errorfs.OpLink, errorfs.OpFileWrite, errorfs.OpFileWriteAt}
	syncs := []errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo}
	named := func(suffix string, kinds ...errorfs.OpKind) func(string) func(errorfs.Op) bool {
		return func(bk string) func(errorfs.Op) bool {
			return func(op errorfs.Op) bool {
				return under(bk, kinds...)(op) && strings.Contains(filepath.Base(op.Path), suffix)
			}
		}
	}
	cases := []struct {
		name  string
		err   syscall.Errno
		match func(bk string) func(errorfs.Op) bool
		// partialLeft: the fault also stops the partial copy's removal,
		// so it stays, under its partial name (given in the error).
		partialLeft bool
	}{
		{"mkdir-enospc", syscall.ENOSPC, func(bk string) func(errorfs.Op) bool { return under(bk, errorfs.OpMkdirAll) }, false},
		{"every-write-enospc", syscall.ENOSPC, func(bk string) func(errorfs.Op) bool { return under(bk, writes...) }, false},
		// The tables cannot be linked (as across file systems), and
		// their copies meet a full disk. (errorfs names a link by its
		// source, a table of the store.)
		{"table-copy-enospc", syscall.ENOSPC, func(bk string) func(errorfs.Op) bool {
			return func(op errorfs.Op) bool {
				return (op.Kind == errorfs.OpLink && strings.HasSuffix(op.Path, ".sst")) || named(".sst", writes...)(bk)(op)
			}
		}, false},
		{"manifest-enospc", syscall.ENOSPC, named("MANIFEST", writes...), false},
		{"log-copy-enospc", syscall.ENOSPC, named(".log", writes...), false},
		{"log-copy-sync-eio", syscall.EIO, named(".log", syncs...), false},
		{"every-sync-eio", syscall.EIO, func(bk string) func(errorfs.Op) bool { return under(bk, syncs...) }, false},
		{"rename-eio", syscall.EIO, func(bk string) func(errorfs.Op) bool { return under(bk, errorfs.OpRename) }, false},
		{"write-and-remove-eio", syscall.EIO, func(bk string) func(errorfs.Op) bool {
			return under(bk, append([]errorfs.OpKind{errorfs.OpRemoveAll, errorfs.OpRemove}, writes...)...)
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "index")
			bk := filepath.Join(t.TempDir(), "backup")
			in := &inject{match: c.match(bk), err: c.err}
			s, err := store.OpenPebble(dir, &store.PebbleOptions{
				FS: errorfs.Wrap(vfs.Default, in), CacheBytes: 8 << 20, MemTableBytes: 1 << 20,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b := s.NewBatch()
			defer b.Close()
			next := 0
			threeTables(t, s, b, &next)   // tables to link or copy
			commitBatches(t, b, &next, 5) // and a live log to copy

			in.on.Store(true)
			err, took := within(t, "Checkpoint", func() error { return s.Checkpoint(ctx, bk) })
			if err == nil {
				t.Fatalf("the fault never surfaced (%d injected errors)", in.hits.Load())
			}
			t.Logf("checkpoint failed after %v (%d injected): %v", took, in.hits.Load(), err)
			if !errors.Is(err, c.err) {
				t.Errorf("error %q does not wrap %v", err, c.err)
			}
			if errors.Is(err, store.ErrFailed) {
				t.Errorf("error %q fails the store: only the backup failed", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, bk) || !strings.Contains(msg, c.err.Error()) {
				t.Errorf("error %q: want one line naming %s and %q", msg, bk, c.err.Error())
			}
			if _, err := os.Lstat(bk); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after a failed checkpoint %s exists (%v): a partial copy looks like a backup", bk, err)
			}
			left, _ := filepath.Glob(bk + ".partial-*")
			if c.partialLeft != (len(left) > 0) || (len(left) > 0 && !strings.Contains(err.Error(), left[0])) {
				t.Errorf("partial copies left %v (want some: %v), error %q", left, c.partialLeft, err)
			}

			// The store is unharmed, while the backup disk still fails.
			commitBatches(t, b, &next, 5)
			for n := range next {
				checkCrashBatch(t, s, n)
			}
			if err := s.Flush(); err != nil {
				t.Fatalf("flush after a failed checkpoint: %v", err)
			}

			// The disk is freed: a checkpoint now holds every batch.
			in.on.Store(false)
			for _, p := range left {
				os.RemoveAll(p)
			}
			if err := s.Checkpoint(ctx, bk); err != nil {
				t.Fatalf("checkpoint once the fault is gone: %v", err)
			}
			restored := filepath.Join(t.TempDir(), "restored")
			if err := store.RestorePebble(bk, restored); err != nil {
				t.Fatal(err)
			}
			r, err := store.OpenPebble(restored, &store.PebbleOptions{CacheBytes: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for n := range next {
				checkCrashBatch(t, r, n)
			}
		})
	}
}
