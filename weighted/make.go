package weighted

import (
	"math"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
)

// Sampler is what CWS, ICWS and HMT share: a sketch header and an
// allocation-free Sketch(dst, features). It is sealed — only this package's
// samplers implement it — because Make must know how a sampler reads
// weights (Options.LogWeights). Every implementation is immutable and safe
// for concurrent use.
type Sampler interface {
	Header() sketch.Header
	Sketch(dst []uint64, fs []feature.Feature) []uint64
	logWeights() bool
}

var (
	_ Sampler = (*CWS)(nil)
	_ Sampler = (*ICWS)(nil)
	_ Sampler = (*HMT)(nil)
)

func (c *CWS) logWeights() bool  { return c.logw }
func (c *ICWS) logWeights() bool { return c.logw }
func (h *HMT) logWeights() bool  { return h.logw }

// Make returns the sketch of fs drawn by s, with Size the exact total
// weight Σw of fs (absent weights skipped, as the samplers skip them): the
// size sketch.Containment needs, and the only source of it for CWS and
// ICWS sketches, whose values keep nothing of the weight. Size is 0 when fs
// has no positive weight or when the total is outside float64's range
// (possible with Options.LogWeights, or plain weights summing past
// math.MaxFloat64). The result is newly allocated; in a loop, call
// s.Sketch with a reused buffer instead.
func Make(s Sampler, fs []feature.Feature) *sketch.Sketch {
	return &sketch.Sketch{Header: s.Header(), Values: s.Sketch(nil, fs), Size: TotalWeight(fs, s.logWeights())}
}

// TotalWeight returns Σw over the present weights of fs — for logw, Σe^w
// over logarithms within ±1e15 — or 0 when there are none or the sum is
// outside float64's range. Cost O(len(fs)), no allocation.
func TotalWeight(fs []feature.Feature, logw bool) float64 {
	if logw {
		w := math.Exp2(totalLog2(fs, true))
		if math.IsInf(w, 1) {
			return 0
		}
		return w
	}
	var s float64
	for _, f := range fs {
		if f.Weight > 0 && !math.IsInf(f.Weight, 1) {
			s += f.Weight
		}
	}
	if math.IsInf(s, 1) {
		return 0
	}
	return s
}
