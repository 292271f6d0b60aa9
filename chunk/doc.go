// Package chunk provides content-defined chunking by winnowing, strong
// per-chunk hashes and recursive (Merkle-style) file signatures, after
// Manasse, "On the Efficient Determination of Most Near Neighbors" (the book)
// section 6.2 ("File systems: winnowing and friends") and Remote Differential
// Compression (Teodosiu et al.).
//
// A hash H(e) is computed for every boundary e of the input from the 64
// bytes just before it. A chunk that starts at c ends at the rightmost
// minimum of H over the outer window of boundaries [c+Min, c+Max]; the
// minimum is kept with the ring buffer of book 6.2 (a monotone deque of
// positions increasing in both location and hash, at most about three
// comparisons per byte, amortized), and the entries to the right of a cut are
// already the candidates for the next one. On random data chunk lengths are
// spread almost uniformly over [Min, Max], with a mean a few percent above
// (Min+Max)/2 (the boundaries right of a cut are known to exceed its
// minimum): no chunk is exceptionally long or short, and the length's
// standard deviation is about (Max-Min)/sqrt(12). On repetitive data (runs of zeros) every H ties and the rightmost
// choice gives chunks of exactly Max bytes, identical from run to run, so
// they deduplicate. H is composed as in the accelerated variant of book 6.2:
// its high bits are the "lead", the top bits of a gear hash (one table
// lookup, a shift and an add per byte, covering the last 64 bytes), and its
// low bits are the top bits of a long hash of the last 48 bytes, a
// polynomial hash modulo 2^64 with a random odd base finished by rng.Mix64.
// The book's lead is a byte; here it is 8 to 16 bits, fitted to the window
// so that a window holds about 8 to 16 zero-lead positions on random data
// (9 bits for the default 4 KiB window): a wider lead makes the long hash
// rarer, while a window of 2048 boundaries or more still lacks a candidate
// with probability below e^-8 (narrower windows keep the byte: 1 in 55 at
// the book's 1 KiB window). The Plain
// mode computes both hashes at every byte (the long one rolling, two
// multiplications per byte) and winnows all of them; the default Fast mode
// computes only the lead at every byte and evaluates the long hash only
// where the lead is zero, falling back to an exact evaluation of the window
// when it holds no such position (low-entropy data); the fallback evaluates
// the long hash only where the lead ties the smallest seen, and crosses runs
// of a repeated byte (whose hash is constant) in one step. Both modes give
// identical cut points (tested) and golden vectors in testdata pin them.
//
// The long hash is not the rabin package's GF(2) fingerprint: the fast mode
// evaluates the long hash from scratch at each candidate, and a polynomial
// hash over Z/2^64 does that with 48 independent multiply-adds (about 15 ns)
// where a table-driven GF(2) fingerprint takes a dependent chain of 48 table
// steps; it still rolls in O(1) for the plain mode. Winnowing only needs
// hash values that are a function of the window, uniform on random data and
// distinct for distinct windows except with negligible probability, which a
// random odd base and the bijective Mix64 finisher provide for
// non-adversarial data.
//
// Each chunk gets a strong hash (BLAKE3-256, github.com/zeebo/blake3: 2.5
// GB/s on 8 KiB chunks on the reference machine against 1.7 GB/s for the
// standard library's SHA-256 with SHA-NI, and far more where SHA-NI is
// absent), and a file's chunk list is cut again by winnowing over the chunk
// hashes into a tree whose root identifies the whole file (see Signature).
//
// This package is not a deduplicating store, not a compressor and not
// secure against an adversary who chooses data to steer cut points: the
// hashes are keyed by fixed public seeds.
package chunk
