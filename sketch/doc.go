// Package sketch provides the Sketch value of neardup — a header naming how a
// sketch was made plus its sample values — with a compact, versioned,
// checksummed binary encoding and the estimators that turn two sketches into
// a Jaccard similarity with a standard error, b-bit compression, union
// (merge), set-size (cardinality) and containment estimates.
//
// A sketch is only comparable with a sketch made by the same algorithm,
// algorithm version, seed, k, b, feature configuration and parameters; every
// estimator checks the two headers first and returns ErrMismatch (naming the
// differing field) rather than a meaningless number. Three families exist.
// Slot-wise sketches (MinHash, Prefix, LazyBits, LazyBitsBatched, OPH,
// SuperMinHash and the weighted CWS, ICWS) hold k values, value i being the
// sample of slot i, and P(a_i = b_i) = J (Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book) ch. 2.4, 3; weighted
// Jaccard Σmin/Σmax for CWS, ICWS); the estimate is the fraction of equal
// slots, corrected for b-bit compression by J = (2^b Q − 1)/(2^b − 1) (book
// 2.4). Set sketches (BottomK, Proportional) hold a sorted set of hashes;
// their estimator first restricts both sets to the bottom-k (or the kept
// part) of the union (book ch. 3, "a small adjustment"), which makes it
// unbiased — unlike the naive |A∩B|/k. HMT sketches (HMT, HMTDep:
// Haeupler–Manasse– Talwar, section 3.2) hold a first scale, the total weight
// and one block of one-permutation bins per scale; Jaccard compares blocks of
// equal scale numbers and averages them (Algorithm 3.4), or answers
// "similarity below α" (Estimate.Below) when the total weights rule α out;
// JaccardHMT follows Algorithm 3.4 to the letter and can weight the scales
// by variance (section 3.3), and CompressHMT, CompressHMTPairs (b-bit and
// ½-bit, section 3.3 after Li and König) keep the first scale and total
// weight as full words and compress the bins scale by scale.
// Cardinality uses Flajolet–Martin (1/mean(min) − 1 over k minima, lecture
// notes "distinct elements") or the bottom-k estimator (k−1)/U_(k); for HMT
// sketches it is the recorded total weight.
//
// This package does not draw samples: package sample (and package weighted)
// produce the values; everything needed to compare them, weighted ones
// included, lives here, so sketch.Jaccard is right for every algorithm. It is not a similarity index (see lsh and index) and it
// is not cryptographic: anybody who knows the seed can forge collisions.
package sketch
