package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/neardup/neardup/internal/rng"
)

// filterKeys returns n keys of a kind: posting keys ('p', key, id) with
// runs of a shared prefix (the filter takes the prefix, so neighbours
// repeat a hash), or random keys of 0 to 20 bytes, bytes from 0x80 up
// included (the hash takes the trailing bytes as signed).
func filterKeys(st *rng.Stream, kind string, n int) [][]byte {
	keys := make([][]byte, n)
	var prefix [postingPrefixLen]byte
	for i := range keys {
		switch kind {
		case "postings":
			if i == 0 || st.Uint64()%8 != 0 {
				prefix[0] = kindPosting
				binary.BigEndian.PutUint64(prefix[1:], st.Uint64())
			}
			keys[i] = bytes.Clone(prefix[:])
		default:
			k := make([]byte, st.Uint64()%21)
			for j := range k {
				k[j] = byte(st.Uint64())
			}
			keys[i] = k
		}
	}
	return keys
}

// TestBlockedFilter checks that blockedFilter writes the bytes of bloom's
// writer, for filters of one line, of one region and of many (whose bits
// are set region by region), at several bits per key (up to bloom's cap
// of 30 probes), appended to a buffer that holds bytes already, and from
// a writer used again after Finish.
func TestBlockedFilter(t *testing.T) {
	st := rng.New(27)
	sizes := []int{0, 1, 2, 3, 51, 52, 1000, 200_000, 210_000, 700_001}
	if testing.Short() {
		sizes = sizes[:8]
	}
	for _, bitsPerKey := range []int{1, 7, 10, 20, 50} {
		for _, kind := range []string{"postings", "random"} {
			for _, n := range sizes {
				t.Run(fmt.Sprintf("%s/bits%d/n%d", kind, bitsPerKey, n), func(t *testing.T) {
					keys := filterKeys(&st, kind, n)
					want := bloom.FilterPolicy(bitsPerKey).NewWriter(pebble.TableFilter)
					f := newBlockedFilter(bitsPerKey)
					got := f.NewWriter(pebble.TableFilter)
					for round := range 2 {
						for _, k := range keys {
							want.AddKey(k)
							got.AddKey(k)
						}
						prefix := []byte("prefix")
						w, g := want.Finish(bytes.Clone(prefix)), got.Finish(bytes.Clone(prefix))
						if !bytes.Equal(w, g) {
							t.Fatalf("round %d: %d bytes differ from bloom's %d (first at %d)", round, len(g), len(w), firstDiff(w, g))
						}
						for _, k := range keys {
							if !f.MayContain(pebble.TableFilter, g[len(prefix):], k) {
								t.Fatalf("key %x added but not in the filter", k)
							}
						}
						keys = keys[:len(keys)/2]
					}
				})
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestMod32 checks the remainder by multiplication against %, at the
// ends of the 32-bit range and at random.
func TestMod32(t *testing.T) {
	st := rng.New(5)
	ds := []uint32{1, 2, 3, 7, 4095, 4097, 1 << 31, 1<<31 + 1, 1<<32 - 1}
	for range 200 {
		ds = append(ds, uint32(st.Uint64()), uint32(st.Uint64()>>40)|1)
	}
	for _, d := range ds {
		m := newMod32(d)
		xs := []uint32{0, 1, d - 1, d, d + 1, 1<<32 - 1, 1<<32 - 2}
		for range 1000 {
			xs = append(xs, uint32(st.Uint64()))
		}
		for _, x := range xs {
			if got, want := m.of(x), x%d; got != want {
				t.Fatalf("%d mod %d: %d, want %d", x, d, got, want)
			}
		}
	}
}

// BenchmarkTableFilter times making the filter of a 64 MiB table of
// postings (about 6M keys, a 7.5 MB filter at 10 bits per key): adding
// the keys and finishing, with bloom's writer and with blockedFilter.
func BenchmarkTableFilter(b *testing.B) {
	const n = 6 << 20
	st := rng.New(1)
	keys := filterKeys(&st, "postings", n)
	run := func(b *testing.B, p pebble.FilterPolicy) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			w := p.NewWriter(pebble.TableFilter)
			for _, k := range keys {
				w.AddKey(k)
			}
			buf = w.Finish(buf[:0])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
	}
	b.Run("bloom", func(b *testing.B) { run(b, bloom.FilterPolicy(10)) })
	b.Run("blocked", func(b *testing.B) { run(b, newBlockedFilter(10)) })
}
