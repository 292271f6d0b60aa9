package weighted

import (
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestConcurrentSketch: samplers are safe for concurrent use (run with
// -race); every goroutine gets the sequential answer.
func TestConcurrentSketch(t *testing.T) {
	s := rng.New(1)
	fs := logUniform(&s, 100, 0.01, 100)
	c, _ := NewCWS(Options{K: 32})
	ic, _ := NewICWS(Options{K: 32})
	h, _ := NewHMT(Options{K: 32})
	for _, sm := range []valuer{c, ic, h} {
		want := sm.Sketch(nil, fs)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var dst []uint64
				for range 20 {
					if dst = sm.Sketch(dst[:0], fs); !slices.Equal(dst, want) {
						t.Errorf("%T: concurrent sketch differs", sm)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}
