// Package feature provides the first stage of near-duplicate detection:
// it turns documents (plain text or HTML) into weighted features, 64-bit
// ids with weights, that consistent samplers then sketch.
//
// Following book 2.1 and 2.4 (Manasse, "On the Efficient Determination of
// Most Near Neighbors"), a document is normalized — HTML reduced to its
// visible text, Unicode optionally put in NFKC, case folded, and every run
// of white space and punctuation made a single delimiter — and its words
// are grouped into overlapping k-word shingles (k = 5 by default), with or
// without AltaVista's wrap-around, or taken singly, or replaced by
// character n-grams. Each unit becomes a Rabin fingerprint (book 2.2, 3.3)
// computed in O(1) per shingle by sliding a window over word fingerprints.
// The ids are then weighed as a set, as a multiset of counts (book ch. 5),
// or by TF-IDF with a document-frequency table (IDFTable), so that text
// shared by many documents — boilerplate, templates — does not dominate;
// title and heading text can weigh more. The default configuration is
// exactly the ground truth of the testdata licences corpus (lower-case,
// tokens are maximal runs of letters, numbers and '_', 5-word shingles
// without wrap-around, set weights).
//
// Tokens follow Unicode's script property by default (TokenizerUnicode):
// every Han, Hiragana and Katakana character is a token, and every Thai,
// Lao, Khmer and Myanmar grapheme cluster (UAX #29), so k-token shingles
// of Chinese and Japanese text are character k-grams; other scripts keep
// their words. On ASCII text this is exactly the old tokenizer
// (TokenizerWords), by the same fast path.
//
// The package is not a sampler, a language-aware tokenizer (no stemming,
// stop words or dictionary word segmentation) or an HTML
// renderer: it does not apply CSS, run scripts or read attributes such as
// alt text. Feature ids are not cryptographic: anyone who knows the seed
// can construct colliding shingles.
package feature
