package feature

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/rabin"
)

// clTables returns two tables drawn as New draws them, and the route's
// constants for k.
func clTables(t *testing.T, seed uint64, k int) (*rabin.Table, *rabin.Table, *clConsts) {
	t.Helper()
	tokT := rabin.New(rabin.RandomPrimitive(rng.Key(seed, labelTokenPoly)))
	winT := rabin.New(rabin.RandomPrimitive(rng.Key(seed, labelWindowPoly)))
	c := newCLConsts(tokT, winT, k)
	if c == nil {
		t.Fatalf("no carry-less constants for k=%d", k)
	}
	return tokT, winT, c
}

// loHi splits a word of up to 16 bytes as the route reads it: its last 8
// bytes and the 8 before them, little-endian, zero-filled in front.
func loHi(w []byte) (lo, hi uint64) {
	var b [16]byte
	copy(b[16-len(w):], w)
	return binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[:8])
}

func TestCLModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		tokT, winT, c := clTables(t, seed, 5)
		st := rng.New(seed)
		for i := 0; i < 2000; i++ {
			h := st.Uint64()
			if got, want := clStep(h, c.m1, c.q1), tokT.ExtendUint64(0, h); got != want {
				t.Fatalf("seed %d: step1(%#x) = %#x, want %#x", seed, h, got, want)
			}
			if got, want := clStep(h, c.m2, c.q2), winT.ExtendUint64(0, h); got != want {
				t.Fatalf("seed %d: step2(%#x) = %#x, want %#x", seed, h, got, want)
			}
		}
		// Tokens of every length up to 16.
		var lo, hi, toks []uint64
		var rs []uint8
		var want []uint64
		for i := 0; i < 500; i++ {
			r := i % (maxShortWord + 1)
			w := make([]byte, r)
			for j := range w {
				w[j] = byte(st.Uint64())
			}
			l, h := loHi(w)
			lo, hi, rs = append(lo, l), append(hi, h), append(rs, uint8(r))
			want = append(want, tokT.Hash(w))
		}
		toks = make([]uint64, len(lo))
		clToksGo(toks, lo, hi, rs, c)
		for j := range toks {
			if toks[j] != want[j] {
				t.Fatalf("seed %d: token %d (%d bytes) = %#x, want %#x", seed, j, rs[j], toks[j], want[j])
			}
		}
		for k := 1; k <= maxCLMULK; k++ {
			_, _, c := clTables(t, seed, k)
			ww := rabin.NewWordWindow(winT, k)
			var wantW []uint64
			for j, u := range toks {
				fp := ww.Roll(u)
				if j >= k-1 {
					wantW = append(wantW, fp)
				}
			}
			got := make([]uint64, len(toks)-k+1)
			clWindowGo(got, toks, c)
			for j := range got {
				if got[j] != wantW[j] {
					t.Fatalf("seed %d k %d: window %d = %#x, want %#x", seed, k, j, got[j], wantW[j])
				}
			}
		}
	}
}

func TestCLConstsLayout(t *testing.T) {
	var c clConsts
	for _, x := range []struct {
		name     string
		got, off uintptr
	}{
		{"m1", unsafe.Offsetof(c.m1), 0}, {"q1", unsafe.Offsetof(c.q1), 8}, {"z1", unsafe.Offsetof(c.z1), 16},
		{"m2", unsafe.Offsetof(c.m2), 24}, {"q2", unsafe.Offsetof(c.q2), 32}, {"ck", unsafe.Offsetof(c.ck), 40},
		{"k", unsafe.Offsetof(c.k), 48}, {"c1", unsafe.Offsetof(c.c1), 64}, {"z", unsafe.Offsetof(c.z), 2112},
		{"masks", unsafe.Offsetof(c.masks), 2176}, {"am1", unsafe.Offsetof(c.am1), 2448}, {"zp1", unsafe.Offsetof(c.zp1), 2464},
		{"fcase", unsafe.Offsetof(c.fcase), 2480}, {"fdlo", unsafe.Offsetof(c.fdlo), 2496}, {"fdhi", unsafe.Offsetof(c.fdhi), 2512},
		{"fzero", unsafe.Offsetof(c.fzero), 2528}, {"lomask", unsafe.Offsetof(c.lomask), 2544},
		{"lead", unsafe.Offsetof(c.lead), 2608}, {"permhi", unsafe.Offsetof(c.permhi), 2880},
	} {
		if x.got != x.off {
			t.Errorf("clConsts.%s at offset %d, clmul_amd64.s reads it at %d", x.name, x.got, x.off)
		}
	}
}

