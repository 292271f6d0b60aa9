// Package sample provides consistent samplers for sets of features: given a
// document's features and a seed, each sampler appends k sample values whose
// pairwise agreement between two documents estimates their Jaccard
// similarity (package sketch holds the estimators).
//
// A sampler is consistent — a slot's sample changes only if its feature
// leaves the set — and uniform — every feature of the set is equally likely
// to be sampled. Duplicate feature IDs are ignored (the input is a set);
// weights are ignored (see package weighted). The samplers are those of
// Manasse, "On the Efficient Determination of Most Near Neighbors" (the
// book): MinHash with k hash functions (ch. 3.2, the reference), the
// AltaVista 8-bit prefix scheme with ResolveBuf (3.2), lazy leading-zero runs
// (4.1) and the batched biased-bit scheme (4.2), bottom-k and proportional
// sampling (ch. 3), plus one permutation hashing with optimal densification
// (HMT paper §3; Shrivastava 2017) and SuperMinHash (Ertl 2017), the fast
// ones.
//
// One constructor builds every sampler: New takes a Config (algorithm, k,
// seed, feature options, and the few parameters particular samplers have)
// and returns this package's samplers or the weighted ones of package
// weighted. A Sketcher, made from the same Config, is the whole per-document
// path: exact Rabin fingerprint, features (package feature) and sketch
// values, appended to the caller's buffers; every part of the system that
// sketches a document goes through it.
//
// Samplers are not estimators, indexes or feature extractors, and the hash
// functions are not cryptographic: with the seed, collisions can be forged.
// Outputs are frozen by golden vectors in testdata/: a sampler's output for a
// given (algorithm, version, seed, k, options) never changes.
package sample
