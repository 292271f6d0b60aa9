package rdc_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/chunk/rdc"
)

// Serve a tree on loopback and pull it into another directory.
func Example() {
	src, _ := os.MkdirTemp("", "rdc-src")
	dst, _ := os.MkdirTemp("", "rdc-dst")
	defer os.RemoveAll(src)
	defer os.RemoveAll(dst)
	os.MkdirAll(filepath.Join(src, "docs"), 0o755)
	os.WriteFile(filepath.Join(src, "docs", "a.txt"), []byte("hello, world\n"), 0o644)
	os.Symlink("docs/a.txt", filepath.Join(src, "latest"))

	ctx, cancel := context.WithCancel(context.Background())
	tree, err := rdc.Scan(ctx, src, rdc.DefaultChunk)
	if err != nil {
		panic(err)
	}
	srv, _ := rdc.NewServer(tree, rdc.ServerOptions{})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()

	c, _ := rdc.NewClient("http://"+l.Addr().String(), rdc.ClientOptions{})
	st, err := rdc.Pull(ctx, c, dst, rdc.PullOptions{Delete: true})
	if err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(filepath.Join(dst, "latest"))
	fmt.Printf("%d file, %d directory, %d link; %q\n", st.Files, st.Dirs, st.Symlinks, b)
	c.CloseIdle()
	cancel()
	<-done
	srv.Close()
	// Output: 1 file, 1 directory, 1 link; "hello, world\n"
}

// Ask for chunks 3 and 4 of manifest entry 7, to be compressed against
// chunks 0 to 2 of the same file, which the receiver already holds.
func ExampleEncodeChunksReq() {
	held := []byte("the bytes of chunks 0 to 2, as the receiver rebuilt them")
	q := &rdc.ChunksReq{
		Ranges:  []rdc.RangeReq{{File: 7, Lo: 3, Hi: 5}},
		Dict:    []rdc.RangeReq{{File: 7, Lo: 0, Hi: 3}},
		DictSum: rdc.DictSumOf(held),
	}
	var body bytes.Buffer
	if err := rdc.EncodeChunksReq(&body, q); err != nil {
		panic(err)
	}
	back, err := rdc.DecodeChunksReq(&body)
	if err != nil {
		panic(err)
	}
	fmt.Println(back.Ranges, back.Dict, back.DictSum == q.DictSum)
	// Output: [{7 3 5}] [{7 0 3}] true
}
