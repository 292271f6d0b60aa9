package sketch

// ExactJaccard returns the exact Jaccard similarity |A∩B|/|A∪B| of two
// sorted sets of ids (feature ids, chunk hashes; duplicates allowed and
// ignored), the value the sketches' estimators estimate. It is the one
// exact Jaccard of neardup: the index's exact verification, compare and the
// file similarity of package chunk/filesim all call it. Two empty sets have
// similarity 1. Cost: O(|A|+|B|), no allocation.
func ExactJaccard(a, b []uint64) float64 {
	inter, union := Overlap(a, b)
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// Overlap returns the sizes of the intersection and the union of two
// sorted sets of ids (duplicates allowed and ignored), from which
// ExactJaccard is made. Cost: O(|A|+|B|), no allocation.
func Overlap(a, b []uint64) (inter, union int) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			union++
			i = skipRun(a, i)
		case i == len(a) || b[j] < a[i]:
			union++
			j = skipRun(b, j)
		default:
			inter++
			union++
			i = skipRun(a, i)
			j = skipRun(b, j)
		}
	}
	return inter, union
}

func skipRun(s []uint64, i int) int {
	v := s[i]
	for i < len(s) && s[i] == v {
		i++
	}
	return i
}