// TestCLAsm checks clWords and clWindow (assembly where the CPU has it)
// against their pure-Go forms, for every folding of the options.
func TestCLAsm(t *testing.T) {
	if !hasCLMUL {
		t.Skip("no carry-less multiplication on this CPU")
	}
	st := rng.New(9)
	const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ .,-!\n"
	for k := 1; k <= maxCLMULK; k++ {
		for _, o := range []Options{{K: k}, {K: k, Case: CaseKeep}, {K: k, Digits: DigitsFold}, {K: k, Digits: DigitsDrop, Case: CaseFold}} {
			e, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			a := e.fast
			if a.cl == nil {
				t.Fatalf("%v: no carry-less route", o)
			}
			for _, n := range []int{0, 1, 2, 7, 100, 3000} {
				doc := make([]byte, n)
				for i := range doc {
					doc[i] = alpha[st.Intn(uint64(len(alpha)))]
					if st.Intn(50) == 0 { // long words
						for ; i < n && st.Intn(30) != 0; i++ {
							doc[i] = 'x'
						}
						i--
					}
				}
				a.load(doc)
				if !a.spans() {
					t.Fatal("ASCII text not taken")
				}
				nw := len(a.st)
				got, want := make([]uint64, nw), make([]uint64, nw)
				buf := a.buf[:cap(a.buf)]
				lg, lw := clWords(got, buf, a.st, a.en, a.cl.c), clWordsGo(want, buf, a.st, a.en, a.cl.c)
				if lg != lw {
					t.Fatalf("%v n %d: clWords longest %d, clWordsGo %d", o, n, lg, lw)
				}
				for j := range got {
					if a.en[j]-a.st[j] <= maxShortWord && got[j] != want[j] {
						t.Fatalf("%v n %d: clWords word %d (%q) = %#x, clWordsGo %#x", o, n, j, doc[a.st[j]:a.en[j]], got[j], want[j])
					}
				}
				for _, w := range []struct {
					name string
					has  bool
					f    func(dst []uint64, buf []byte, st, en []int32, c *clConsts) int
				}{{"clWords4", hasCLMUL512, clWords4}, {"clWords4x2", hasCLMUL256, clWords4x2}, {"clWords4x2F", hasCLMUL256, clWords4x2F}} {
					if !w.has {
						continue
					}
					n4 := nw &^ 3
					clear(got)
					wbuf := buf
					if w.name == "clWords4x2F" {
						// It takes text that spans256 has folded.
						wbuf = slices.Clone(buf)
						foldASCII(wbuf, a.digits, a.cl.fold)
					}
					lg := w.f(got[:n4], wbuf, a.st[:n4], a.en[:n4], a.cl.c)
					if lw := clWordsGo(want[:n4], buf, a.st[:n4], a.en[:n4], a.cl.c); lg != lw {
						t.Fatalf("%v n %d: %s longest %d, clWordsGo %d", o, n, w.name, lg, lw)
					}
					for j := range got[:n4] {
						if a.en[j]-a.st[j] < maxShortWord && got[j] != want[j] {
							t.Fatalf("%v n %d: %s word %d (%q) = %#x, clWordsGo %#x", o, n, w.name, j, doc[a.st[j]:a.en[j]], got[j], want[j])
						}
					}
				}
			}
		}
	}
	for k := 1; k <= maxCLMULK; k++ {
		_, _, c := clTables(t, uint64(k), k)
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 16, 100} {
			toks := make([]uint64, n)
			for j := range toks {
				toks[j] = st.Uint64()
			}
			if n < k {
				continue
			}
			got, want := make([]uint64, n-k+1), make([]uint64, n-k+1)
			clWindow(got, toks, c)
			clWindowGo(want, toks, c)
			if !slices.Equal(got, want) {
				t.Fatalf("k %d n %d: clWindow differs from clWindowGo", k, n)
			}
			if hasCLMUL512 {
				clear(got)
				n8 := len(got) &^ 7
				clWindow8(got[:n8], toks, c)
				if !slices.Equal(got[:n8], want[:n8]) {
					t.Fatalf("k %d n %d: clWindow8 differs from clWindowGo", k, n)
				}
			}
			if hasCLMUL256 {
				clear(got)
				n4 := len(got) &^ 3
				clWindow4(got[:n4], toks, c)
				if !slices.Equal(got[:n4], want[:n4]) {
					t.Fatalf("k %d n %d: clWindow4 differs from clWindowGo", k, n)
				}
			}
		}
	}
}

