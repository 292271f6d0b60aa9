package rdc

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dictTree serves one file: a text and then the same text with a few
// edits, so that the second half's chunks are coded well against the
// first half's bytes.
func dictTree(t *testing.T) (*testServer, []byte, *Tree) {
	r := rand.New(rand.NewPCG(5, 6))
	base := randText(r, 32<<10)
	edited := strings.ReplaceAll(base, "return", "yield")
	data := []byte(base + edited)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := serveDir(t, dir, ServerOptions{})
	tree, err := Scan(context.Background(), dir, DefaultChunk)
	if err != nil {
		t.Fatal(err)
	}
	return ts, data, tree
}

// A chunks reply compressed against a dictionary both sides hold decodes
// to the same chunks and costs fewer bytes than one without.
func TestChunksDict(t *testing.T) {
	ts, data, tree := dictTree(t)
	sig := tree.Sigs[0]
	half := 0
	for half < len(sig.Chunks) && sig.Chunks[half].Offset < int64(len(data)/2) {
		half++
	}
	n := len(sig.Chunks)
	ask := []RangeReq{{File: 0, Lo: half, Hi: n}}
	dict := data[:sig.Chunks[half].Offset]
	fetch := func(q *ChunksReq, dict []byte) (int64, []byte) {
		c, _ := NewClient(ts.URL, ClientOptions{})
		defer c.CloseIdle()
		body, err := c.Chunks(context.Background(), q, dict)
		if err != nil {
			t.Fatal(err)
		}
		cr := NewChunkReader(bytes.NewReader(body), DefaultChunk.EnsureDefaults().Max)
		var got []byte
		for {
			d, err := cr.Next(nil)
			if err != nil {
				break
			}
			got = append(got, d...)
		}
		_, recv, _ := c.Counts()
		return recv, got
	}
	plain, got := fetch(&ChunksReq{Ranges: ask}, nil)
	if !bytes.Equal(got, data[sig.Chunks[half].Offset:]) {
		t.Fatal("plain reply differs from the file")
	}
	withDict, got := fetch(&ChunksReq{Ranges: ask, Dict: []RangeReq{{File: 0, Lo: 0, Hi: half}}, DictSum: DictSumOf(dict)}, dict)
	if !bytes.Equal(got, data[sig.Chunks[half].Offset:]) {
		t.Fatal("reply with a dictionary differs from the file")
	}
	t.Logf("%d chunks of %d bytes: %d bytes received without a dictionary, %d with", n-half, len(data)-len(dict), plain, withDict)
	if withDict*2 > plain {
		t.Errorf("with a dictionary %d bytes, without %d: want less than half", withDict, plain)
	}
}

// A dictionary the server does not hold alike, or that names chunks that
// do not exist or too many bytes, is refused with a one-line error; a
// truncated request is refused too.
func TestChunksDictRefused(t *testing.T) {
	ts, data, tree := dictTree(t)
	sig := tree.Sigs[0]
	n := len(sig.Chunks)
	c, _ := NewClient(ts.URL, ClientOptions{})
	defer c.CloseIdle()
	ctx := context.Background()
	dict := data[:sig.Chunks[1].Offset]
	q := &ChunksReq{Ranges: []RangeReq{{File: 0, Lo: 1, Hi: 2}}, Dict: []RangeReq{{File: 0, Lo: 0, Hi: 1}}, DictSum: DictSumOf(dict) ^ 1}
	_, err := c.Chunks(ctx, q, dict)
	if !errors.Is(err, ErrDict) || strings.Contains(err.Error(), "\n") {
		t.Errorf("wrong checksum: %v, want one line wrapping ErrDict", err)
	}
	for _, d := range [][]RangeReq{{{File: 0, Lo: n, Hi: n + 1}}, {{File: 7, Lo: 0, Hi: 1}}} {
		q := &ChunksReq{Ranges: []RangeReq{{File: 0, Lo: 0, Hi: 1}}, Dict: d, DictSum: 1}
		_, err := c.Chunks(ctx, q, []byte("x"))
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "400") || strings.Contains(err.Error(), "\n") {
			t.Errorf("dictionary %+v: %v, want a one-line 400", d, err)
		}
	}
	var body bytes.Buffer
	EncodeChunksReq(&body, &ChunksReq{Ranges: []RangeReq{{File: 0, Lo: 1, Hi: 2}}, Dict: []RangeReq{{File: 0, Lo: 0, Hi: 1}}, DictSum: 5})
	for cut := 1; cut < body.Len(); cut++ {
		resp, err := http.Post(ts.URL+"/v1/chunks", "application/octet-stream", bytes.NewReader(body.Bytes()[:cut]))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("request cut to %d of %d bytes: %s, want 400", cut, body.Len(), resp.Status)
		}
	}
}

// A receiver whose local bytes differ from what it matched (a source
// changed after the scan) has its dictionary refused; the batch is
// fetched again without one and the tree still comes out identical, with
// no temporary file left behind.
func TestPullDictRefused(t *testing.T) {
	oldDir, newDir := trees(t)
	ts := serveDir(t, newDir, ServerOptions{})
	tampered := 0
	st, err := pullURL(t, ts.URL, oldDir, PullOptions{Delete: true, Workers: 1, tamperDict: func(d []byte) {
		if len(d) > 0 {
			d[len(d)/2] ^= 1
			tampered++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if tampered == 0 || st.DictRefused != tampered {
		t.Fatalf("tampered %d dictionaries, %d refused", tampered, st.DictRefused)
	}
	if st.DictBytes != 0 {
		t.Errorf("%d dictionary bytes used after every dictionary was refused", st.DictBytes)
	}
	noTemps(t, oldDir)
	if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
		t.Fatalf("tree differs after refused dictionaries:\n%s\nwant\n%s", got, want)
	}
}

// With dictionaries a pull receives fewer bytes than without, and the
// same tree.
func TestPullDictSaves(t *testing.T) {
	var recv [2]int64
	for i, db := range []int64{-1, 0} {
		oldDir, newDir := trees(t)
		ts := serveDir(t, newDir, ServerOptions{})
		st, err := pullURL(t, ts.URL, oldDir, PullOptions{Delete: true, DictBytes: db})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := listTree(t, oldDir), listTree(t, newDir); got != want {
			t.Fatalf("DictBytes %d: tree differs", db)
		}
		if (st.DictBytes > 0) != (db == 0) {
			t.Errorf("DictBytes option %d: %d dictionary bytes used", db, st.DictBytes)
		}
		recv[i] = st.BytesReceived
	}
	t.Logf("received %d bytes without dictionaries, %d with", recv[0], recv[1])
	if recv[1] >= recv[0] {
		t.Errorf("received %d bytes with dictionaries, %d without", recv[1], recv[0])
	}
}
