package server_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
	"github.com/neardup/neardup/store"
)

// Serve an index kept in a Pebble directory on a loopback port, add two
// documents through the Go client, and ask about a third.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "neardup-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenPebble(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	b, err := server.OpenIndex(st, server.IndexOptions{Threshold: 0.8})
	if err != nil {
		log.Fatal(err)
	}
	s, err := server.New(b, server.Options{})
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, l) }()

	c, _ := client.New("http://"+l.Addr().String(), nil)
	doc := join(text(1, 300))
	res, err := c.Add(ctx, []api.Document{{ID: "page-1", Text: doc}, {ID: "page-2", Text: join(text(2, 300))}}, false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("added", len(res), "new:", len(res[0].Matches) == 0 && len(res[1].Matches) == 0)
	// The same page again under another id: seen before, so not added.
	res, _ = c.Add(ctx, []api.Document{{ID: "page-3", Text: doc}}, true)
	fmt.Println("page-3 added:", res[0].Added, "duplicate of", res[0].Matches[0].ID, "similarity", res[0].Matches[0].Similarity)

	stop()
	fmt.Println("shut down:", <-done)
	// Output:
	// added 2 new: true
	// page-3 added: false duplicate of page-1 similarity 1
	// shut down: <nil>
}

// Reopen a served index and fill its collapse table from the store before
// (or while) serving, as neardup serve does at start.
func ExampleIndexBackend_LoadCollapse() {
	st := store.NewMemory()
	defer st.Close()
	b, err := server.OpenIndex(st, server.IndexOptions{Threshold: 0.8})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	text := "the quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun all day long"
	if _, err := b.Add(ctx, []api.Document{{ID: "a", Text: text}, {ID: "b", Text: text + " again"}}, false); err != nil {
		log.Fatal(err)
	}
	reopened, err := server.OpenIndex(st, server.IndexOptions{})
	if err != nil {
		log.Fatal(err)
	}
	n, err := reopened.LoadCollapse(ctx)
	fmt.Println(n, err)
	res, err := reopened.Collapse(ctx, []string{"a", "b"})
	fmt.Println(res.Kept, len(res.Collapsed), err)
	// Output:
	// 2 <nil>
	// [a] 1 <nil>
}
