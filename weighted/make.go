package weighted

import (
	"math"

	"github.com/neardup/neardup/feature"
)

// LogWeights reports whether c reads every Feature.Weight as the natural
// logarithm of the weight (Options.LogWeights).
func (c *CWS) LogWeights() bool { return c.logw }

// LogWeights reports whether c reads weights as logarithms
// (Options.LogWeights).
func (c *ICWS) LogWeights() bool { return c.logw }

// LogWeights reports whether h reads weights as logarithms
// (Options.LogWeights).
func (h *HMT) LogWeights() bool { return h.logw }

// TotalWeight returns Σw over the present weights of fs — for logw, Σe^w
// over logarithms within ±1e15 — or 0 when there are none or the sum is
// outside float64's range: the exact size of a weighted set, which CWS and
// ICWS sketches keep nothing of (sample.Make and sample.Config.Size set
// sketch.Sketch.Size from it). Cost O(len(fs)), no allocation.
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
