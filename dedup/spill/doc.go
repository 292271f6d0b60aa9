// Package spill provides an external sort of fixed-width records: records
// are collected in a memory buffer, sorted there by a least-significant-byte
// radix sort, written as zstd-compressed sorted runs when the buffer reaches
// a byte budget, and read back in order by a k-way merge of the runs.
//
// It is the sort step of AltaVista's clustering (Manasse, "On the Efficient
// Determination of Most Near Neighbors", ch. 3.1): emit (supershingle,
// document) records, sort them on disk, merge, and join adjacent equal keys.
// Records compare as byte strings, so callers write their keys big-endian.
// Every file is written atomically (a temporary file, fsync, rename, fsync
// of the directory), so that a run file that exists is complete; a killed
// process leaves at most temporary files, which the next Sorter ignores.
package spill
