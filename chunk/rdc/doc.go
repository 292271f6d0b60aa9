// Package rdc provides remote differential sync of a directory tree: a
// read-only HTTP server of a tree (Server) and a receiver (Pull) that makes
// a local directory equal to it while sending over the wire only what the
// receiver cannot find in its own files, after Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book) section 6.2 ("File
// systems: winnowing and friends"), which describes Teodosiu et al.'s
// Remote Differential Compression (RDC).
//
// The server cuts every file into winnowed chunks (package chunk) and keeps
// its recursive signature: chunk hashes grouped again by winnowing into a
// tree whose root is a checksum of the whole file. The receiver first gets
// a manifest of the tree: every directory, symbolic link and file with its
// mode, size, signature root and a similarity sketch of its chunks (package
// filesim, the book's 12 samples of 6 bits). A file whose root the receiver
// already holds anywhere in its tree is copied locally; for the others the
// receiver picks sources among its own files, the file of the same path
// and the files whose sketches agree most with the new one (so moved and
// renamed files lend their chunks), and asks for the signature recursively,
// as the book puts it: the children of the root first, then the children of
// every node it does not hold, a level per round trip, all files at once.
// Hashes on the wire are cut to 32 bits, enough to tell apart the few
// hundred chunks of a file's sources; a false match is caught when the file
// is rebuilt (its root must equal the manifest's) and the file is then
// fetched whole. The missing chunks come in zstd streams
// (github.com/klauspost/compress), each chunk checked against its hash as
// it arrives (a corrupted chunk is fetched again). Each request of chunks
// also names the stretches of the same files that the receiver rebuilds
// from its own files, and both sides use their bytes as the stream's zstd
// dictionary: a changed chunk is coded against the unchanged rest of its
// file though the sender never holds the receiver's files (a checksum of
// the dictionary lets the server refuse one the receiver got wrong, and
// the batch is then fetched without). Every file is
// written to a temporary file beside its place, verified against the
// server's signature root, and renamed into place: a reader sees the old
// file or the new one, never a mixture, and a killed pull run again skips
// every file already in place.
//
// Everything the receiver writes goes through an os.Root opened on the
// destination, so no name from the server (nor a symbolic link met on the
// way) can reach outside it; names are checked before use and symbolic
// links whose targets leave the tree are refused. The server listens on
// loopback unless given a bearer token, beyond loopback only with TLS (or
// Insecure behind a TLS proxy), and bounds every request. This package is
// not a two-way synchronizer and does not preserve owners, times or hard
// links.
package rdc
