package feature

import (
	"encoding/binary"
	"slices"
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
				if hasCLMUL512 {
					n4 := nw &^ 3
					clear(got)
					lg := clWords4(got[:n4], buf, a.st[:n4], a.en[:n4], a.cl.c)
					if lw := clWordsGo(want[:n4], buf, a.st[:n4], a.en[:n4], a.cl.c); lg != lw {
						t.Fatalf("%v n %d: clWords4 longest %d, clWordsGo %d", o, n, lg, lw)
					}
					for j := range got[:n4] {
						if a.en[j]-a.st[j] < maxShortWord && got[j] != want[j] {
							t.Fatalf("%v n %d: clWords4 word %d (%q) = %#x, clWordsGo %#x", o, n, j, doc[a.st[j]:a.en[j]], got[j], want[j])
						}
					}
				}
			}
		}
	}
	for k := 1; k <= maxCLMULK; k++ {
		_, _, c := clTables(t, uint64(k), k)
		for _, n := range []int{0, 1, 2, 7, 8, 9, 16, 100} {
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
