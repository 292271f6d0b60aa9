package rdc

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// trees returns an old and a new version of a small tree with every kind
// of change: an edited file, a file moved and edited, modes, symbolic
// links, empty directories, a file that became a directory and the
// reverse, and files only the old tree has.
func trees(t testing.TB) (oldDir, newDir string) {
	r := rand.New(rand.NewPCG(1, 2))
	big := randText(r, 60<<10)
	moved := randText(r, 40<<10)
	edit := big[:20<<10] + "an edit in the middle" + big[20<<10+100:]
	oldDir, newDir = t.TempDir(), t.TempDir()
	writeTree(t, oldDir, spec{
		"a/big.txt":         big,
		"a/same.txt":        "same content\n",
		"old/place/m.txt":   moved,
		"gone.txt":          "only in the old tree",
		"gonedir/x/y.txt":   "deep and gone",
		"becomes_dir":       "a file now",
		"becomes_file/":     "",
		"becomes_file/f":    "inside",
		"mode.sh|0644":      "#!/bin/sh\necho hi\n",
		"link":              "@a/same.txt",
		"a/long/name/keep/": "",
	})
	writeTree(t, newDir, spec{
		"a/big.txt":          edit,
		"a/same.txt":         "same content\n",
		"new/place/m2.txt":   moved[:10<<10] + "inserted" + moved[10<<10:],
		"new/copy.txt":       "same content\n",
		"becomes_dir/":       "",
		"becomes_dir/inside": "x",
		"becomes_file":       "a file",
		"mode.sh|0755":       "#!/bin/sh\necho hi\n",
		"secret|0600":        "private",
		"link":               "@new/copy.txt",
		"dirlink":            "@a",
		"empty/dir/":         "",
		"ro/|0555":           "",
		"empty.txt":          "",
		"new/fresh.txt":      randText(r, 200<<10),
	})
	return oldDir, newDir
}

