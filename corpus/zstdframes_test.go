package corpus

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/neardup/neardup/internal/rng"
)

// zstdFrames' output is one zstd stream that decodes to its input, for
// inputs of every size around the frame boundaries, written in pieces of
// every size.
func TestZstdFramesRoundTrip(t *testing.T) {
	r := rng.New(7)
	text := make([]byte, 5*zstdFrameBytes+zstdFrameBytes/2)
	words := []string{"near ", "duplicate ", "shingle ", "sketch ", "\n", "{\"id\":", "0123 "}
	for i := 0; i < len(text); {
		i += copy(text[i:], words[r.Uint64()%uint64(len(words))])
	}
	for _, n := range []int{0, 1, zstdFrameBytes - 1, zstdFrameBytes, zstdFrameBytes + 1, len(text)} {
		for _, piece := range []int{1 << 10, 4093, zstdFrameBytes + 17} {
			if n < 2 && piece != 1<<10 {
				continue
			}
			var out bytes.Buffer
			z, err := newZstdFrames(&out, zstd.WithEncoderLevel(zstd.SpeedFastest))
			if err != nil {
				t.Fatal(err)
			}
			for p := text[:n]; len(p) > 0; {
				c := min(piece, len(p))
				if k, err := z.Write(p[:c]); k != c || err != nil {
					t.Fatalf("Write: %d, %v", k, err)
				}
				p = p[c:]
			}
			if err := z.Close(); err != nil {
				t.Fatal(err)
			}
			if out.Len() == 0 {
				t.Fatalf("%d bytes: no frame written", n)
			}
			d, err := zstd.NewReader(bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(d)
			d.Close()
			if err != nil || !bytes.Equal(got, text[:n]) {
				t.Fatalf("%d bytes in pieces of %d: decoded %d bytes (%v)", n, piece, len(got), err)
			}
		}
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("no space left on device")
	}
	f.n -= len(p)
	return len(p), nil
}

// A failed write of a frame fails a later Write or the Close, and the
// writer neither hangs nor panics.
func TestZstdFramesWriteError(t *testing.T) {
	z, err := newZstdFrames(&failAfter{n: 100}, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(1)
	buf := make([]byte, 1<<16)
	var werr error
	for i := 0; i < 200 && werr == nil; i++ { // 12.5 frames of random bytes
		for j := range buf {
			buf[j] = byte(r.Uint64())
		}
		_, werr = z.Write(buf)
	}
	cerr := z.Close()
	if cerr == nil || cerr.Error() != "no space left on device" || werr != nil && werr.Error() != "no space left on device" {
		t.Fatalf("Write: %v, Close: %v", werr, cerr)
	}
}
