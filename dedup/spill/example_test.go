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

func ExampleRadixSort() {
	recs := []byte{3, 1, 0, 9, 2, 5, 0, 1}
	spill.RadixSort(recs, make([]byte, len(recs)), 2)
	fmt.Println(recs)
	// Output: [0 1 0 9 2 5 3 1]
}

func ExampleCreate() {
	dir, err := os.MkdirTemp("", "spill")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Two sorted run files of 4-byte records, written atomically, merged.
	for i, recs := range [][]byte{{0, 0, 0, 1, 0, 0, 0, 4}, {0, 0, 0, 2, 0, 0, 0, 3}} {
		w, err := spill.Create(nil, fmt.Sprintf("%s/%d.run", dir, i), 4)
		if err != nil {
			log.Fatal(err)
		}
		if err := w.Write(recs); err != nil {
			log.Fatal(err)
		}
		if _, err := w.Commit(); err != nil {
			log.Fatal(err)
		}
	}
	m, err := spill.Merge(nil, 4, dir+"/0.run", dir+"/1.run")
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	for r, ok := m.Next(); ok; r, ok = m.Next() {
		fmt.Print(binary.BigEndian.Uint32(r), " ")
	}
	fmt.Println(m.Err())
	// Output: 1 2 3 4 <nil>
}
