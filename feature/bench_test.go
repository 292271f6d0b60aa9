package feature

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// vocabulary for generated documents: common English words of mixed
// length, so token lengths resemble prose.
var benchWords = []string{
	"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was",
	"with", "be", "by", "on", "not", "he", "this", "are", "or", "his", "from",
	"at", "which", "but", "have", "an", "had", "they", "you", "were", "their",
	"one", "all", "we", "can", "her", "has", "there", "been", "if", "more",
	"when", "will", "would", "who", "so", "no", "software", "license",
	"copyright", "permission", "distribution", "warranty", "provided",
	"conditions", "following", "documentation", "merchantability",
}

// genText returns a deterministic plain text of n words with sentence
// punctuation and line breaks.
func genText(seed uint64, n int) []byte {
	s := rng.New(rng.Key(seed, 0x74657874))
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		w := benchWords[s.Intn(uint64(len(benchWords)))]
		if i%12 == 0 {
			w = string(w[0]-'a'+'A') + w[1:]
		}
		b.WriteString(w)
		switch {
		case i%12 == 11:
			b.WriteString(".")
			if i%60 == 59 {
				b.WriteString("\n\n")
			} else {
				b.WriteByte(' ')
			}
		case i%7 == 3:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.Bytes()
}

// genHTML returns a deterministic HTML page of about n visible words: a
// title, navigation, headings, paragraphs with inline markup and entities,
// a script and a style block and comments.
func genHTML(seed uint64, n int) []byte {
	s := rng.New(rng.Key(seed, 0x68746d6c))
	word := func() string { return benchWords[s.Intn(uint64(len(benchWords)))] }
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s %s &amp; %s</title>\n", word(), word(), word())
	b.WriteString("<style>body { font-family: sans-serif; } .nav a { color: #333; }</style>\n")
	b.WriteString("<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}</script>\n")
	b.WriteString("</head><body>\n<nav class=\"nav\"><a href=\"/\">Home</a> | <a href=\"/about\">About</a> | <a href=\"/contact\">Contact</a></nav>\n")
	words := 0
	for words < n {
		fmt.Fprintf(&b, "<h2 id=\"s%d\">%s %s</h2>\n<p>", words, word(), word())
		words += 2
		for j := 0; j < 40 && words < n; j++ {
			switch j % 10 {
			case 3:
				fmt.Fprintf(&b, "<a href=\"https://example.com/%s\">%s</a> ", word(), word())
			case 6:
				fmt.Fprintf(&b, "<b>%s</b> ", word())
			case 8:
				fmt.Fprintf(&b, "%s&nbsp;&mdash; ", word())
			default:
				b.WriteString(word())
				b.WriteByte(' ')
			}
			words++
		}
		b.WriteString("</p>\n<!-- generated paragraph -->\n")
	}
	b.WriteString("<footer><p>&copy; 2026 Example Corp. All rights reserved.</p></footer>\n</body></html>\n")
	return b.Bytes()
}

func benchExtract(b *testing.B, o Options, doc []byte) {
	e, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	dst := e.Extract(nil, doc)
	occ := e.Occurrences()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		dst = e.Extract(dst[:0], doc)
	}
	cpu1 := processCPU()
	b.StopTimer()
	reportPerShingle(b, occ, cpu0, cpu1)
}

