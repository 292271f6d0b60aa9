package store

// Flush flushes the memtable to a table in L0, so that tests can lay out
// levels (for example to make a compaction have work).
func (s *Pebble) Flush() error {
	if err := s.usable(); err != nil {
		return err
	}
	return s.db.Flush()
}
