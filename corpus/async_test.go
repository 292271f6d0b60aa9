package corpus

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAsyncDecompression: the decompressing goroutine ends when the
// Reader closes a file early, and does not hold up Close on standard input
// that blocks; many small compressed files reuse its blocks.
func TestAsyncDecompression(t *testing.T) {
	var b strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&b, `{"id":"%d","text":"line %d of a compressed corpus"}`+"\n", i, i)
	}
	data := []byte(b.String())
	dir := t.TempDir()
	gz := writeFile(t, dir, "big.jsonl.gz", gzipBytes(t, data))
	zs := writeFile(t, dir, "big.jsonl.zst", zstdBytes(t, data))

	base := runtime.NumGoroutine()
	for _, p := range []string{gz, zs} {
		r, err := Open([]string{p}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10 && r.Next(); i++ {
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond)
	if n := runtime.NumGoroutine(); n > base {
		t.Errorf("%d goroutines after closing, %d before", n, base)
	}

	// Standard input that stops sending mid-stream: Close returns.
	pr, pw := io.Pipe()
	compressed := gzipBytes(t, data)
	go pw.Write(compressed[:len(compressed)/2]) // and then nothing
	r, err := Open([]string{"-"}, Options{Stdin: pr})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatal("no document from standard input")
	}
	closed := make(chan error)
	go func() { closed <- r.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs on a blocked standard input")
	}
	pw.Close()

	// Many small gzipped files: one set of blocks for all of them.
	var paths []string
	for i := range 200 {
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("small/%03d.txt.gz", i), gzipBytes(t, []byte(fmt.Sprintf("small file %d", i)))))
	}
	var res *result
	alloc := allocDuring(func() { res = readAll(t, paths, Options{}) })
	if len(res.docs) != 200 || !bytes.Equal(res.docs[7].Body, []byte("small file 7")) {
		t.Fatalf("%d docs", len(res.docs))
	}
	if alloc > 50<<20 {
		t.Errorf("200 small files allocated %d MiB: blocks not reused", alloc>>20)
	}
	t.Logf("200 small gzipped files: TotalAlloc %d KiB", alloc>>10)
}