// BenchmarkExtract measures extraction from raw bytes: normalization,
// tokenization, one Rabin hash per token, one window step and one
// deduplication insert per shingle. Run with
//
//	go test ./feature -run '^$' -bench Extract -benchtime 2s
func BenchmarkExtract(b *testing.B) {
	text := genText(1, 1000)
	page := genHTML(1, 1000)
	b.Run("text-1000w/set", func(b *testing.B) { benchExtract(b, Options{}, text) })
	b.Run("text-1000w/wrap", func(b *testing.B) { benchExtract(b, Options{Wrap: true}, text) })
	b.Run("text-1000w/count", func(b *testing.B) { benchExtract(b, Options{Weighting: WeightCount}, text) })
	b.Run("text-1000w/word", func(b *testing.B) { benchExtract(b, Options{Unit: UnitWord}, text) })
	b.Run("text-1000w/char5", func(b *testing.B) { benchExtract(b, Options{Unit: UnitChar}, text) })
	b.Run("text-1000w/nfkc-fold", func(b *testing.B) { benchExtract(b, Options{Norm: NormNFKC, Case: CaseFold}, text) })
	b.Run("html-1000w/set", func(b *testing.B) { benchExtract(b, Options{}, page) })
	b.Run("cjk-manpage/set", func(b *testing.B) {
		// A real Japanese manual page of the multilingual fixture.
		for _, d := range loadFixture(b) {
			if d.ID == "edit/ja-para" {
				benchExtract(b, Options{}, []byte(d.Text))
			}
		}
	})
	b.Run("html-1000w/count", func(b *testing.B) { benchExtract(b, Options{Weighting: WeightCount}, page) })
}

// BenchmarkExtractCorpus extracts 256 distinct 1,000-word documents in
// turn. BenchmarkExtract repeats one document, which lets the branch
// predictor learn its word boundaries; this one shows the speed on a real
// corpus. Measured before the eight-byte word scan of tokenizeASCII: 36–41
// against 17.8 CPU ns per shingle; after it: 30.5 against 23.7 (the scan
// trades the repeated document's predicted branches for real text's). With
// the table route of the ASCII path about 20, with the carry-less route
// and AVX-512 about 7; on an AMD EPYC without AVX-512, about 25 with the
// 128-bit loops and 13 with the AVX2 kernels. On an Intel Xeon with
// AVX-512 under load, median of 10 interleaved runs: the table route
// (-tags purego) 25.9 before its short register-resident loops and
// two-slot deduplication (dedupSet2), 18.8 after; the AVX2 kernels
// (GODEBUG=cpu.avx512f=off) 10.6, then 8.8 once spans256 folds the text
// for clWords4x2F (benchstat of 10 interleaved runs, p=0.000); the table
// route 23.1 and 22.2 in the same runs (no significant change). On
// bench/sketch's corpus (4,000 Zipf documents, 24 MB, read from DRAM)
// the same change measured 10.5 before and after (n=10, p=0.63). On the
// Intel Xeon of 2026-11-29 (AVX-512 off by GODEBUG, so the AVX2
// kernels), 10 interleaved runs: the table route 28.2
// against the AVX2 kernels' 12.4 ns per shingle (20.4 against 8.5 CPU
// ns). Callgrind counts about 230 instructions per shingle on the table
// route (lookUp 71, dedupFast2 36, chain2 35, transitions 26, swarMasks
// 20, longTerms 9, terms 8); reading sd in chain2 instead of terms' slice
// saved 2 of them (with spills in the loop), single chains 2.4, a
// zero-free TrailingZeros64 in transitions none, and stepBy with each
// half shifted down a byte at a time none (the compiler folds the shifts
// back into shifts of the whole word, then spills).
func BenchmarkExtractCorpus(b *testing.B) {
	var docs [][]byte
	for i := 0; i < 256; i++ {
		docs = append(docs, genText(uint64(i+2), 1000))
	}
	benchDocs(b, docs)
}

