package store

// Flush flushes the memtable to a table in L0, so that tests can lay out
// levels (for example to make a compaction have work).
func (s *Pebble) Flush() error {
	if err := s.usable(); err != nil {
		return err
	}
	return s.db.Flush()
}

// SetBulkTableBytes sets the size at which a bulk starts a new table and
// returns a function that restores it.
func SetBulkTableBytes(n uint64) func() {
	old := bulkTableBytes
	bulkTableBytes = n
	return func() { bulkTableBytes = old }
}

// SetBulkParts sets the number of parts a bulk cuts its postings into and
// returns a function that restores it.
func SetBulkParts(n int) func() {
	old := bulkParts
	bulkParts = func() int { return n }
	return func() { bulkParts = old }
}

// SetBulkMinSegment sets the least size of a bulk run's values segment
// and returns a function that restores it.
func SetBulkMinSegment(n int64) func() {
	old := bulkMinSegment
	bulkMinSegment = n
	return func() { bulkMinSegment = old }
}