// clToksGo is the model of clWords over words split in advance: dst[j] = the token fingerprint
// of the word whose last 8 bytes are lo[j] and the 8 before them hi[j],
// r[j] bytes long (r <= 16).
func clToksGo(dst, lo, hi []uint64, r []uint8, c *clConsts) {
	for j := range dst {
		uh, ul := clProd(hi[j], c.z1)
		dst[j] = c.c1[r[j]] ^ clStep(lo[j]^uh, c.m1, c.q1) ^ ul
	}
}

// clRoutes returns, for o, extractors taking the carry-less route with
// AVX-512, with AVX2 and without either, and the table route, as far as
// the CPU allows.
func clRoutes(t testing.TB, o Options) (names []string, es []*Extractor) {
	defer func(a, b, c, d, e bool) { useCLMUL, useCLMUL512, useSpans512, useCLMUL256, useSpans256 = a, b, c, d, e }(
		useCLMUL, useCLMUL512, useSpans512, useCLMUL256, useSpans256)
	for _, r := range []struct {
		name                              string
		cl, cl512, spans, cl256, spans256 bool
	}{{"clmul-512", true, true, true, false, false}, {"clmul-512-masks", true, true, false, false, false},
		{"clmul-256", true, false, false, true, true}, {"clmul-256-scalar-spans", true, false, false, true, false},
		{"clmul-128-avx2-spans", true, false, false, false, true},
		{"clmul-128", true, false, false, false, false}, {"tables", false, false, false, false, false}} {
		if (r.cl && !hasCLMUL) || (r.cl512 && !hasCLMUL512) || (r.spans && !hasSpans512) ||
			(r.cl256 && !hasCLMUL256) || (r.spans256 && !hasSpans256) {
			continue
		}
		useCLMUL, useCLMUL512, useSpans512, useCLMUL256, useSpans256 = r.cl, r.cl512, r.spans, r.cl256, r.spans256
		e, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if (e.fast.cl != nil) != (r.cl && o.K <= maxCLMULK) {
			t.Fatalf("%v: route %s not taken", o, r.name)
		}
		names, es = append(names, r.name), append(es, e)
	}
	return names, es
}

var clFuzzOptions = []Options{{}, {K: 1}, {K: 2, Wrap: true}, {K: 8, Weighting: WeightCount},
	{K: 9}, {Digits: DigitsFold, Case: CaseKeep}, {Digits: DigitsDrop, Wrap: true}, {Unit: UnitWord, Case: CaseFold}}

// FuzzCLRoute checks the carry-less route (with and without AVX-512)
// against the table route on arbitrary bytes, for option sets covering
// every K the route takes and one it leaves to the tables. Run with
//
//	go test ./feature -run '^$' -fuzz FuzzCLRoute -fuzztime 60s
func FuzzCLRoute(f *testing.F) {
	for _, s := range []string{"", "a", "Hello, World!", "x_1 2024 Merchantability\x00\x7f", strings.Repeat("ab ", 30),
		"a bb ccc dddd eeeee ffffff ggggggg hhhhhhhh iiiiiiiii jjjjjjjjjjjjjjj kkkkkkkkkkkkkkkk lllllllllllllllll",
		"<p>Q 9 Z0 _x_</p>", "supercalifragilisticexpialidocious IS A LONG WORD",
		"近似重复文档的检测。Near-duplicate 検出します ภาษาไทย", "<title>漢字</title><h1>見出し</h1>本文の漢字 x"} {
		f.Add([]byte(s))
	}
	var names [][]string
	var routes [][]*Extractor
	for _, o := range clFuzzOptions {
		n, es := clRoutes(f, o)
		names, routes = append(names, n), append(routes, es)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for i, es := range routes {
			want := es[len(es)-1].Extract(nil, doc)
			for j, e := range es[:len(es)-1] {
				got := e.Extract(nil, doc)
				if !slices.Equal(got, want) || e.Occurrences() != es[len(es)-1].Occurrences() {
					t.Fatalf("%v %q: %s route %v (%d occurrences), table route %v (%d)", clFuzzOptions[i], doc,
						names[i][j], got, e.Occurrences(), want, es[len(es)-1].Occurrences())
				}
			}
		}
	})
}

