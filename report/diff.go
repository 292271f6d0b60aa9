package report

import (
	"strings"
	"unicode"
)

// op is the kind of an edit.
type op uint8

const (
	opEqual  op = iota // a[A0:A1] equals b[B0:B1]
	opChange           // a[A0:A1] is replaced by b[B0:B1] (either may be empty)
)

// edit is one run of a word-level edit script: an equal run, or a change
// that deletes a[A0:A1] and inserts b[B0:B1].
type edit struct {
	Op             op
	A0, A1, B0, B1 int
}

// differ computes a minimal word-level edit script with Myers' O((N+M)D)
// algorithm in linear space (E. Myers, "An O(ND) Difference Algorithm and
// Its Variations", 1986, section 4b: the middle snake, recursively). It
// marks the elements of a and b that are not in the longest common
// subsequence; the script is read off the marks. The zero value is ready to
// use; it is not safe for concurrent use and reuses its buffers.
type differ struct {
	a, b       []int32 // interned tokens
	delA, insB []bool
	v1, v2     []int
}

// diff returns the edit script turning a into b. Cost: O((N+M)·D) time
// for N and M tokens and D differing tokens, O(N+M) space.
func (d *differ) diff(a, b []int32) []edit {
	d.a, d.b = a, b
	d.delA = resetBools(d.delA, len(a))
	d.insB = resetBools(d.insB, len(b))
	d.compare(0, len(a), 0, len(b))
	var out []edit
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		i0, j0 := i, j
		for i < len(a) && j < len(b) && !d.delA[i] && !d.insB[j] {
			i++
			j++
		}
		if i > i0 {
			out = append(out, edit{opEqual, i0, i, j0, j})
		}
		i0, j0 = i, j
		for i < len(a) && d.delA[i] {
			i++
		}
		for j < len(b) && d.insB[j] {
			j++
		}
		if i > i0 || j > j0 {
			out = append(out, edit{opChange, i0, i, j0, j})
		}
	}
	return out
}

func resetBools(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// compare marks the differences between a[aLo:aHi] and b[bLo:bHi].
func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	a, b := d.a, d.b
	for aLo < aHi && bLo < bHi && a[aLo] == b[bLo] {
		aLo++
		bLo++
	}
	for aLo < aHi && bLo < bHi && a[aHi-1] == b[bHi-1] {
		aHi--
		bHi--
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		return
	}
	x, y, ok := d.middle(aLo, aHi, bLo, bHi)
	if !ok {
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return
	}
	d.compare(aLo, x, bLo, y)
	d.compare(x, aHi, y, bHi)
}

// middle finds a point (x, y) on a shortest edit path through
// a[aLo:aHi] × b[bLo:bHi] by running the greedy forward and reverse
// searches until they overlap (Myers' middle snake). ok is false when the
// sequences share no element on any shortest path worth splitting (the
// caller then replaces one with the other).
func (d *differ) middle(aLo, aHi, bLo, bHi int) (x, y int, ok bool) {
	a, b := d.a[aLo:aHi], d.b[bLo:bHi]
	n, m := len(a), len(b)
	maxD := (n + m + 1) / 2
	off := maxD
	size := 2*maxD + 2
	d.v1 = resetInts(d.v1, size)
	d.v2 = resetInts(d.v2, size)
	v1, v2 := d.v1, d.v2
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for dd := 0; dd < maxD; dd++ {
		for k1 := -dd + k1start; k1 <= dd-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -dd || (k1 != dd && v1[i-1] < v1[i+1]) {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && a[x1] == b[y1] {
				x1++
				y1++
			}
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				j := off + delta - k1
				if j >= 0 && j < size && v2[j] != -1 && x1 >= n-v2[j] {
					return aLo + x1, bLo + y1, true
				}
			}
		}
		for k2 := -dd + k2start; k2 <= dd-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -dd || (k2 != dd && v2[i-1] < v2[i+1]) {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && a[n-x2-1] == b[m-y2-1] {
				x2++
				y2++
			}
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				j := off + delta - k2
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := v1[j]
					y1 := off + x1 - j
					if x1 >= n-x2 {
						return aLo + x1, bLo + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

func resetInts(s []int, n int) []int {
	if cap(s) < n {
		s = make([]int, n)
	}
	s = s[:n]
	for i := range s {
		s[i] = -1
	}
	return s
}

// words splits text into at most max whitespace-separated words (all of
// them when max <= 0) and returns them with the total number of words.
func words(text string, max int) (ws []string, total int) {
	for f := range strings.FieldsSeq(text) {
		if max <= 0 || len(ws) < max {
			ws = append(ws, f)
		}
		total++
	}
	return ws, total
}

// interner maps comparison keys of words to small integers. Words compare
// by their letters and digits, lower-cased, so "Copyright" and "copyright,"
// are the same word, as they are to the shingles; a word without letters
// or digits compares by its exact text.
type interner struct {
	ids map[string]int32
	buf []rune
}

func (in *interner) intern(dst []int32, ws []string) []int32 {
	if in.ids == nil {
		in.ids = map[string]int32{}
	}
	for _, w := range ws {
		in.buf = in.buf[:0]
		for _, r := range w {
			if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
				in.buf = append(in.buf, unicode.ToLower(r))
			}
		}
		key := w
		if len(in.buf) > 0 {
			key = "\x00" + string(in.buf)
		}
		id, ok := in.ids[key]
		if !ok {
			id = int32(len(in.ids))
			in.ids[key] = id
		}
		dst = append(dst, id)
	}
	return dst
}
