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
// ones (dedup.MaxRun, the hot-key guard); read the inputs again for the
// documents of candidate pairs only, whose sorted feature sets join the
// pairs through two CoGroupByKeys (the other documents' features never
// enter the shuffle); verify the distinct candidate pairs with the index's
// verification (index.Index.Verify: exact Jaccard, or with Config.Exact
// "never" the sketch estimate within the slack); find the connected components of
// the verified pairs by large-star/small-star rounds (see Components); keep
// each component's earliest document; write the kept corpus, the removed and
// rejected records, the clusters and a summary whose books balance (read =
// kept + duplicates + rejected), with Beam counters for the same numbers.
//
// Documents are numbered by input order (Order), never by scheduling, so
// the output is the same on every runner and for every bundling, and equals
// dedup.Run's on the same corpus and configuration with the keep-first
// policy: with exact verification (dedup.ExactAlways, which `neardup dedup`
// uses whenever the feature sets fit its budget) by default, with
// dedup.ExactNever under Config.Exact "never". What the pipeline does not
// do: weighted samplers, the star and keep-longest cluster policies, and
// deduplication against an existing index.
//
// Every call into the core packages is in core.go.
package pipeline
