package dedup

import (
	"hash/maphash"
	"math/bits"
)

// idTable is the set of the ids read so far, with where each was read
// first, so that a repeated id is rejected with the place of its first
// use. It is an open-addressing table of one word per slot, the hash's
// high 32 bits above the number of the id's entry, at most half full:
// adding an id hashes it once and probes one run of slots, where a Go map
// hashed and compared it twice (a lookup, then an insert), which took a
// tenth of the reading goroutine's time at a million documents. An id
// whose tag matches is compared in full, so a tag shared by two ids only
// costs a comparison. The zero value is empty. Not safe for concurrent
// use.
type idTable struct {
	seed  maphash.Seed
	slots []uint64 // tag<<32 | entry+1; 0 is free
	shift uint     // a tag's slot is tag >> shift
	ids   []idEntry
}

type idEntry struct {
	name string
	ref  placeRef
}

// len returns the number of ids.
func (t *idTable) len() int { return len(t.ids) }

// add adds name, read at ref, and returns false; or, when name was added
// before, returns where it was read then and true.
func (t *idTable) add(name string, ref placeRef) (first placeRef, dup bool) {
	if 2*(len(t.ids)+1) > len(t.slots) {
		t.grow()
	}
	tag := maphash.String(t.seed, name) >> 32
	mask := len(t.slots) - 1
	for s := int(tag >> t.shift); ; s = (s + 1) & mask {
		v := t.slots[s]
		if v == 0 {
			t.ids = append(t.ids, idEntry{name, ref})
			t.slots[s] = tag<<32 | uint64(len(t.ids))
			return placeRef{}, false
		}
		if v>>32 == tag {
			if e := &t.ids[uint32(v)-1]; e.name == name {
				return e.ref, true
			}
		}
	}
}

// grow doubles the slots (to 16 at first) and puts the entries back by
// their tags.
func (t *idTable) grow() {
	if t.slots == nil {
		t.seed = maphash.MakeSeed()
	}
	n := max(16, 2*len(t.slots))
	old := t.slots
	t.slots = make([]uint64, n)
	t.shift = uint(32 - bits.Len(uint(n-1)))
	mask := n - 1
	for _, v := range old {
		if v == 0 {
			continue
		}
		s := int(v >> 32 >> t.shift)
		for t.slots[s] != 0 {
			s = (s + 1) & mask
		}
		t.slots[s] = v
	}
}
