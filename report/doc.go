// Package report provides the plots and the self-contained HTML reports of
// neardup: histograms (stacked series, such as exact and estimated
// similarities), size distributions on logarithmic axes, the S-curves P(J)
// of supershingle schemes, and Dedup, one HTML page about a deduplication
// run that can be mailed or archived as a single file.
//
// The plots are drawn with gonum.org/v1/plot as SVG, deterministically
// (the same input gives byte-identical output, so reports can be compared
// and pinned by tests), or as PNG. SCurve draws the exact detection
// probability of a scheme of b supershingles of r samples with at least m
// agreeing, P(J) = Σ_{i≥m} C(b,i) (J^r)^i (1−J^r)^{b−i} (book ch. 3.1, 6.1,
// computed by package lsh), with the similarity threshold marked. Dedup's
// example clusters show the kept document and each member side by side
// with a minimal word-level diff (Myers' O(ND) algorithm in linear space,
// "An O(ND) Difference Algorithm and Its Variations", 1986), so a reader
// sees what made two documents near-duplicates and what told them apart.
//
// This package does not run anything: it renders values it is given. It
// does not import the pipeline (package dedup); the command line converts
// a run's result into a DedupData. It is not a general plotting library
// either: the charts have fixed styles chosen for these reports.
package report
