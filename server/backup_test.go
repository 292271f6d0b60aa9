package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/store"
)

// TestBackupUnderLoad: a backup taken through POST /v1/admin/backup while
// four clients add documents restores to an index that (1) holds every
// document acknowledged before the backup was asked for, and none first
// sent after it returned, (2) passes the index check, and (3) answers
// every query exactly as an index built afresh from the documents it
// holds does.
func TestBackupUnderLoad(t *testing.T) {
	st := openStore(t, "pebble", "")
	r := serve(t, st, server.Options{Token: "secret"}, &client.Options{Token: "secret"})
	ctx := context.Background()
	const clients, perClient, batch = 4, 60, 5
	texts := map[string]string{}
	var mu sync.Mutex
	var acked sync.Map // id → true once its Add returned
	var sentAfter sync.Map
	var backupDone atomic.Bool
	var wg sync.WaitGroup
	started := make(chan struct{})
	var once sync.Once
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perClient; i += batch {
				var docs []api.Document
				for j := i; j < i+batch; j++ {
					id := fmt.Sprintf("c%d-%03d", c, j)
					w := text(uint64(c*1000+j), 120)
					if j%3 == 1 { // a near-duplicate of the one before
						w = edit(text(uint64(c*1000+j-1), 120), uint64(j), 2)
					}
					d := doc(id, w)
					mu.Lock()
					texts[id] = d.Text
					mu.Unlock()
					if backupDone.Load() {
						sentAfter.Store(id, true)
					}
					docs = append(docs, d)
				}
				if _, err := r.C.Add(ctx, docs, false); err != nil {
					t.Error(err)
					return
				}
				for _, d := range docs {
					acked.Store(d.ID, true)
				}
				if i >= 2*batch {
					once.Do(func() { close(started) })
				}
			}
		}()
	}
	<-started
	var before []string
	acked.Range(func(k, _ any) bool { before = append(before, k.(string)); return true })
	dir := filepath.Join(t.TempDir(), "backup")
	res, err := r.C.Backup(ctx, dir)
	backupDone.Store(true)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if res.Dir != dir {
		t.Fatalf("backup reply %+v", res)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if err := store.RestorePebble(dir, restored); err != nil {
		t.Fatal(err)
	}
	rst, err := store.OpenPebble(restored, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rst.Close()
	x, err := index.Open(ctx, rst, index.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := x.Check(ctx, false)
	if err != nil || !rep.OK() {
		t.Fatalf("check of the restored index: %+v %v", rep, err)
	}
	held := map[string]bool{}
	if err := rst.ScanDocs(ctx, func(_ uint64, rec []byte) error {
		d, err := index.DecodeDoc(rec)
		if err == nil {
			held[d.Name] = true
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range before {
		if !held[id] {
			t.Fatalf("%s was acknowledged before the backup and is not in it", id)
		}
	}
	sentAfter.Range(func(k, _ any) bool {
		if held[k.(string)] {
			t.Errorf("%s was sent after the backup and is in it", k)
		}
		return true
	})
	if len(held) == 0 || len(held) == clients*perClient {
		t.Logf("backup holds %d of %d documents (the load did not overlap the backup)", len(held), clients*perClient)
	}

	// The same answers as an index built from exactly the held documents.
	restoredB, err := server.OpenIndex(rst, server.IndexOptions{StorePostings: true})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := server.OpenIndex(store.NewMemory(), server.IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := fresh.Add(ctx, []api.Document{{ID: id, Text: texts[id]}}, false); err != nil {
			t.Fatal(err)
		}
	}
	var queries []api.Document
	for id, tx := range texts {
		queries = append(queries, api.Document{ID: "q-" + id, Text: tx})
	}
	got, err := restoredB.Query(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Query(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	for i := range queries {
		g, w := got[i].Matches, want[i].Matches
		if len(g) != len(w) {
			t.Fatalf("%s: restored %v, fresh %v", queries[i].ID, g, w)
		}
		for j := range g {
			if g[j].ID != w[j].ID || g[j].Similarity != w[j].Similarity {
				t.Fatalf("%s: restored %v, fresh %v", queries[i].ID, g, w)
			}
		}
	}
	t.Logf("backup under load: %d of %d documents, %d queries answered alike", len(held), clients*perClient, len(queries))
}

// A backup needs a token, an absolute new directory, and a store that
// can make one.
func TestBackupRefusals(t *testing.T) {
	ctx := context.Background()
	open := serve(t, openStore(t, "pebble", ""), server.Options{}, nil)
	if _, err := open.C.Backup(ctx, filepath.Join(t.TempDir(), "b")); !isStatus(err, 403) {
		t.Fatalf("backup without a server token: %v, want 403", err)
	}
	r := serve(t, openStore(t, "pebble", ""), server.Options{Token: "s"}, &client.Options{Token: "s"})
	for _, dir := range []string{"relative/b", t.TempDir(), filepath.Join(t.TempDir(), "no", "parent")} {
		if _, err := r.C.Backup(ctx, dir); !isStatus(err, 400) {
			t.Fatalf("backup into %q: %v, want 400", dir, err)
		}
	}
	rd := serve(t, openStore(t, "redis", ""), server.Options{Token: "s"}, &client.Options{Token: "s"})
	if _, err := rd.C.Backup(ctx, filepath.Join(t.TempDir(), "b")); !isStatus(err, 501) {
		t.Fatalf("backup of a Redis index: %v, want 501", err)
	}
}

func isStatus(err error, code int) bool {
	var e *client.Error
	return errors.As(err, &e) && e.StatusCode == code
}

// backupFault fails, once on, every write, sync and removal under
// prefix with err, as a full or failing backup disk does.
type backupFault struct {
	on     atomic.Bool
	prefix string
	err    syscall.Errno
	hits   atomic.Int64
}

func (f *backupFault) String() string { return fmt.Sprintf("backupFault(%v)", f.err) }

func (f *backupFault) MaybeError(op errorfs.Op) error {
	if !f.on.Load() || !strings.HasPrefix(op.Path, f.prefix) || op.Kind.ReadOrWrite() != errorfs.OpIsWrite {
		return nil
	}
	f.hits.Add(1)
	return &os.PathError{Op: "inject", Path: op.Path, Err: f.err}
}

// TestBackupFaults: POST /v1/admin/backup onto a backup disk that is full
// (ENOSPC) or failing (EIO) answers 507 or 500 with a one-line error
// naming the cause, leaves nothing at the backup's path, and the index
// serves on: it adds and answers as before, and a backup once the disk
// is freed restores to an index that passes the check and holds every
// document.
func TestBackupFaults(t *testing.T) {
	for _, c := range []struct {
		err  syscall.Errno
		code int
	}{{syscall.ENOSPC, 507}, {syscall.EIO, 500}} {
		t.Run(c.err.Error(), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "backup")
			fault := &backupFault{prefix: dir, err: c.err}
			st, err := store.OpenPebble(t.TempDir(), &store.PebbleOptions{FS: errorfs.Wrap(vfs.Default, fault), CacheBytes: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			r := serve(t, st, server.Options{Token: "secret"}, &client.Options{Token: "secret"})
			var docs []api.Document
			for i := range 40 {
				docs = append(docs, doc(fmt.Sprintf("d%02d", i), text(uint64(i), 100)))
			}
			if _, err := r.C.Add(ctx, docs[:20], false); err != nil {
				t.Fatal(err)
			}

			fault.on.Store(true)
			_, err = r.C.Backup(ctx, dir)
			var ce *client.Error
			if !errors.As(err, &ce) || ce.StatusCode != c.code || strings.Contains(ce.Message, "\n") || !strings.Contains(ce.Message, c.err.Error()) {
				t.Fatalf("backup onto a failing disk: %v, want %d with one line naming %q", err, c.code, c.err.Error())
			}
			t.Logf("%d injected: %v", fault.hits.Load(), err)
			if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a failed backup left %s (%v)", dir, err)
			}

			// The index serves on, the backup disk still failing.
			if _, err := r.C.Add(ctx, docs[20:], false); err != nil {
				t.Fatalf("add after a failed backup: %v", err)
			}
			res, err := r.C.Query(ctx, docs)
			if err != nil {
				t.Fatalf("query after a failed backup: %v", err)
			}
			for i, q := range res {
				if !slices.ContainsFunc(q.Matches, func(m api.Match) bool { return m.ID == docs[i].ID }) {
					t.Fatalf("%s not found after a failed backup: %+v", docs[i].ID, q.Matches)
				}
			}

			fault.on.Store(false)
			if _, err := r.C.Backup(ctx, dir); err != nil {
				t.Fatalf("backup once the disk is freed: %v", err)
			}
			restored := filepath.Join(t.TempDir(), "restored")
			if err := store.RestorePebble(dir, restored); err != nil {
				t.Fatal(err)
			}
			rst, err := store.OpenPebble(restored, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rst.Close()
			x, err := index.Open(ctx, rst, index.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if rep, err := x.Check(ctx, false); err != nil || !rep.OK() {
				t.Fatalf("check of the restored index: %+v %v", rep, err)
			}
			n := 0
			if err := rst.ScanDocs(ctx, func(uint64, []byte) error { n++; return nil }); err != nil || n != len(docs) {
				t.Fatalf("restored index holds %d documents (%v), want %d", n, err, len(docs))
			}
		})
	}
}
