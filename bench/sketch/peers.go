package main

import (
	"encoding/binary"

	minhash "github.com/dgryski/go-minhash"
	minhashlsh "github.com/ekzhu/minhash-lsh"

	"github.com/neardup/neardup/internal/rng"
)

// peerHashes returns the two hash functions given to dgryski/go-minhash: a
// SplitMix64-style mix (rng.Hash) of the 8-byte little-endian id under two
// keys. It is about as fast as a 64-bit hash of an 8-byte key can be, so the
// peer is timed at its best.
func peerHashes(seed uint64) (minhash.Hash64, minhash.Hash64) {
	k1, k2 := rng.Key(seed, 0x6831), rng.Key(seed, 0x6832)
	h1 := func(b []byte) uint64 { return rng.Hash(k1, binary.LittleEndian.Uint64(b)) }
	h2 := func(b []byte) uint64 { return rng.Hash(k2, binary.LittleEndian.Uint64(b)) }
	return h1, h2
}

// dgryskiMinWise sketches with go-minhash's MinWise (k hash values
// h1 + i·h2 per element, slot-wise minima) and estimates with its
// Similarity (fraction of equal slots).
func dgryskiMinWise(keys [][]byte, k int, seed uint64) *contender {
	h1, h2 := peerHashes(seed)
	sk := make([]*minhash.MinWise, len(keys))
	ct := &contender{name: "dgryski-minwise", lib: "github.com/dgryski/go-minhash", kind: "pre-extracted"}
	ct.run = func() {
		for i, kb := range keys {
			m := minhash.NewMinWise(h1, h2, k)
			for j := 0; j+8 <= len(kb); j += 8 {
				m.Push(kb[j : j+8])
			}
			sk[i] = m
		}
	}
	ct.est = func(a, b int) float64 { return sk[a].Similarity(sk[b]) }
	return ct
}

// dgryskiBottomK sketches with go-minhash's BottomK (a max-heap of the k
// smallest hashes) and estimates with its Similarity: |S(A) ∩ S(B)| / k
// over the two bottom-k sets, without first restricting to the bottom-k of
// the union — the biased estimator the book warns about (ch. 3).
func dgryskiBottomK(keys [][]byte, k int, seed uint64) *contender {
	h1, _ := peerHashes(seed)
	sk := make([]*minhash.BottomK, len(keys))
	ct := &contender{name: "dgryski-bottomk", lib: "github.com/dgryski/go-minhash", kind: "pre-extracted"}
	ct.run = func() {
		for i, kb := range keys {
			m := minhash.NewBottomK(h1, k)
			for j := 0; j+8 <= len(kb); j += 8 {
				m.Push(kb[j : j+8])
			}
			sk[i] = m
		}
	}
	ct.est = func(a, b int) float64 { return sk[a].Similarity(sk[b]) }
	return ct
}

// ekzhuMinhash sketches with minhash-lsh's Minhash (go-minhash's MinWise
// over two seeded FNV-1a hashes, fixed by the library). The library has no
// similarity function of its own (its LSH index compares signatures), so
// the estimate is the fraction of equal signature slots, the MinHash
// estimator.
func ekzhuMinhash(keys [][]byte, k int, seed uint64) *contender {
	sk := make([][]uint64, len(keys))
	ct := &contender{name: "ekzhu-minhash", lib: "github.com/ekzhu/minhash-lsh", kind: "pre-extracted"}
	ct.run = func() {
		for i, kb := range keys {
			m := minhashlsh.NewMinhash(int64(seed), k)
			for j := 0; j+8 <= len(kb); j += 8 {
				m.Push(kb[j : j+8])
			}
			sk[i] = m.Signature()
		}
	}
	ct.est = func(a, b int) float64 {
		eq := 0
		for i, v := range sk[a] {
			if v == sk[b][i] {
				eq++
			}
		}
		return float64(eq) / float64(len(sk[a]))
	}
	return ct
}
