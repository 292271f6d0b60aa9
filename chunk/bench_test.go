package chunk

import "testing"

func benchCuts(b *testing.B, data []byte, o Options) {
	c, err := NewCutter(o)
	if err != nil {
		b.Fatal(err)
	}
	dst := c.Cuts(nil, data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = c.Cuts(dst[:0], data)
	}
}

// BenchmarkCuts measures one-shot cut-point speed (the goal lives in
// bench/chunk, which runs the peers side by side).
func BenchmarkCuts(b *testing.B) {
	const n = 16 << 20
	sets := []struct {
		name string
		data []byte
	}{{"random", randBytes(1, n)}, {"text", textLike(2, n)}, {"zeros", make([]byte, n)}, {"sparse", sparse(3, n, 2000)}}
	for _, s := range sets {
		b.Run(s.name+"/fast", func(b *testing.B) { benchCuts(b, s.data, Options{}) })
		if s.name == "random" {
			b.Run(s.name+"/plain", func(b *testing.B) { benchCuts(b, s.data[:n/8], Options{Mode: Plain}) })
		}
	}
}

func BenchmarkSign(b *testing.B) {
	data := randBytes(4, 16<<20)
	s, _ := NewSigner(Options{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.SignBytes(data)
	}
}
