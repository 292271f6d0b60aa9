package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/neardup/neardup/server/api"
	"github.com/neardup/neardup/server/client"
)

// A crawler's check before storing a page: add it only if nothing close
// is indexed, in batches, retrying while the server is busy. (Needs a
// server: neardup serve --store DIR.)
func ExampleClient_Add() {
	c, err := client.New("http://127.0.0.1:8080", &client.Options{Token: "secret", BatchSize: 500, MaxRetries: 6, MaxBackoff: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	pages := []api.Document{{ID: "https://example.com/a", Text: "…"}}
	res, err := c.Add(context.Background(), pages, true)
	var se *client.Error
	if errors.As(err, &se) {
		log.Fatalf("server refused: %d %s (field %s)", se.StatusCode, se.Message, se.Field)
	}
	for _, r := range res {
		if !r.Added {
			fmt.Println(r.ID, "is a near-duplicate of", r.Matches[0].ID)
		}
	}
}

// Fetchers on many goroutines each ask about their own page; the batcher
// sends them to the server in requests of up to BatchSize pages.
func ExampleBatcher() {
	c, err := client.New("http://127.0.0.1:8080", &client.Options{BatchSize: 200})
	if err != nil {
		log.Fatal(err)
	}
	b := c.NewBatcher(true, 20*time.Millisecond)
	defer b.Close()
	pages := make(chan api.Document)
	for range 32 {
		go func() {
			for p := range pages {
				r, err := b.Add(context.Background(), p)
				if err == nil && !r.Added {
					fmt.Println(p.ID, "seen before as", r.Matches[0].ID)
				}
			}
		}()
	}
	close(pages)
}
