package rabin_test

import (
	"encoding/binary"
	"fmt"

	"github.com/neardup/neardup/rabin"
)

func Example() {
	t := rabin.New(rabin.DefaultPoly)
	fmt.Printf("%#016x\n", t.Hash([]byte("The quick brown fox jumps over the lazy dog")))
	// Output: 0x8288747f25d635aa
}

func ExamplePoly() {
	// Bit i holds the coefficient of x^(63-i); the x^64 term is implicit.
	p := rabin.Poly(0xd800000000000000)
	fmt.Println(p)
	fmt.Println(rabin.IsPrimitive(p))
	// Output:
	// x^64 + x^4 + x^3 + x + 1
	// true
}

func ExamplePoly_String() {
	fmt.Println(rabin.Poly(0x8000000000000001))
	// Output: x^64 + x^63 + 1
}

func ExampleRandomPrimitive() {
	p := rabin.RandomPrimitive(42)
	fmt.Printf("%#016x %v\n", uint64(p), rabin.IsPrimitive(p))
	fmt.Println(rabin.RandomPrimitive(0) == rabin.DefaultPoly)
	// Output:
	// 0xe3bc17ce815f7c35 true
	// true
}

func ExampleIsPrimitive() {
	fmt.Println(rabin.IsPrimitive(rabin.DefaultPoly))
	fmt.Println(rabin.IsPrimitive(0x8000000000000000)) // x^64 + 1 = (x+1)^64
	// Irreducible, but x has order dividing (2^64-1)/3.
	fmt.Println(rabin.IsPrimitive(0xed4ddc8f3a337d05))
	// Output:
	// true
	// false
	// false
}

func ExampleIsIrreducible() {
	fmt.Println(rabin.IsIrreducible(0xed4ddc8f3a337d05))
	fmt.Println(rabin.IsIrreducible(0x8000000000000001)) // a trinomial: reducible (Swan)
	// Output:
	// true
	// false
}

func ExampleNew() {
	t := rabin.New(rabin.RandomPrimitive(7)) // share t between goroutines freely
	fmt.Println(t.Poly() == rabin.RandomPrimitive(7))
	// Output: true
}

func ExampleTable_Poly() {
	t := rabin.New(rabin.DefaultPoly)
	fmt.Printf("%#016x\n", uint64(t.Poly()))
	// Output: 0xbb8fd845e4f25dff
}

func ExampleTable_Hash() {
	t := rabin.New(rabin.DefaultPoly)
	fmt.Printf("%#016x\n", t.Hash([]byte("A")))
	fmt.Println(t.Hash(nil) == uint64(rabin.DefaultPoly)) // the empty string
	// Output:
	// 0xe41d84de44fc482a
	// true
}

func ExampleTable_Extend() {
	t := rabin.New(rabin.DefaultPoly)
	fp := t.Hash([]byte("The quick brown "))
	fp = t.Extend(fp, []byte("fox jumps over the lazy dog"))
	fmt.Println(fp == t.Hash([]byte("The quick brown fox jumps over the lazy dog")))
	// Output: true
}

func ExampleTable_HashUint64() {
	t := rabin.New(rabin.DefaultPoly)
	x := uint64(0x0123456789abcdef)
	le := binary.LittleEndian.AppendUint64(nil, x)
	fmt.Printf("%#016x %v\n", t.HashUint64(x), t.HashUint64(x) == t.Hash(le))
	// Output: 0xa8b9a8109df6c2b7 true
}

func ExampleTable_ExtendUint64() {
	t := rabin.New(rabin.DefaultPoly)
	fp := t.Hash(nil)
	for _, w := range []uint64{1, 2, 3} {
		fp = t.ExtendUint64(fp, w)
	}
	var buf []byte
	for _, w := range []uint64{1, 2, 3} {
		buf = binary.LittleEndian.AppendUint64(buf, w)
	}
	fmt.Println(fp == t.Hash(buf))
	// Output: true
}

func ExampleTable_Concat() {
	t := rabin.New(rabin.DefaultPoly)
	a, b := []byte("near"), []byte("duplicate")
	fab := t.Concat(t.Hash(a), t.Hash(b), len(b))
	fmt.Println(fab == t.Hash([]byte("nearduplicate")))
	// Output: true
}

