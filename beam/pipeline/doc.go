// Package pipeline provides neardup's batch deduplication as an Apache Beam
// pipeline, so that one corpus can be deduplicated on Flink, Spark or Google
// Cloud Dataflow (and locally on Prism) with the same results as
// `neardup dedup`.
//
// The stages are dedup's, expressed as Beam transforms: read the inputs (one
// bundle per input, with the core's corpus readers, from any Beam filesystem)
// and sketch every document with the core's feature extractor and sampler;
// drop later documents with an id already seen; group by exact fingerprint
// (identical bodies pair with their first copy); emit the C(b, m) band keys
// of every unique document (the supershingle "m of b" keys of the Manasse,
// "On the Efficient Determination of Most Near Neighbors" (the book)'s
// section 2.5, AltaVista's (supershingle, doc) records of section 3.1) and
// GroupByKey them; pair each document of a run with at most MaxRun earlier
// ones (dedup.MaxRun, the hot-key guard); verify the distinct candidate pairs
// by the sketch estimate under index.Accept; find the connected components of
// the verified pairs by large-star/small-star rounds (see Components); keep
// each component's earliest document; write the kept corpus, the removed and
// rejected records, the clusters and a summary whose books balance (read =
// kept + duplicates + rejected), with Beam counters for the same numbers.
//
// Documents are numbered by input order (Order), never by scheduling, so
// the output is the same on every runner and for every bundling, and equals
// dedup.Run's on the same corpus and configuration with verification by
// sketch estimate (dedup.ExactNever) and the keep-first policy. What the
// pipeline does not do: exact-Jaccard verification (it would ship feature
// sets through the shuffle), weighted samplers, the star and keep-longest
// cluster policies, and deduplication against an existing index.
//
// Every call into the core packages is in core.go.
package pipeline
