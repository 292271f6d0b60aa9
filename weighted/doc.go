// Package weighted provides consistent weighted sampling: samplers whose
// samples from two weighted sets S and T coincide with probability equal to
// their weighted Jaccard similarity Σmin(S(x),T(x)) / Σmax(S(x),T(x)), for
// any non-negative real weights, and the estimators built on them.
//
// Three samplers are offered. CWS is the active-index sampler of Manasse,
// McSherry and Talwar ("Consistent Weighted Sampling", sections 2–3): each
// feature's active indices are generated per power-of-two interval (2^(k−1),
// 2^k] from (feature, k, seed) alone, y is the greatest active index ≤ S(x),
// z the least one above it, and the hash is drawn from cdf_z with a β that
// depends on the feature only; it uses the paper's speed-ups (eq. 7
// comparison before inversion, deferred y of 3.1, the interval bit vector of
// 3.3 and the partial evaluation of z of 3.4) and its numerics (eqs. 8–9), so
// weights from 1e−300 to 1e300, or weights given as natural logarithms, work.
// Options.Beta selects section 3.5's parallel sampling with approximate β
// (BetaOblivious: 8 bits per sample; BetaUnary: unary runs, 2 bits per
// sample on average), the samplers sketch.CWSOblivious and CWSUnary, which
// draw the rest of β only for the pairs its first bits cannot rule out
// (Counts.BetaBits counts the bits).
// ICWS is Ioffe's improved consistent weighted sampling (Manasse, "On the
// Efficient Determination of Most Near Neighbors" (the book) chapter 5.2:
// five uniforms per feature per sample), the standard baseline. HMT is the
// Haeupler–Manasse–Talwar reduction ("Consistent Weighted Sampling Made Fast,
// Small, and Easy", Algorithms 3.1–3.4): the weighted set is scaled to t
// scales β^(−i) chosen from |w|₁, rounded consistently to an unweighted set
// (ReduceToUnwtd or ReduceToUnwtdDep) and sketched by one-permutation hashing
// on each scale; EstimateJaccard averages the per-scale estimates over the
// scales two sketches share, or reports "similarity below α"
// (sketch.JaccardHMT offers Algorithm 3.4 to the letter and the
// variance-weighted combination of section 3.3; sketch.CompressHMT and
// CompressHMTPairs its b-bit and ½-bit sketches). HMT.SketchScale sketches
// one scale alone (the paper's single-scale variant of section 5), and
// Options.BinaryBeta takes footnote 1's β = 2^(−1/m). Replicated
// (integer replication then min-hashing) is a slow, exact reference for
// tests. IntCWS is MMT section 2.3's integral-count sampler (eqs. 5–6):
// it samples an (element, copy) pair of a multiset of counts in time
// independent of the counts; it is reached from Go only, not through
// sample.New.
//
// This package is not an index and not a general unweighted sampler: it only
// turns weighted features (feature.Feature) into sketch values. Its
// samplers are reached through sample.New, the one constructor of every
// sampler (sample.Config names the algorithm, k, seed and these options),
// and satisfy sample.Sampler; sample.Make wraps their values in a
// sketch.Sketch whose Size is the exact total weight (TotalWeight). The estimators live in package sketch:
// sketch.Jaccard compares CWS and ICWS sketches slot by slot and
// HMT sketches by Algorithm 3.4, scale by scale; EstimateJaccard is the same
// estimate with the number of scales. The samplers are frozen: golden
// vectors in testdata pin their outputs.
package weighted
