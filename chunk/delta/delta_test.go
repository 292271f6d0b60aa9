package delta

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/internal/rng"
)

func randBytes(s *rng.Stream, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(s.Uint64())
	}
	return b
}

// edit applies one random edit: insert, delete, overwrite, duplicate or
// move a block.
func edit(s *rng.Stream, d []byte) []byte {
	if len(d) < 2 {
		return append(d, randBytes(s, 1+int(s.Intn(500)))...)
	}
	at := int(s.Intn(uint64(len(d))))
	n := 1 + int(s.Intn(uint64(min(3000, len(d)-at))))
	out := append([]byte{}, d[:at]...)
	switch s.Intn(5) {
	case 0: // insert
		out = append(append(out, randBytes(s, n)...), d[at:]...)
	case 1: // delete
		out = append(out, d[at+n:]...)
	case 2: // overwrite
		out = append(append(out, randBytes(s, n)...), d[at+n:]...)
	case 3: // duplicate
		out = append(append(out, d[at:at+n]...), d[at:]...)
	case 4: // move to the end
		out = append(append(out, d[at+n:]...), d[at:at+n]...)
	}
	return out
}

func opener(olds [][]byte) Opener {
	return func(i int, name string) (io.ReaderAt, int64, error) {
		return bytes.NewReader(olds[i]), int64(len(olds[i])), nil
	}
}

func sign(t *testing.T, o chunk.Options, d []byte) *chunk.Signature {
	s, err := chunk.NewSigner(o)
	if err != nil {
		t.Fatal(err)
	}
	return s.SignBytes(d)
}

// TestPlanApplyProperty: for random edit scripts (1 to 20 edits of five
// kinds) over random and repetitive old files, with one or two old files,
// plan + delta + apply reproduces the new file byte for byte and the copied
// bytes are all bytes of the new file in chunks found in the old ones.
func TestPlanApplyProperty(t *testing.T) {
	s := rng.New(rng.Key(77))
	opts := []chunk.Options{{Min: 100, Max: 300}, {}}
	for trial := 0; trial < 60; trial++ {
		o := opts[trial%2]
		var old []byte
		switch trial % 3 {
		case 0:
			old = randBytes(&s, int(s.Intn(200000)))
		case 1:
			old = bytes.Repeat(randBytes(&s, 1+int(s.Intn(700))), 1+int(s.Intn(200)))
		case 2:
			old = make([]byte, s.Intn(50000))
		}
		nw := old
		for e := 1 + int(s.Intn(20)); e > 0; e-- {
			nw = edit(&s, nw)
		}
		olds := [][]byte{old}
		if trial%4 == 0 {
			olds = append(olds, randBytes(&s, 30000))
		}
		var srcs []Source
		for i, d := range olds {
			srcs = append(srcs, Source{Name: fmt.Sprint("old", i), Sig: sign(t, o, d)})
		}
		nsig := sign(t, o, nw)
		p := NewPlan(srcs, nsig)
		if p.CopyBytes+p.LiteralBytes != int64(len(nw)) {
			t.Fatalf("trial %d: copy %d + literal %d != %d", trial, p.CopyBytes, p.LiteralBytes, len(nw))
		}
		var buf bytes.Buffer
		if err := Write(&buf, p, bytes.NewReader(nw)); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := Apply(&out, bytes.NewReader(buf.Bytes()), opener(olds), o); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !bytes.Equal(out.Bytes(), nw) {
			t.Fatalf("trial %d: rebuilt file differs", trial)
		}
	}
}

// TestSmallEditSendsLittle: one 100-byte overwrite in 1 MiB sends at most
// the few chunks around it.
func TestSmallEditSendsLittle(t *testing.T) {
	s := rng.New(3)
	old := randBytes(&s, 1<<20)
	nw := append([]byte{}, old...)
	copy(nw[500000:], randBytes(&s, 100))
	p := NewPlan([]Source{{Name: "old", Sig: chunk.Sign(old)}}, chunk.Sign(nw))
	if p.LiteralBytes > 3*10240 || p.Present < p.Chunks-3 {
		t.Fatalf("literal %d bytes, %d of %d chunks present", p.LiteralBytes, p.Present, p.Chunks)
	}
	if p.SignatureBytes > 32*int64(p.Chunks)/2 {
		t.Fatalf("recursive signature exchange of %d bytes for %d chunks", p.SignatureBytes, p.Chunks)
	}
}

func TestApplyRejects(t *testing.T) {
	s := rng.New(4)
	old := randBytes(&s, 100000)
	nw := append(randBytes(&s, 5000), old...)
	p := NewPlan([]Source{{Name: "old", Sig: chunk.Sign(old)}}, chunk.Sign(nw))
	var buf bytes.Buffer
	if err := Write(&buf, p, bytes.NewReader(nw)); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	// A flipped literal byte fails verification.
	bad := append([]byte{}, good...)
	bad[bytes.Index(good, nw[100:140])] ^= 1
	if _, err := Apply(io.Discard, bytes.NewReader(bad), opener([][]byte{old}), chunk.Options{}); !errors.Is(err, ErrVerify) {
		t.Errorf("tampered literal: %v", err)
	}
	// A different old file fails.
	if _, err := Apply(io.Discard, bytes.NewReader(good), opener([][]byte{old[1:]}), chunk.Options{}); !errors.Is(err, ErrSource) {
		t.Errorf("wrong source: %v", err)
	}
	// Truncations are malformed.
	for _, n := range []int{0, 5, 20, 60, len(good) / 2} {
		if _, err := Apply(io.Discard, bytes.NewReader(good[:n]), opener([][]byte{old}), chunk.Options{}); !errors.Is(err, ErrFormat) {
			t.Errorf("truncated to %d: %v", n, err)
		}
	}
}

func ExampleApply() {
	old := bytes.Repeat([]byte("all work and no play makes jack a dull boy\n"), 2000)
	nw := append(append([]byte{}, old[:40000]...), []byte("here's johnny\n")...)
	nw = append(nw, old[40000:]...)
	p := NewPlan([]Source{{Name: "old.txt", Sig: chunk.Sign(old)}}, chunk.Sign(nw))
	var d bytes.Buffer
	Write(&d, p, bytes.NewReader(nw))
	var out bytes.Buffer
	_, err := Apply(&out, &d, func(int, string) (io.ReaderAt, int64, error) {
		return bytes.NewReader(old), int64(len(old)), nil
	}, chunk.Options{})
	fmt.Println(err, bytes.Equal(out.Bytes(), nw), p.LiteralBytes < int64(len(nw))/2)
	// Output: <nil> true true
}

func ExampleNewPlan() {
	old := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	nw := append(append([]byte{}, old[:80000]...), old[90000:]...) // 10 kB cut out
	p := NewPlan([]Source{{Name: "old", Sig: chunk.Sign(old)}}, chunk.Sign(nw))
	fmt.Println(p.NewSize, p.CopyBytes+p.LiteralBytes == p.NewSize, p.Present > 0)
	// Output: 150000 true true
}