func TestPullTree(t *testing.T) {
	oldDir, newDir := trees(t)
	ts := serveDir(t, newDir, ServerOptions{})
	st, err := pullURL(t, ts.URL, oldDir, PullOptions{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
		t.Fatalf("pulled tree differs:\n%s\nwant\n%s", got, want)
	}
	noTemps(t, oldDir)
	if st.ChunksSamePath == 0 || st.ChunksOtherFile == 0 || st.ChunksFetched == 0 {
		t.Errorf("chunks reused %d (same path), %d (other file), fetched %d: want all > 0", st.ChunksSamePath, st.ChunksOtherFile, st.ChunksFetched)
	}
	// The edited and the moved file lend most of their bytes: what is
	// fetched is the fresh file and a few chunks.
	if st.BytesFetched > 200<<10+20<<10 {
		t.Errorf("fetched %d bytes, want under 20 KiB beyond the 200 KiB new file", st.BytesFetched)
	}
	if st.Deleted == 0 || st.BytesSent == 0 || st.BytesReceived == 0 || st.RoundTrips < 3 {
		t.Errorf("stats %+v", st)
	}
	// Pulled again: nothing to fetch.
	st, err = pullURL(t, ts.URL, oldDir, PullOptions{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.ChunksFetched != 0 || st.Written+st.Copied != 0 || st.Unchanged != st.Files || st.Deleted != 0 {
		t.Errorf("second pull did work: %+v", st)
	}
	if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
		t.Fatalf("second pull changed the tree")
	}
}

func TestPullKeepsExtraWithoutDelete(t *testing.T) {
	oldDir, newDir := trees(t)
	ts := serveDir(t, newDir, ServerOptions{})
	if _, err := pullURL(t, ts.URL, oldDir, PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(oldDir, "gonedir/x/y.txt")); err != nil {
		t.Errorf("without Delete an extra file was removed: %v", err)
	}
}

// A symbolic link that leaves the tree is refused (listed, ErrRefused),
// everything else is written, and nothing appears outside the tree, not
// even through a local link that points outside.
func TestPullRefusesEscapes(t *testing.T) {
	srcDir, dst, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, srcDir, spec{
		"ok.txt":       "fine",
		"up":           "@../../etc",
		"abs":          "@/etc/passwd",
		"sub/deep":     "@../../x",
		"sub/fine":     "@../ok.txt",
		"via/file.txt": "must land inside dst/via",
	})
	// dst/via is a link to a directory outside dst.
	if err := os.Symlink(outside, filepath.Join(dst, "via")); err != nil {
		t.Fatal(err)
	}
	ts := serveDir(t, srcDir, ServerOptions{})
	st, err := pullURL(t, ts.URL, dst, PullOptions{})
	if !errors.Is(err, ErrRefused) || len(st.Refused) != 3 {
		t.Fatalf("err %v, refused %q: want 3 refused links", err, st.Refused)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the tree: %v", ents)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "via/file.txt")); err != nil || string(b) != "must land inside dst/via" {
		t.Fatalf("via/file.txt: %q %v", b, err)
	}
	if fi, err := os.Lstat(filepath.Join(dst, "via")); err != nil || !fi.IsDir() {
		t.Fatalf("dst/via is not a real directory: %v", err)
	}
	if tg, _ := os.Readlink(filepath.Join(dst, "sub/fine")); tg != "../ok.txt" {
		t.Errorf("sub/fine -> %q", tg)
	}
}

// Names in a manifest cannot climb out of the tree: the decoder refuses
// them before anything is written.
func TestManifestRefusesTraversal(t *testing.T) {
	for _, name := range []string{"../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a/.", "", "a\x00b"} {
		m := &Manifest{Chunk: DefaultChunk.EnsureDefaults(), Entries: []Entry{{Kind: File, Path: name, Size: 0, Root: sumChunk(nil)}}}
		var b bytes.Buffer
		m.Encode(&b)
		if _, err := DecodeManifest(&b); err == nil {
			t.Errorf("manifest with %q accepted", name)
		}
	}
	for _, c := range []struct {
		name, target string
		inside       bool
	}{{"a", "b", true}, {"a/b", "../c", true}, {"a/b", "../../c", false}, {"a", "/x", false}, {"a", "..", false}, {"a/b/c", "../d/../../e", true}, {"a", "", false}} {
		if got := LinkInside(c.name, c.target); got != c.inside {
			t.Errorf("LinkInside(%q, %q) = %v", c.name, c.target, got)
		}
	}
}

// A flipped bit in a chunks reply is detected and the batch fetched again.
func TestPullBitFlip(t *testing.T) {
	oldDir, newDir := trees(t)
	ts := serveDir(t, newDir, ServerOptions{})
	var flipped atomic.Bool
	var total atomic.Int64
	const at = 20000 // past the manifest and node replies, inside chunks
	px := newProxy(t, strings.TrimPrefix(ts.URL, "http://"), func(conn int, off int64, b []byte) error {
		end := total.Add(int64(len(b)))
		if start := end - int64(len(b)); start <= at && at < end && !flipped.Load() {
			b[at-start] ^= 0x10
			flipped.Store(true)
		}
		return nil
	})
	st, err := pullURL(t, px.URL(), oldDir, PullOptions{Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if !flipped.Load() || st.Retries+st.Refetched == 0 {
		t.Fatalf("flipped %v, retries %d, refetched %d: want the corruption seen", flipped.Load(), st.Retries, st.Refetched)
	}
	if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
		t.Fatalf("tree differs after a flipped bit")
	}
}

// The server dies in the middle of a reply: the pull fails with an error,
// leaves every file either old or new and verified, and a second pull
// completes.
func TestPullServerKilled(t *testing.T) {
	oldDir, newDir := trees(t)
	ts := serveDir(t, newDir, ServerOptions{})
	var total atomic.Int64
	px := newProxy(t, strings.TrimPrefix(ts.URL, "http://"), func(conn int, off int64, b []byte) error {
		if total.Add(int64(len(b))) > 20000 {
			return errCut
		}
		return nil
	})
	before := listTree(t, oldDir)
	_, err := pullURL(t, px.URL(), oldDir, PullOptions{Delete: true})
	if err == nil {
		t.Fatal("pull through a dying server succeeded")
	}
	noTemps(t, oldDir)
	_ = before
	if _, err := pullURL(t, ts.URL, oldDir, PullOptions{Delete: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
		t.Fatalf("rerun did not complete the tree")
	}
}

// A full disk ends the pull with one error and no half-written file in
// place (a tmpfs of 64 KiB; needs root).
func TestPullDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	r := rand.New(rand.NewPCG(3, 4))
	src := t.TempDir()
	s := spec{}
	for i := 0; i < 12; i++ {
		s[filepath.Join("d", string(rune('a'+i))+".txt")] = randText(r, 16<<10)
	}
	writeTree(t, src, s)
	ts := serveDir(t, src, ServerOptions{})
	_, err := pullURL(t, ts.URL, mnt, PullOptions{})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v, want ENOSPC", err)
	}
	noTemps(t, mnt)
	ents, _ := os.ReadDir(filepath.Join(mnt, "d"))
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(mnt, "d", e.Name()))
		if string(b) != s[filepath.Join("d", e.Name())] {
			t.Errorf("%s in place with %d bytes, not the served file", e.Name(), len(b))
		}
	}
}

