package redistest_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/neardup/neardup/store/redis"
	"github.com/neardup/neardup/store/redis/redistest"
)

// A program (a benchmark, say) starting its own redis-server on a free
// loopback port. Tests call redistest.Start(t) or redistest.StartCluster(t,
// 3) instead, which stop the servers when the test ends.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.New("", dir, false)
	if err != nil {
		log.Fatal(err) // redis-server not found: install Debian's redis-server
	}
	defer srv.Kill()
	st, err := redis.Open(context.Background(), srv.URL(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	fmt.Println(st.Capabilities().Durable)
}