// benchDocs extracts docs in turn at the default options, b.N documents
// in all, and reports the mean bytes and shingles per document.
func benchDocs(b *testing.B, docs [][]byte) {
	e, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	var dst []Feature
	occ, size := 0, 0
	for _, d := range docs {
		dst = e.Extract(dst[:0], d)
		occ += e.Occurrences()
		size += len(d)
	}
	b.SetBytes(int64(size / len(docs)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		dst = e.Extract(dst[:0], docs[i%len(docs)])
	}
	cpu1 := processCPU()
	b.StopTimer()
	reportPerShingle(b, occ/len(docs), cpu0, cpu1)
}

// BenchmarkExtractCJK extracts the Chinese and Japanese documents of the
// multilingual fixture (real manual pages and paragraphs, mixed with ASCII
// option names and commands) in turn at the default options: the
// unicode-v1 tokenizer's non-ASCII route. MB/s is text bytes per second,
// the unit of bench/perf's "CJK text → sketch" row. Run with
//
//	go test ./feature -run '^$' -bench ExtractCJK -count 10
func BenchmarkExtractCJK(b *testing.B) {
	var docs [][]byte
	n, occ := 0, 0
	e, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	var dst []Feature
	for _, d := range loadFixture(b) {
		if !strings.HasPrefix(d.ID, "ja/") && !strings.HasPrefix(d.ID, "zh_") && !strings.HasPrefix(d.ID, "edit/") {
			continue
		}
		docs = append(docs, []byte(d.Text))
		n += len(d.Text)
		dst = e.Extract(dst[:0], []byte(d.Text))
		occ += e.Occurrences()
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		for _, d := range docs {
			dst = e.Extract(dst[:0], d)
		}
	}
	cpu1 := processCPU()
	b.StopTimer()
	reportPerShingle(b, occ, cpu0, cpu1)
}

// reportPerShingle reports wall-clock and process-CPU nanoseconds per
// shingle occurrence. The loop allocates nothing, so the process's CPU time
// is the loop's, and it is not inflated when other work shares the
// machine's cores.
func reportPerShingle(b *testing.B, occ int, cpu0, cpu1 int64) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(occ), "ns/shingle")
	if cpu0 >= 0 && cpu1 >= 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/float64(occ), "cpu-ns/shingle")
	}
}

// BenchmarkFloor is the reference the "about 10 ns per shingle"
// floor refers to, measured in the same run so that the ratio survives a
// loaded machine: split ASCII text into words with a byte-class table,
// lower-case them, and fold one 64-bit hash per word (no Rabin tables, no
// window, no deduplication).
func BenchmarkFloor(b *testing.B) {
	text := genText(1, 1000)
	var class [256]bool
	for c := 'a'; c <= 'z'; c++ {
		class[c], class[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		class[c] = true
	}
	class['_'] = true
	words := 0
	var sink uint64
	run := func() {
		words = 0
		h := uint64(0)
		in := false
		for _, c := range text {
			if class[c] {
				h = (h ^ uint64(c|0x20)) * 0x100000001b3
				in = true
				continue
			}
			if in {
				sink += rng.Mix64(h)
				h, in = 0, false
				words++
			}
		}
		if in {
			sink += rng.Mix64(h)
			words++
		}
	}
	run()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		run()
	}
	cpu1 := processCPU()
	b.StopTimer()
	reportPerShingle(b, words, cpu0, cpu1)
	if sink == 1 {
		b.Log(sink)
	}
}

// zipfText returns docs documents of n words drawn with probability
// proportional to 1/rank from a vocabulary of vocab words of 2 to 11
// random letters, the frequent ones shorter (as bench/sketch's corpus,
// whose "extract 5-shingles" row bench/perf reports), joined by spaces.
// vocab = 0 draws every word anew, so that no word repeats.
func zipfText(seed uint64, docs, n, vocab int) [][]byte {
	s := rng.New(rng.Key(seed, 0x7a697066))
	word := func(rank int, b []byte) []byte {
		l := min(2+int(1.5*math.Log10(float64(rank+1)))+int(s.Intn(4)), 11)
		for range l {
			b = append(b, byte('a'+s.Intn(26)))
		}
		return b
	}
	var words [][]byte
	var cdf []float64
	if vocab > 0 {
		sum := 0.0
		for r := range vocab {
			words = append(words, word(r, nil))
			sum += 1 / float64(r+1)
			cdf = append(cdf, sum)
		}
		for r := range cdf {
			cdf[r] /= sum
		}
	}
	out := make([][]byte, docs)
	for d := range out {
		var b []byte
		for i := range n {
			if i > 0 {
				b = append(b, ' ')
			}
			if vocab == 0 {
				b = word(int(s.Intn(50000)), b)
				continue
			}
			r, _ := slices.BinarySearch(cdf, s.Float64())
			b = append(b, words[min(r, vocab-1)]...)
		}
		out[d] = b
	}
	return out
}