func TestServerSecurity(t *testing.T) {
	s, err := NewServer(&Tree{Dir: t.TempDir()}, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, a := range []string{"0.0.0.0:1", ":1", "10.1.2.3:1"} {
		if err := s.CheckAddr(a); !errors.Is(err, ErrInsecure) {
			t.Errorf("%s without a token: %v", a, err)
		}
	}
	for _, a := range []string{"127.0.0.1:1", "[::1]:1", "localhost:1"} {
		if err := s.CheckAddr(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	s2, _ := NewServer(&Tree{Dir: t.TempDir()}, ServerOptions{Token: "t"})
	defer s2.Close()
	if err := s2.CheckAddr("0.0.0.0:1"); !errors.Is(err, ErrInsecure) {
		t.Errorf("token without TLS: %v", err)
	}
	dir := t.TempDir()
	writeTree(t, dir, spec{"f": "x"})
	ts := serveDir(t, dir, ServerOptions{Token: "right"})
	for _, tok := range []string{"", "wrong"} {
		c, _ := NewClient(ts.URL, ClientOptions{Token: tok})
		if _, err := c.Manifest(context.Background()); !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "401") {
			t.Errorf("token %q: %v", tok, err)
		}
	}
	c, _ := NewClient(ts.URL, ClientOptions{Token: "right"})
	if _, err := c.Manifest(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Bounded requests: too many chunks, a body too large, nonsense.
	if _, err := c.Chunks(context.Background(), &ChunksReq{Ranges: []RangeReq{{File: 0, Lo: 0, Hi: MaxRangeChunks + 1}}}, nil); err == nil {
		t.Error("oversized chunk request accepted")
	}
	if _, err := c.Nodes(context.Background(), []NodeReq{{File: 99}}); err == nil {
		t.Error("request for a missing entry accepted")
	}
	big := bytes.Repeat([]byte{0xff}, maxReqBytes+10)
	req, _ := http.NewRequest("POST", ts.URL+"/v1/nodes", bytes.NewReader(big))
	req.Header.Set("Authorization", "Bearer right")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("oversized body: %s", resp.Status)
		}
	}
}

// A served file changed after the scan is refused (409), never sent as
// the scanned one.
func TestServerRefusesChangedFile(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, spec{"f.txt": randText(rand.New(rand.NewPCG(5, 6)), 8<<10)})
	ts := serveDir(t, src, ServerOptions{})
	os.WriteFile(filepath.Join(src, "f.txt"), []byte(randText(rand.New(rand.NewPCG(7, 8)), 8<<10)), 0o644)
	_, err := pullURL(t, ts.URL, dst, PullOptions{})
	if err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("err %v, want a 409", err)
	}
	noTemps(t, dst)
	if _, err := os.Stat(filepath.Join(dst, "f.txt")); err == nil {
		t.Error("a changed file was written")
	}
}

// Files whose chunks come in many small batches, answered out of order by
// several fetchers, are written piece by piece as the chunks arrive.
func TestPullSmallBatches(t *testing.T) {
	oldDir, newDir := trees(t)
	ts := serveDir(t, newDir, ServerOptions{})
	st, err := pullURL(t, ts.URL, oldDir, PullOptions{Delete: true, BatchBytes: 2 << 10, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if st.RoundTrips < 50 {
		t.Errorf("%d round trips: want the chunks in many batches", st.RoundTrips)
	}
	if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
		t.Fatalf("pulled tree differs")
	}
	noTemps(t, oldDir)
}
