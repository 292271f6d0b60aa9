package corpus

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/neardup/neardup/internal/rng"
)

// genLine writes the i-th line of a synthetic JSONL corpus: ~400 bytes of
// varied words, so compression is realistic rather than trivial.
func genLine(dst []byte, s *rng.Stream, i int) []byte {
	dst = fmt.Appendf(dst, `{"id":"doc-%d","url":"http://example.com/%d","text":"`, i, s.Intn(1000))
	for w := 0; w < 60; w++ {
		if w > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, words[s.Intn(uint64(len(words)))]...)
	}
	return append(dst, "\"}\n"...)
}

var words = strings.Fields(`the quick brown fox jumps over lazy dog near duplicate detection
consistent sampling sketch shingle weight jaccard similarity document corpus web page
license permission granted free software copyright notice warranty merchantability fitness
purpose liability contract tort otherwise arising connection use dealings redistribution`)

// TestStreamingConstantMemory reads 32 MiB of zstd-compressed JSONL from a
// pipe (never on disk, never whole in memory) and checks that the live heap,
// measured after a forced collection every 8192 records, stays far below
// the input size: reading streams. The bound, 12 MiB, covers the writer
// side in this same process (a zstd encoder, a few MiB of tables), the
// decoder's 1 MiB window, two 64 KiB read buffers and one 1 MiB record.
func TestStreamingConstantMemory(t *testing.T) {
	size := 32 << 20
	if testing.Short() {
		size = 8 << 20
	}
	pr, pw := io.Pipe()
	var lines int
	go func() {
		zw, err := zstd.NewWriter(pw, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		s := rng.New(rng.Key(1, 2))
		var buf []byte
		written := 0
		for i := 0; written < size; i++ {
			buf = genLine(buf[:0], &s, i)
			if i == 1000 { // one long record
				buf = append(append(buf[:0], `{"text":"`...), bytes.Repeat([]byte("x"), 1<<20)...)
				buf = append(buf, "\"}\n"...)
			}
			written += len(buf)
			lines++
			if _, err := zw.Write(buf); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(zw.Close())
	}()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	r, err := Open([]string{"-"}, Options{Stdin: pr})
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	var n, bodyBytes int64
	for r.Next() {
		n++
		bodyBytes += int64(len(r.Doc().Body))
		if n%8192 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	r.Close()
	st := r.Stats()
	if st.Rejected != 0 || n != int64(lines) {
		t.Fatalf("read %d of %d lines: %v", n, lines, st)
	}
	if grow := int64(peak) - int64(base); grow > 12<<20 {
		t.Errorf("heap grew by %d MiB reading %d MiB: not streaming", grow>>20, size>>20)
	}
	t.Logf("%d docs, %d MiB of text, heap peak +%d KiB, %d compressed bytes", n, bodyBytes>>20, (int64(peak)-int64(base))>>10, st.Bytes)
}

// TestInvariantRandomMix feeds a seeded random mix of good and bad records
// through several inputs and checks every count exactly against what was
// generated, not only read = yielded + rejected.
func TestInvariantRandomMix(t *testing.T) {
	dir := t.TempDir()
	s := rng.New(rng.Key(7, 3))
	want := map[string]int64{}
	var wantYield, wantWarn int64
	var paths []string
	for f := 0; f < 6; f++ {
		var b strings.Builder
		for i := 0; i < 500; i++ {
			switch k := s.Intn(10); k {
			case 0:
				b.WriteString(`{"id":"x","text":` + "\n")
				want[ReasonBadJSON]++
			case 1:
				b.WriteString(`{"id":"x"}` + "\n")
				want[ReasonMissingText]++
			case 2:
				b.WriteString(`{"text":"` + strings.Repeat("l", 300) + `"}` + "\n")
				want[ReasonTooLarge]++
			case 3:
				b.WriteString("{\"text\":\"bad \xff\xfe utf8\"}\n")
				wantYield++
				wantWarn++
			case 4:
				b.WriteString("  \n")
			default:
				fmt.Fprintf(&b, `{"id":"%d-%d","text":"fine %d"}`+"\n", f, i, k)
				wantYield++
			}
		}
		data := []byte(b.String())
		name := fmt.Sprintf("f%d.jsonl", f)
		switch f {
		case 1:
			data = gzipBytes(t, data)
		case 2:
			data = zstdBytes(t, data)
		}
		paths = append(paths, writeFile(t, dir, name, data))
	}
	paths = append(paths, filepath.Join(dir, "missing.jsonl"))
	want[ReasonOpen]++
	res := readAll(t, paths, Options{MaxRecordBytes: 200})
	var wantRej int64
	for _, n := range want {
		wantRej += n
	}
	st := res.stats
	if st.Yielded != wantYield || st.Rejected != wantRej || st.Warnings != wantWarn || st.Read != wantYield+wantRej {
		t.Errorf("stats %v; want yielded %d rejected %d warnings %d", st, wantYield, wantRej, wantWarn)
	}
	for k, n := range want {
		if st.RejectedBy[k] != n {
			t.Errorf("rejected %s: %d, want %d", k, st.RejectedBy[k], n)
		}
	}
}

// TestBytesReadConcurrent polls BytesRead from another goroutine while the
// Reader runs, as a progress bar does (run with -race).
func TestBytesReadConcurrent(t *testing.T) {
	dir := t.TempDir()
	s := rng.New(rng.Key(5))
	var data []byte
	for i := 0; i < 3000; i++ {
		data = genLine(data, &s, i)
	}
	p := writeFile(t, dir, "a.jsonl.gz", gzipBytes(t, data))
	r, err := Open([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var last int64
	go func() {
		defer close(done)
		for {
			n := r.BytesRead()
			if n < last || n > r.TotalBytes() {
				t.Errorf("BytesRead %d after %d, total %d", n, last, r.TotalBytes())
				return
			}
			last = n
			if n == r.TotalBytes() {
				return
			}
			runtime.Gosched()
		}
	}()
	for r.Next() {
	}
	r.Close()
	<-done
	if r.BytesRead() != r.TotalBytes() {
		t.Errorf("BytesRead %d, TotalBytes %d", r.BytesRead(), r.TotalBytes())
	}
}
