package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
