package report

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// lcsLen is the oracle: the length of a longest common subsequence by the
// O(NM) dynamic program.
func lcsLen(a, b []int32) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkScript verifies that es is a valid, minimal edit script from a to b:
// the runs tile both sequences in order, equal runs are equal, consecutive
// runs alternate, and the number of equal tokens is the LCS length (so the
// number of deletions plus insertions, N+M-2·LCS, is the minimum).
func checkScript(t *testing.T, a, b []int32, es []edit) {
	t.Helper()
	i, j, same := 0, 0, 0
	for k, e := range es {
		if e.A0 != i || e.B0 != j || e.A1 < e.A0 || e.B1 < e.B0 {
			t.Fatalf("edit %d %+v does not continue at (%d, %d)", k, e, i, j)
		}
		if k > 0 && es[k-1].Op == e.Op {
			t.Fatalf("edits %d and %d have the same op", k-1, k)
		}
		switch e.Op {
		case opEqual:
			if e.A1-e.A0 != e.B1-e.B0 || e.A1 == e.A0 || !slices.Equal(a[e.A0:e.A1], b[e.B0:e.B1]) {
				t.Fatalf("equal run %+v differs", e)
			}
			same += e.A1 - e.A0
		case opChange:
			if e.A1 == e.A0 && e.B1 == e.B0 {
				t.Fatalf("empty change %+v", e)
			}
		}
		i, j = e.A1, e.B1
	}
	if i != len(a) || j != len(b) {
		t.Fatalf("script ends at (%d, %d), want (%d, %d)", i, j, len(a), len(b))
	}
	if want := lcsLen(a, b); same != want {
		t.Fatalf("script keeps %d equal tokens, LCS is %d: not minimal\na=%v\nb=%v", same, want, a, b)
	}
}

// TestDiffExhaustive checks every pair of sequences of length <= 5 over a
// two-letter alphabet against the LCS oracle.
func TestDiffExhaustive(t *testing.T) {
	var seqs [][]int32
	for n := 0; n <= 5; n++ {
		for bits := 0; bits < 1<<n; bits++ {
			s := make([]int32, n)
			for i := range s {
				s[i] = int32(bits >> i & 1)
			}
			seqs = append(seqs, s)
		}
	}
	var d differ
	for _, a := range seqs {
		for _, b := range seqs {
			checkScript(t, a, b, d.diff(a, b))
		}
	}
}

// TestDiffRandom checks random sequences over small alphabets, and near
// copies (a few random edits of a long sequence, the case the report
// meets), against the oracle.
func TestDiffRandom(t *testing.T) {
	s := rng.New(rng.Key(1, 'd', 'i', 'f', 'f'))
	var d differ
	for iter := 0; iter < 400; iter++ {
		alpha := 2 + s.Intn(6)
		a := make([]int32, s.Intn(60))
		for i := range a {
			a[i] = int32(s.Intn(alpha))
		}
		var b []int32
		if iter%2 == 0 {
			b = make([]int32, s.Intn(60))
			for i := range b {
				b[i] = int32(s.Intn(alpha))
			}
		} else {
			b = slices.Clone(a)
			for e := s.Intn(6); e > 0; e-- {
				p := int(s.Intn(uint64(len(b) + 1)))
				switch s.Intn(3) {
				case 0:
					b = slices.Insert(b, p, int32(s.Intn(alpha+3)))
				case 1:
					if p < len(b) {
						b = slices.Delete(b, p, p+1)
					}
				default:
					if p < len(b) {
						b[p] = int32(s.Intn(alpha + 3))
					}
				}
			}
		}
		checkScript(t, a, b, d.diff(a, b))
	}
}

func TestWordsAndIntern(t *testing.T) {
	ws, n := words("  Copyright (C) 2020\tThe  Authors.\n", 3)
	if n != 5 || !slices.Equal(ws, []string{"Copyright", "(C)", "2020"}) {
		t.Fatalf("words = %q, %d", ws, n)
	}
	var in interner
	ids := in.intern(nil, []string{"Copyright", "copyright,", "(C)", "c", "--", "--", "-"})
	want := []int32{0, 0, 1, 1, 2, 2, 3}
	if !slices.Equal(ids, want) {
		t.Fatalf("intern = %v, want %v", ids, want)
	}
}
