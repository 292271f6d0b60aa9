package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() })
}

func openPebble(t testing.TB, dir string) *store.Pebble {
	t.Helper()
	s, err := store.OpenPebble(dir, &store.PebbleOptions{CacheBytes: 8 << 20, MemTableBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPebbleConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openPebble(t, t.TempDir()) })
}

// TestPebbleReopen checks that committed data survives Close and reopen,
// including after a compaction, and that the format is checked.
func TestPebbleReopen(t *testing.T) {
	dir := t.TempDir()
	s := openPebble(t, dir)
	b := s.NewBatch()
	for i := range uint64(1000) {
		b.AddPosting(i%10, i)
		b.PutDoc(i, []byte(strconv.FormatUint(i, 10)))
	}
	b.PutMeta("lsh", []byte("k=84 r=14 b=6 m=2"))
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.RemovePosting(3, 13)
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openPebble(t, dir)
	defer s.Close()
	ids, _ := s.Postings(context.Background(), 3, nil)
	if len(ids) != 99 || slices.Contains(ids, 13) || !slices.IsSorted(ids) {
		t.Errorf("postings 3 after reopen: %d ids", len(ids))
	}
	if v, ok, _ := s.Meta(context.Background(), "lsh", nil); !ok || string(v) != "k=84 r=14 b=6 m=2" {
		t.Errorf("meta after reopen: %q", v)
	}
	n := 0
	s.ScanDocs(context.Background(), func(uint64, []byte) error { n++; return nil })
	if n != 1000 {
		t.Errorf("%d docs after reopen", n)
	}
}

func TestPebbleFormatMismatch(t *testing.T) {
	dir := t.TempDir()
	s := openPebble(t, dir)
	b := s.NewBatch()
	b.PutMeta("neardup.store.format", []byte("pebble-999"))
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := store.OpenPebble(dir, nil); !errors.Is(err, store.ErrFormat) {
		t.Errorf("open with another format: %v", err)
	}
}