// TestCLRouteWords checks the routes on words of every length from 1 to
// 40 bytes (the 8- and 16-byte limits of the loads, the masks and the
// leading 1), of every letter class, alone and in shingles.
func TestCLRouteWords(t *testing.T) {
	st := rng.New(3)
	const alpha = "aZ0_9zA"
	for _, o := range clFuzzOptions {
		names, es := clRoutes(t, o)
		for n := 1; n <= 40; n++ {
			for rep := 0; rep < 4; rep++ {
				var doc []byte
				for w := 0; w < rep*5+1; w++ {
					l := n
					if w%2 == 1 {
						l = 1 + int(st.Intn(40))
					}
					for range l {
						doc = append(doc, alpha[st.Intn(uint64(len(alpha)))])
					}
					doc = append(doc, " ,."[st.Intn(3)])
				}
				want := es[len(es)-1].Extract(nil, doc)
				for j, e := range es[:len(es)-1] {
					if got := e.Extract(nil, doc); !slices.Equal(got, want) {
						t.Fatalf("%v %q: %s route %v, table route %v", o, doc, names[j], got, want)
					}
				}
			}
		}
	}
}

// TestWordMasks checks wordMasks against its pure-Go form on every byte
// value at every position of a block, with and without digits.
func TestWordMasks(t *testing.T) {
	if !hasCLMUL512 {
		t.Skip("no AVX-512 on this CPU")
	}
	st := rng.New(4)
	for _, digits := range []uint64{0, 0x8080808080808080} {
		for v := 0; v < 256; v++ {
			text := make([]byte, 64*3)
			for i := range text {
				text[i] = byte(st.Intn(128))
			}
			text[v%len(text)] = byte(v)
			got, want := make([]uint64, 3), make([]uint64, 3)
			hg, hw := wordMasks(got, text, digits), wordMasksGo(want, text, digits)
			if hg != hw || (!hw && !slices.Equal(got, want)) { // masks are garbage with a byte >= 0x80
				t.Fatalf("digits %#x, byte %#x: %x (high %v), pure Go %x (%v)", digits, v, got, hg, want, hw)
			}
		}
	}
}

// TestSwarMasks checks the table route's masks (swarMasks: eight bytes
// at a time) against wordMasksGo (one byte at a time) on every byte value
// at every position of a block, with and without digits; it runs on every
// CPU.
func TestSwarMasks(t *testing.T) {
	st := rng.New(5)
	for _, digits := range []uint64{0, 0x8080808080808080} {
		for v := 0; v < 256; v++ {
			for at := 0; at < 64*3; at += 37 {
				text := make([]byte, 64*3)
				for i := range text {
					text[i] = byte(st.Intn(128))
				}
				text[(at+v)%len(text)] = byte(v)
				got, want := make([]uint64, 3), make([]uint64, 3)
				hg, hw := swarMasks(got, text, digits), wordMasksGo(want, text, digits)
				if hg != hw || (!hw && !slices.Equal(got, want)) {
					t.Fatalf("digits %#x, byte %#x at %d: %x (high %v), byte by byte %x (%v)", digits, v, (at+v)%len(text), got, hg, want, hw)
				}
			}
		}
	}
}

// TestSpans512 checks spans512 and spans256 against their pure-Go form,
// and spans256's folding of the text against foldASCII, for every fold a
// clRoute can have.
func TestSpans512(t *testing.T) {
	var fs []func(text []byte, st, en []int32, digits, fold uint64) (int, int, bool)
	var names []string
	if hasSpans512 {
		fs, names = append(fs, func(text []byte, st, en []int32, digits, _ uint64) (int, int, bool) {
			return spans512(text, st, en, digits)
		}), append(names, "spans512")
	}
	if hasSpans256 {
		fs, names = append(fs, spans256), append(names, "spans256")
	}
	if len(fs) == 0 {
		t.Skip("neither AVX-512 VBMI2 nor AVX2 on this CPU")
	}
	st := rng.New(8)
	const alpha = "abcXYZ09_ .,;-\\n"
	for _, digits := range []uint64{0, 0x8080808080808080} {
		for _, nb := range []int{1, 2, 5} {
			for rep := 0; rep < 50+256; rep++ {
				text := make([]byte, 64*nb)
				for i := range text {
					text[i] = alpha[st.Intn(uint64(len(alpha)))]
				}
				switch {
				case rep >= 50: // every byte value, somewhere
					text[st.Intn(uint64(len(text)))] = byte(rep - 50)
				case rep%10 == 1: // the most words a block holds
					for i := range text {
						text[i] = "a "[i%2]
					}
				case rep%10 == 2: // one word
					for i := range text {
						text[i] = 'z'
					}
				}
				for i, f := range fs {
					fold := []uint64{0, 0x20, 0x0f00, 0x0f20}[rep%4]
					gs, ge := make([]int32, len(text)+64), make([]int32, len(text)+64)
					ws, we := make([]int32, len(text)+64), make([]int32, len(text)+64)
					got := slices.Clone(text)
					a, b, h := f(got, gs, ge, digits, fold)
					c, d, h2 := spans512Go(text, ws, we, digits)
					if h != h2 || (!h && (a != c || b != d || !slices.Equal(gs[:a], ws[:c]) || !slices.Equal(ge[:b], we[:d]))) {
						t.Fatalf("%s digits %#x %q: %d %d %v %v %v, pure Go %d %d %v %v %v", names[i], digits, text, a, b, h, gs[:min(a, 40)], ge[:min(b, 40)], c, d, h2, ws[:min(c, 40)], we[:min(d, 40)])
					}
					want := slices.Clone(text)
					if names[i] == "spans256" {
						foldASCII(want, digits, fold)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s digits %#x fold %#x %q: text became %q, want %q", names[i], digits, fold, text, got, want)
					}
				}
			}
		}
	}
}

