// Package report provides the plots and the self-contained HTML reports of
// neardup: histograms (stacked series, such as verified pairs and rejected
// candidates), size distributions on logarithmic axes, the S-curves P(J)
// of supershingle schemes, and Dedup, one HTML page about a deduplication
// run that can be mailed or archived as a single file. It is the one place
// in the module that draws: commands and other packages call it rather than
// gonum.org/v1/plot.
//
// The plots are drawn with gonum.org/v1/plot as SVG, deterministically (the
// same input gives byte-identical output, so reports can be compared and
// pinned by tests), or as PNG, PDF or EPS. Legends sit in a band below the x
// axis, never over the data, and logarithmic axes are labelled from the
// exponent (0.001, 1e-5). SCurve draws the exact detection probability of a
// scheme of b supershingles of r samples with at least m agreeing, P(J) =
// Σ_{i≥m} C(b,i) (J^r)^i (1−J^r)^{b−i} (Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book) ch. 3.1, 6.1, computed by
// package lsh), with the similarity threshold marked, on a linear axis or a
// logarithmic one that shows the false-positive tail (book 3.2). The S-curve
// is how a scheme is judged: the area under the curve left of the threshold
// is the false-positive rate paid in verification, the area above it to the
// right the recall lost.
//
// Dedup's page shows the similarity of every candidate pair over [0, 1]
// with the threshold marked, so the gap between near-duplicates and the
// rest is visible, and example clusters with the kept document and each
// member side by side as a minimal word-level diff (Myers' O(ND) algorithm
// in linear space, "An O(ND) Difference Algorithm and Its Variations",
// 1986), so a reader sees what made two documents near-duplicates and what
// told them apart. Long texts show a short preview; the rest is folded
// behind <details>.
//
// This package does not run anything: it renders values it is given. It
// does not import the pipeline (package dedup); the command line converts
// a run's result into a DedupData. It is not a general plotting library
// either: the charts have fixed styles chosen for these reports.
package report
