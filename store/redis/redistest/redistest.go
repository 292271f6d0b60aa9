// Package redistest provides real redis-server processes for tests: a
// standalone server or a Redis Cluster of several masters, each listening
// on a free 127.0.0.1 port with its data in a temporary directory, started
// for one test and killed when it ends.
//
// It runs the redis-server binary found on PATH (Debian's redis-server
// package); it does not use a system service and never listens beyond
// loopback. Servers run with "appendonly yes" and "appendfsync always", so
// a test can kill -9 one and restart it on the same directory to check that
// acknowledged writes survive. It is not a mock: when redis-server is
// missing, tests fail (or skip under -short) rather than pretend.
package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// NotFound is the message of a test that cannot find redis-server.
const NotFound = "redis-server not found: install Debian's redis-server (scripts/test.sh does)"

// Binary returns the path of redis-server. When it is missing the test
// fails with NotFound, or is skipped under -short.
func Binary(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		if testing.Short() {
			t.Skip(NotFound)
		}
		t.Fatal(NotFound)
	}
	return p
}

// Server is one redis-server process. Its methods are not safe for
// concurrent use.
type Server struct {
	// Addr is host:port on 127.0.0.1.
	Addr string
	// Dir holds the server's data (AOF, cluster config) and its log.
	Dir string

	bin     string
	cluster bool
	cmd     *exec.Cmd
	done    chan struct{}
}

// Start starts a standalone redis-server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New(Binary(t), t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// New starts redis-server (the binary at bin, "" for the one on PATH) on a
// free 127.0.0.1 port with its data in dir, as a cluster node when
// cluster is set (see FormCluster). The caller must Kill it. Tests use
// Start and StartCluster instead; New serves programs such as benchmarks.
func New(bin, dir string, cluster bool) (*Server, error) {
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			return nil, errors.New(NotFound)
		}
	}
	port, err := freePort(cluster)
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, Dir: dir, cluster: cluster, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// freePort returns a port free on 127.0.0.1; for a cluster node the bus
// port (port + 10000) must be free too.
func freePort(cluster bool) (int, error) {
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !cluster {
			l.Close()
			return port, nil
		}
		if port+10000 < 65536 {
			if l2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000))); err == nil {
				l2.Close()
				l.Close()
				return port, nil
			}
		}
		l.Close()
	}
	return 0, errors.New("redistest: no free port pair for a cluster node")
}

// URL returns the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Client returns a go-redis client of the server, closed when t ends.
func (s *Server) Client(t testing.TB) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

func (s *Server) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	args := []string{
		"--bind", "127.0.0.1",
		"--port", port,
		"--dir", s.Dir,
		"--daemonize", "no",
		"--save", "",
		"--appendonly", "yes",
		"--appendfsync", "always",
		"--logfile", "redis.log",
		"--protected-mode", "yes",
	}
	if s.cluster {
		args = append(args,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "5000",
			"--cluster-require-full-coverage", "yes")
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("redistest: redis-server on %s exited: %s%s", s.Addr, out.String(), s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("redistest: redis-server on %s not ready after 15s: %v%s", s.Addr, err, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "\nlog:\n" + strings.Join(lines, "\n")
}

// Kill stops the server with SIGKILL (no shutdown save, as in a crash) and
// waits for it to exit. Killing a stopped server does nothing.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts a killed server again on the same port and directory; it
// reloads its append-only file.
func (s *Server) Restart() error {
	s.Kill()
	return s.start()
}

// Cluster is a Redis Cluster of masters without replicas, every slot
// assigned.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts n masters (at least 1) for t, splits the 16,384
// slots between them (CLUSTER ADDSLOTSRANGE), joins them (CLUSTER MEET),
// waits until every node reports the cluster ok, and stops them when t
// ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	bin := Binary(t)
	var nodes []*Server
	for range n {
		s, err := New(bin, t.TempDir(), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Kill)
		nodes = append(nodes, s)
	}
	c, err := FormCluster(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FormCluster makes a cluster of nodes started with New(..., true): it
// splits the slots between them, joins them and waits until every node
// reports the cluster ok.
func FormCluster(nodes []*Server) (*Cluster, error) {
	c := &Cluster{Nodes: nodes}
	return c, c.form()
}

func (c *Cluster) form() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients := make([]*goredis.Client, len(c.Nodes))
	for i, s := range c.Nodes {
		clients[i] = goredis.NewClient(&goredis.Options{Addr: s.Addr})
		defer clients[i].Close()
	}
	const slots = 16384
	n := len(c.Nodes)
	for i, cl := range clients {
		lo, hi := i*slots/n, (i+1)*slots/n-1
		if err := cl.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			return fmt.Errorf("redistest: CLUSTER ADDSLOTSRANGE %d %d on %s: %w", lo, hi, c.Nodes[i].Addr, err)
		}
		if err := cl.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("redistest: CLUSTER SET-CONFIG-EPOCH on %s: %w", c.Nodes[i].Addr, err)
		}
	}
	for _, s := range c.Nodes[1:] {
		host, port, _ := net.SplitHostPort(s.Addr)
		if err := clients[0].ClusterMeet(ctx, host, port).Err(); err != nil {
			return fmt.Errorf("redistest: CLUSTER MEET %s: %w", s.Addr, err)
		}
	}
	return c.wait(ctx, clients)
}

// wait polls until every node reports cluster_state:ok and knows every
// node and every slot.
func (c *Cluster) wait(ctx context.Context, clients []*goredis.Client) error {
	want := []string{
		"cluster_state:ok",
		"cluster_slots_assigned:16384",
		fmt.Sprintf("cluster_known_nodes:%d", len(clients)),
	}
	for {
		ready := true
		var last string
		for _, cl := range clients {
			info, err := cl.ClusterInfo(ctx).Result()
			if err != nil {
				ready, last = false, err.Error()
				break
			}
			for _, w := range want {
				if !strings.Contains(info, w) {
					ready, last = false, info
				}
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: cluster not ready: %s", last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL returns the cluster's redis+cluster:// URL naming every node.
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// Kill kills every node with SIGKILL.
func (c *Cluster) Kill() {
	for _, s := range c.Nodes {
		s.Kill()
	}
}

// Restart restarts every node (after Kill) and waits for the cluster to be
// ok again; the nodes reload their slots from nodes.conf and their data
// from the append-only files.
func (c *Cluster) Restart() error {
	for _, s := range c.Nodes {
		if err := s.Restart(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients := make([]*goredis.Client, len(c.Nodes))
	for i, s := range c.Nodes {
		clients[i] = goredis.NewClient(&goredis.Options{Addr: s.Addr})
		defer clients[i].Close()
	}
	return c.wait(ctx, clients)
}
