package redis_test

import (
	"context"
	"fmt"
	"log"

	"github.com/neardup/neardup/store/redis"
)

// Open an index's store on a single Redis (durable when the server runs
// with appendonly yes and appendfsync always), or on a Redis Cluster with
// redis+cluster://host1:port,host2:port,... (a prefix with a hash tag such
// as "{news}" keeps batches atomic on a cluster).
func ExampleOpen() {
	ctx := context.Background()
	s, err := redis.Open(ctx, "redis://127.0.0.1:6379/0?prefix=news", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	b := s.NewBatch()
	defer b.Close()
	b.AddPosting(0xfeed, 42)
	b.PutDoc(42, []byte("record"))
	if err := b.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	ids, _ := s.Postings(ctx, 0xfeed, nil)
	fmt.Println(ids, s.Capabilities().Shared)
}
