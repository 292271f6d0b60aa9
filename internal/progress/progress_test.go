package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestLogLinesAndConcurrentAdd(t *testing.T) {
	var buf bytes.Buffer
	b := New(Options{W: &buf, Every: 1}, "sketch", 1000, "docs")
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 250; j++ {
				b.Add(1)
			}
		}()
	}
	wg.Wait()
	b.Finish()
	out := buf.String()
	if !strings.Contains(out, "sketch: 1000 docs in") {
		t.Fatalf("summary line missing:\n%s", out)
	}
}

func TestNilBar(t *testing.T) {
	var b *Bar = New(Options{}, "x", 1, "docs")
	b.Add(1)
	b.Set(5)
	if b.Finish() != 0 {
		t.Fatal("nil bar reported time")
	}
}

func TestInteractive(t *testing.T) {
	var buf bytes.Buffer
	b := New(Options{W: &buf, Interactive: true}, "read", 100, "bytes")
	b.Set(50)
	b.Set(100)
	b.Finish()
	if !strings.Contains(buf.String(), "read: 100 bytes in") {
		t.Fatalf("got %q", buf.String())
	}
}
