package spill_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"os"

	"github.com/neardup/neardup/dedup/spill"
)

func Example() {
	dir, err := os.MkdirTemp("", "spill")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// (band key, document) records, big-endian so that bytes sort as numbers;
	// a budget of 64 records forces runs on disk.
	s, err := spill.New(spill.Config{Dir: dir, Width: 12, Budget: 64 * 12})
	if err != nil {
		log.Fatal(err)
	}
	var rec [12]byte
	for doc := uint32(0); doc < 1000; doc++ {
		binary.BigEndian.PutUint64(rec[:8], uint64(doc%7))
		binary.BigEndian.PutUint32(rec[8:], doc)
		if err := s.Add(rec[:]); err != nil {
			log.Fatal(err)
		}
	}
	m, err := s.Sort()
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	first := map[uint64]uint32{}
	for r, ok := m.Next(); ok; r, ok = m.Next() {
		key := binary.BigEndian.Uint64(r[:8])
		if _, seen := first[key]; !seen {
			first[key] = binary.BigEndian.Uint32(r[8:])
		}
	}
	if err := m.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(s.Runs()) > 1, first[3], first[6])
	// Output: true 3 6
}