// TestPebbleRefusesFormat1 checks that a store of the previous format
// (Pebble's default comparer, postings as merge operands) is refused with
// ErrFormat rather than misread.
func TestPebbleRefusesFormat1(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("mneardup.store.format"), []byte("pebble-1"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenPebble(dir, nil); !errors.Is(err, store.ErrFormat) {
		t.Errorf("open a format-1 store: %v, want ErrFormat", err)
	}
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)           {}
func (quietLogger) Errorf(string, ...any)          {}
func (quietLogger) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

// TestPebbleLookupsSeeCommits interleaves lookups (which reuse iterators)
// with commits, removals and a compaction: every lookup must see exactly
// the postings committed before it.
func TestPebbleLookupsSeeCommits(t *testing.T) {
	s := openPebble(t, t.TempDir())
	defer s.Close()
	b := s.NewBatch()
	defer b.Close()
	var want, ids []uint64
	for i := range uint64(300) {
		ids, _ = s.Postings(context.Background(), 7, ids[:0])
		if !slices.Equal(ids, want) {
			t.Fatalf("step %d: %v, want %v", i, ids, want)
		}
		if i%3 == 2 {
			b.RemovePosting(7, want[0])
			want = want[1:]
		} else {
			b.AddPosting(7, i)
			want = append(want, i)
		}
		if err := b.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		if i == 150 {
			if err := s.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPebbleCloseDuringLookups closes the store while goroutines look up
// postings: Close must wait for lookups in flight (Pebble reports
// iterators left open as an error), and later lookups fail with ErrClosed.
func TestPebbleCloseDuringLookups(t *testing.T) {
	s := openPebble(t, t.TempDir())
	b := s.NewBatch()
	for i := range uint64(100) {
		b.AddPosting(i%10, i)
	}
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Close()
	var wg sync.WaitGroup
	started := make(chan bool, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []uint64
			for i := 0; ; i++ {
				var err error
				ids, err = s.Postings(context.Background(), uint64(w+i)%10, ids[:0])
				if errors.Is(err, store.ErrClosed) {
					return
				}
				if err != nil || len(ids) != 10 {
					t.Errorf("lookup: %d ids, %v", len(ids), err)
					return
				}
				if i == 100 {
					started <- true
				}
			}
		}()
	}
	for range 4 {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close during lookups: %v", err)
	}
	wg.Wait()
}

const crashEnv = "NEARDUP_STORE_CRASH_CHILD"

// TestCrashChild is the child of TestPebbleCrash: it commits batches
// forever, every seventh as a bulk, printing "ack N" after batch N's
// Commit returned.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("only run as the child of TestPebbleCrash")
	}
	s, err := store.OpenPebble(dir, &store.PebbleOptions{CacheBytes: 8 << 20, MemTableBytes: 1 << 20})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	start := 0
	if v, ok, _ := s.Meta(context.Background(), "next", nil); ok {
		start, _ = strconv.Atoi(string(v))
	}
	batch, bulk := s.NewBatch(), s.NewBulk()
	for n := start; ; n++ {
		b := batch
		if n%7 == 3 { // some batches go in as bulks (ingested tables)
			b = bulk
		}
		writeCrashBatch(b, n)
		b.PutMeta("next", []byte(strconv.Itoa(n+1)))
		if err := b.Commit(context.Background()); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("ack %d\n", n)
	}
}

// writeCrashBatch writes batch n: 200 postings under keys derived from n,
// and a document record.
func writeCrashBatch(b store.Batch, n int) {
	for j := range 200 {
		b.AddPosting(rng.Hash(uint64(n), uint64(j%20)), uint64(n)<<16|uint64(j))
	}
	b.PutDoc(uint64(n), []byte(fmt.Sprintf("batch %d", n)))
}

func checkCrashBatch(t *testing.T, s store.Store, n int) {
	t.Helper()
	for j := range 20 {
		ids, err := s.Postings(context.Background(), rng.Hash(uint64(n), uint64(j)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 10 {
			t.Fatalf("acknowledged batch %d lost postings: key %d has %d ids, want 10", n, j, len(ids))
		}
	}
	if v, ok, err := s.Doc(context.Background(), uint64(n), nil); err != nil || !ok || string(v) != fmt.Sprintf("batch %d", n) {
		t.Fatalf("acknowledged batch %d lost its document: %q %v %v", n, v, ok, err)
	}
}

// TestPebbleCrash kills a writing child process with SIGKILL twelve times,
// at random points (after a random number of acknowledged batches, or
// after a random delay that may fall while it opens the store and replays
// its log), and checks after each that the store opens cleanly and holds
// every batch the child acknowledged, and that no batch is half there
// (atomicity: a batch's document exists iff all its postings do). While
// the first child runs, a second opener is refused with the child's pid.
func TestPebbleCrash(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("child")
	}
	const rounds = 12
	dir := filepath.Join(t.TempDir(), "db")
	st := rng.New(rng.Key(12, 5))
	acked := -1
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		byTime := round%3 == 2
		kills := 1 + int(st.Intn(150))
		if byTime {
			delay := time.Duration(st.Intn(60)) * time.Millisecond
			time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
		}
		sc := bufio.NewScanner(out)
		seen := 0
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "error") {
				t.Fatalf("child: %s", line)
			}
			if n, ok := strings.CutPrefix(line, "ack "); ok {
				acked, _ = strconv.Atoi(n)
				seen++
				if round == 0 && seen == 1 {
					checkInUse(t, dir, cmd.Process.Pid)
				}
				if !byTime && seen == kills {
					cmd.Process.Signal(syscall.SIGKILL) // mid-stream: more commits may be in flight
					break
				}
			}
		}
		for sc.Scan() { // drain acks printed before the kill landed
			if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				acked, _ = strconv.Atoi(n)
			}
		}
		cmd.Wait()
		if !byTime && seen < kills {
			t.Fatalf("round %d: child stopped after %d acks", round, seen)
		}
		s, err := store.OpenPebble(dir, nil)
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		for n := 0; n <= acked; n++ {
			checkCrashBatch(t, s, n)
		}
		// An unacknowledged batch may or may not be there, but never half.
		if _, ok, _ := s.Doc(context.Background(), uint64(acked+1), nil); ok {
			checkCrashBatch(t, s, acked+1)
		}
		s.Close()
		how := fmt.Sprintf("after %d acks", kills)
		if byTime {
			how = "after a delay"
		}
		t.Logf("round %d: killed %s, at ack %d; all acknowledged batches present", round, how, acked)
	}
}

// checkInUse checks that a store held by the process pid is refused at
// once, naming that pid.
func checkInUse(t *testing.T, dir string, pid int) {
	t.Helper()
	start := time.Now()
	_, err := store.OpenPebble(dir, nil)
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("in use by another neardup process (pid %d)", pid)) {
		t.Errorf("open of a store held by pid %d: %v", pid, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing a store in use took %v", d)
	}
}
