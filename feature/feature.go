package feature

// Feature is one feature of a document: a 64-bit fingerprint (of a shingle,
// a word or a character n-gram) and a non-negative weight. Unweighted
// samplers ignore Weight; a set has every Weight equal to 1.
type Feature struct {
	ID     uint64
	Weight float64
}