func ExampleWordWindow() {
	// Fingerprint 3-unit shingles of a sequence of word fingerprints.
	t := rabin.New(rabin.DefaultPoly)
	words := rabin.New(rabin.RandomPrimitive(1)) // a second polynomial for the words
	w := rabin.NewWordWindow(t, 3)
	for i, word := range []string{"a", "rose", "is", "a", "rose", "is", "a"} {
		fp := w.Roll(words.Hash([]byte(word)))
		if i >= 2 {
			fmt.Printf("%#016x\n", fp)
		}
	}
	// Output:
	// 0x1f19990db280a6d4
	// 0xb30e8fcd1feb9823
	// 0xcf96a7a8beabf71d
	// 0x1f19990db280a6d4
	// 0xb30e8fcd1feb9823
}

func ExampleNewWordWindow() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewWordWindow(t, 2)
	w.Roll(10)
	w.Roll(20)
	fp := w.Roll(30) // units 20, 30
	fmt.Println(fp == t.ExtendUint64(t.HashUint64(20), 30))
	// Output: true
}

func ExampleWordWindow_Roll() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewWordWindow(t, 4)
	fp := w.Roll(7) // fewer than 4 units so far: the fingerprint of those
	fmt.Println(fp == t.HashUint64(7))
	// Output: true
}

func ExampleWordWindow_Slide() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewWordWindow(t, 2)
	full := t.ExtendUint64(t.HashUint64(1), 2) // window holds 1, 2
	fmt.Println(w.Slide(full, 1, 3) == t.ExtendUint64(t.HashUint64(2), 3))
	// Output: true
}

func ExampleWordWindow_Reset() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewWordWindow(t, 2)
	w.Roll(1)
	w.Reset()
	fmt.Println(w.Roll(2) == t.HashUint64(2))
	// Output: true
}

func ExampleWordWindow_Span() {
	w := rabin.NewWordWindow(rabin.New(rabin.DefaultPoly), 5)
	fmt.Println(w.Span())
	// Output: 5
}

func ExampleWordWindow_Sum64() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewWordWindow(t, 2)
	fmt.Println(w.Sum64() == t.Hash(nil))
	// Output: true
}

func ExampleByteWindow() {
	// Content-defined cut points: positions where the 48-byte window's
	// fingerprint has its low 4 bits zero.
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewByteWindow(t, 48)
	data := []byte("Rabin fingerprints over a sliding window find the same cut points in shifted copies of the same content. ")
	var cuts []int
	for i, c := range data {
		if w.Roll(c)&15 == 0 && i >= 47 {
			cuts = append(cuts, i+1)
		}
	}
	fmt.Println(cuts)
	// Output: [58 68 88 89 93 103]
}

func ExampleNewByteWindow() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewByteWindow(t, 3)
	var fp uint64
	for _, c := range []byte("abcdef") {
		fp = w.Roll(c)
	}
	fmt.Println(fp == t.Hash([]byte("def")))
	// Output: true
}

func ExampleByteWindow_Roll() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewByteWindow(t, 48)
	w.Roll('h')
	fmt.Println(w.Roll('i') == t.Hash([]byte("hi")))
	// Output: true
}

func ExampleByteWindow_Slide() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewByteWindow(t, 3)
	buf := []byte("abcd")
	fp := t.Hash(buf[0:3])
	fmt.Println(w.Slide(fp, buf[0], buf[3]) == t.Hash(buf[1:4]))
	// Output: true
}

func ExampleByteWindow_AppendRoll() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewByteWindow(t, 4)
	fps := w.AppendRoll(nil, []byte("abcdef"))
	fmt.Println(len(fps), fps[5] == t.Hash([]byte("cdef")), fps[1] == t.Hash([]byte("ab")))
	// Output: 6 true true
}

func ExampleByteWindow_Reset() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewByteWindow(t, 4)
	w.Roll('x')
	w.Reset()
	fmt.Println(w.Roll('y') == t.Hash([]byte("y")))
	// Output: true
}

func ExampleByteWindow_Span() {
	w := rabin.NewByteWindow(rabin.New(rabin.DefaultPoly), 48)
	fmt.Println(w.Span())
	// Output: 48
}

func ExampleByteWindow_Sum64() {
	t := rabin.New(rabin.DefaultPoly)
	w := rabin.NewByteWindow(t, 4)
	w.Roll('z')
	fmt.Println(w.Sum64() == t.Hash([]byte("z")))
	// Output: true
}

func ExampleHash2() {
	a, b := rabin.New(rabin.DefaultPoly), rabin.New(rabin.RandomPrimitive(1))
	body := []byte("The quick brown fox jumps over the lazy dog")
	f1, f2 := rabin.Hash2(a, b, body)
	fmt.Println(f1 == a.Hash(body), f2 == b.Hash(body))
	// Output: true true
}