// TestDedupSet4 checks dedupSet4 (assembly, where the CPU has AVX2), its
// pure-Go form and dedupSet2 (buckets of two slots) against the one-slot
// probing of dedupSet1, on ids with repeats and zeros, and on ids crafted
// to fill one bucket and overflow into the next ones, the last bucket
// wrapping around to the first.
func TestDedupSet4(t *testing.T) {
	// The inverse of the hash's odd multiplier modulo 2^64 (Newton's
	// iteration doubles the bits that are right).
	const phi = 0x9e3779b97f4a7c15
	phiInv := uint64(phi)
	for range 6 {
		phiInv *= 2 - phi*phiInv
	}
	if phiInv*phi != 1 {
		t.Fatal("phiInv is not the inverse")
	}
	st := rng.New(5)
	var a accum
	for rep := 0; rep < 400; rep++ {
		n := int(st.Intn(3000))
		a.reset(2 * n)
		ids := make([]uint64, n)
		pool := 1 + st.Intn(uint64(n+1))
		for i := range ids {
			switch st.Intn(20) {
			case 0:
				ids[i] = 0
			case 1, 2: // a repeat
				if i > 0 {
					ids[i] = ids[st.Intn(uint64(i))]
				}
			case 3, 4, 5: // into the last bucket or the one before
				nb := uint64(len(a.keys) / 4)
				b := nb - 1 - st.Intn(2)
				h := b<<(a.shift+2) | st.Uint64()>>(64-a.shift-2)
				ids[i] = h * phiInv
			case 6, 7: // dedupSet2's last bucket (bucket2) or the one before
				mask := uint64(len(a.keys) - 2)
				b := mask - 2*st.Intn(2)
				h := st.Uint64()&^(mask<<32|1<<32) | b<<32
				if bucket2(h*phiInv, mask) != b {
					t.Fatalf("crafted id in bucket %d, not %d", bucket2(h*phiInv, mask), b)
				}
				ids[i] = h * phiInv
			default:
				ids[i] = st.Intn(pool) * 0x0123456789abcdef
			}
		}
		type out struct {
			n  int
			db []Feature
			fb []int32
		}
		run := func(f func(db []Feature, fb []int32) int) out {
			a.reset(2 * n)
			db, fb := make([]Feature, n), make([]int32, n)
			c := f(db, fb)
			return out{c, db[:c], fb[:c]}
		}
		want := run(func(db []Feature, fb []int32) int { return dedupSet1(a.keys, db, fb, ids, a.shift) })
		for _, f := range []struct {
			name string
			f    func(db []Feature, fb []int32) int
		}{
			{"dedupSet4", func(db []Feature, fb []int32) int { return dedupSet4(a.keys, db, fb, ids, a.shift+2) }},
			{"dedupSet4Go", func(db []Feature, fb []int32) int { return dedupSet4Go(a.keys, db, fb, ids, a.shift+2) }},
			{"dedupSet2", func(db []Feature, fb []int32) int { return dedupSet2(a.keys, db, fb, ids) }},
			{"dedupSet", func(db []Feature, fb []int32) int { return a.dedupSet(db, fb, ids) }},
		} {
			if f.name == "dedupSet4" && !hasDedup4 {
				continue
			}
			got := run(f.f)
			if got.n != want.n || !slices.Equal(got.db, want.db) || !slices.Equal(got.fb, want.fb) {
				t.Fatalf("rep %d, %d ids: %s gives %d features, dedupSet %d", rep, n, f.name, got.n, want.n)
			}
		}
	}
}