// BenchmarkExtractVocab extracts 1,000-word documents whose words come
// from vocabularies of several sizes (zipfText), at the default options:
// "zipf-50k" is like bench/sketch's corpus, "zipf-5k" repeats its words
// more, and "distinct" has no word twice. It measures what depends on how
// often words repeat. Run with
//
//	go test ./feature -tags purego -run '^$' -bench ExtractVocab -count 10
//
// Two word caches for the table route were measured with it on the Intel
// Xeon of 2026-11-29 (-tags purego, five interleaved runs, best of each),
// and neither was kept, since zipf-50k is bench/perf's row:
//   - the K window terms of each word in a direct-mapped cache of 8,192
//     slots keyed by its last 16 bytes, a shingle then the xor of K cached
//     terms (no chain): zipf-5k 15.9 against 16.0 ns per shingle without
//     it, zipf-50k 26.8 against 17.2, distinct 48.8 against 22.1. A miss
//     costs the word's 16 lookups and K-1 steps in a row, about 90 cycles;
//     73% of zipf-50k's words and 92% of zipf-5k's hit.
//   - each word's step and drop values in a cache probed without a branch
//     (the misses listed and looked up after): the 60-word corpus of
//     BenchmarkExtractCorpus 16.0 → 14.1, zipf-5k 16.0 → 16.1, zipf-50k
//     17.2 → 19.4, distinct 22.2 → 32.4; the probe and the slots' cache
//     lines cost about what the lookups they spare do.
//
// A time profile of zipf-50k (the table route, 18.3 ns per shingle):
// lookUp 19%, the chain's steps 18%, dedupFast2 and its table 20%,
// longTerms 12% (words of 9 to 16 bytes are a third of this corpus),
// swarMasks 9%, transitions 5%, terms 5%.
//
// On an AMD EPYC (Zen 5, AVX-512 present) on 2026-11-29, the table route
// took 14.8 ns per shingle against the AVX2 kernels' 7.1 (clWindow4,
// dedupSet4, spans256 and clWords4x2F 1.2 to 1.9 each); its profile:
// lookUp 28%, transitions 16% (BSF, which TrailingZeros64 compiles to
// without TZCNT, takes about three cycles on AMD's CPUs), dedupFast2 13%,
// the chain's steps 12%, swarMasks 12%, longTerms 7%. Running the chain
// as four chains instead of two (chain) gave 14.3. Measured the same way
// (five or more interleaved runs, best of each) and dropped, each within
// noise or slower: one list of starts and ends together with offsets
// counted by POPCNT (transitions alone 2.1 → 1.6 ns per word, the whole
// unchanged, lookUp reading the pairs slower), the same as two loops of
// 12 (1.9 ns per word, the whole unchanged), BSF of t|1<<63 and a SWAR
// popcount (slower: the compiler then spills), the long-word list in a
// loop of its own (no spills left in lookUp, no change), the shifts of
// lookUp one byte at a time, reading sd in the chain instead of terms'
// slice, dedupSet2's table at load 1/2 (16 KiB instead of 32: slower, full
// buckets), six chains (no better than four), and the byte tables' rows
// padded by five cache lines so that the letters' lines of the 32 rows
// spread over the L1 cache's sets (no change).
func BenchmarkExtractVocab(b *testing.B) {
	for _, c := range []struct {
		name  string
		vocab int
	}{{"zipf-50k", 50000}, {"zipf-5k", 5000}, {"distinct", 0}} {
		b.Run(c.name, func(b *testing.B) {
			benchDocs(b, zipfText(7, 64, 1000, c.vocab))
		})
	}
}
