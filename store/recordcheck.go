package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The write-ahead log and MANIFEST checks.
//
// After a crash Pebble replays the newest log up to the first chunk that
// does not read (a bad checksum, a zeroed header) and takes that point as
// the end of what was written before the crash (a torn write). To tell a
// torn write from damage to bytes that were synced, every chunk records
// how far the log had been synced when it was written; Pebble reads ahead
// for such a promise beyond the bad chunk, but only from the next 32 KiB
// block on. Damage in the last block of the log, which is where the newest
// commits of a small store are, would drop acknowledged commits without a
// word. checkLogTail closes that gap: it reads the newest log as Pebble
// does, and if a chunk later in the same block is intact and promises that
// the bad point had been synced, the log is damaged, and the store is
// refused with ErrCorrupt rather than opened with commits missing. The
// newest commit has no later chunk to vouch for it; but a torn write does
// not leave a chunk that one flipped bit would make valid, and bit rot
// does: such a chunk is damage too.
//
// The MANIFEST, the log of the store's versions, is read the same way by
// Pebble, and its chunks carry no sync offsets. Losing its last edit
// silently is worse than losing a commit: the tables that edit added look
// unreferenced, and Pebble deletes them as obsolete when it opens. So
// checkManifest refuses a MANIFEST with a chunk that does not read but is
// one bit from valid, or that is followed by chunks that do read (a torn
// write is the end of a file that is only appended to).
//
// The chunk format is Pebble's (record/record.go): blocks of 32 KiB;
// a chunk is checksum (4 bytes, masked CRC-32C of type and what follows),
// length (2), type (1); recyclable types (5-8) add the log number (4), and
// sync types (9-12) add the synced offset (8) after it.

const (
	walBlockSize     = 32 << 10
	walLegacyHeader  = 7
	walRecycleHeader = 11
	walSyncHeader    = 19
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// walCRC is Pebble's masked CRC-32C.
func walCRC(b []byte) uint32 {
	c := crc32.Update(0, castagnoli, b)
	return (c>>15 | c<<17) + 0xa282ead8
}

func walHeaderSize(typ byte) int {
	switch {
	case typ >= 1 && typ <= 4:
		return walLegacyHeader
	case typ >= 5 && typ <= 8:
		return walRecycleHeader
	case typ >= 9 && typ <= 12:
		return walSyncHeader
	}
	return 0
}

// newestLog returns the name and number of the newest write-ahead log in
// dir, or "" if there is none.
func newestLog(fs vfs.FS, dir string) (string, uint64, error) {
	names, err := fs.List(dir)
	if err != nil {
		return "", 0, err
	}
	best, bestNum := "", uint64(0)
	for _, name := range names {
		numText, ok := strings.CutSuffix(name, ".log")
		if !ok {
			continue
		}
		num, err := strconv.ParseUint(numText, 10, 64)
		if err != nil {
			continue
		}
		if best == "" || num > bestNum {
			best, bestNum = name, num
		}
	}
	return best, bestNum, nil
}

// checkLogTail returns an error wrapping ErrCorrupt if the newest log in
// dir is damaged inside its last readable block (see above), and nil if
// it reads to its end or ends in what may be a torn write.
func checkLogTail(fs vfs.FS, dir string) error {
	name, num, err := newestLog(fs, dir)
	if err != nil || name == "" {
		return err
	}
	f, err := fs.Open(fs.PathJoin(dir, name))
	if err != nil {
		return err
	}
	defer f.Close()
	logNum := uint32(num)
	buf := make([]byte, walBlockSize)
	for block := int64(0); ; block++ {
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return err
		}
		if n == 0 {
			return nil
		}
		blk := buf[:n]
		bad, end := walScanBlock(blk, logNum)
		if end {
			return nil
		}
		if bad >= 0 {
			at := block*walBlockSize + int64(bad)
			if walPromisedBeyond(blk[bad+1:], logNum, at) {
				return &FaultError{Dir: dir, Op: "open", File: name, Corrupt: true,
					Err: fmt.Errorf("%w: write-ahead log damaged at offset %d, before commits that were synced", ErrCorrupt, at)}
			}
			if oneBitFromValid(blk, bad) {
				return &FaultError{Dir: dir, Op: "open", File: name, Corrupt: true,
					Err: fmt.Errorf("%w: write-ahead log has a flipped bit in the record at offset %d", ErrCorrupt, at)}
			}
			return nil // a torn write, or damage Pebble's read-ahead finds
		}
		if n < walBlockSize {
			return nil
		}
	}
}

// walScanBlock reads the chunks of one block: it returns the offset of the
// first one that does not read (or -1), and whether the log ends cleanly
// in this block (an end-of-log trailer).
func walScanBlock(blk []byte, logNum uint32) (bad int, end bool) {
	i := 0
	for i+walLegacyHeader <= len(blk) {
		sum := binary.LittleEndian.Uint32(blk[i:])
		length := int(binary.LittleEndian.Uint16(blk[i+4:]))
		typ := blk[i+6]
		if sum == 0 && length == 0 && typ == 0 {
			if len(blk)-i < walSyncHeader {
				return -1, false // padding at the end of the block
			}
			return i, false // zeroes: the end of what was written, or damage
		}
		hs := walHeaderSize(typ)
		if hs == 0 || i+hs > len(blk) {
			return i, false
		}
		if hs >= walRecycleHeader {
			if n := binary.LittleEndian.Uint32(blk[i+7:]); n != logNum {
				if n == logNum+1 {
					return -1, true // the trailer Pebble writes on a clean close
				}
				return i, false // a recycled log's old contents, or damage
			}
		}
		e := i + hs + length
		if e > len(blk) || walCRC(blk[i+6:e]) != sum {
			return i, false
		}
		i = e
	}
	return -1, false
}

// walPromisedBeyond reports whether rest (the bytes of the block after a
// bad chunk at log offset at) holds an intact sync chunk of this log that
// says the log had been synced past at.
func walPromisedBeyond(rest []byte, logNum uint32, at int64) bool {
	for j := 0; j+walSyncHeader <= len(rest); j++ {
		typ := rest[j+6]
		if typ < 9 || typ > 12 || binary.LittleEndian.Uint32(rest[j+7:]) != logNum {
			continue
		}
		e := j + walSyncHeader + int(binary.LittleEndian.Uint16(rest[j+4:]))
		if e > len(rest) || walCRC(rest[j+6:e]) != binary.LittleEndian.Uint32(rest[j:]) {
			continue
		}
		if int64(binary.LittleEndian.Uint64(rest[j+11:])) > at {
			return true
		}
	}
	return false
}

// checkManifest returns an error wrapping ErrCorrupt if the store's
// current MANIFEST (named by manifest; "" for none) has a chunk that does
// not read and is either one bit from valid or followed by chunks that
// read (see above).
func checkManifest(fs vfs.FS, dir, manifest string) error {
	if manifest == "" {
		return nil
	}
	f, err := fs.Open(manifest)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	for block := 0; block < len(data); block += walBlockSize {
		blk := data[block:min(len(data), block+walBlockSize)]
		bad, end := walScanBlock(blk, 0)
		if end || bad < 0 {
			continue
		}
		damaged := oneBitFromValid(blk, bad)
		for j := block + bad + 1; !damaged && j+walLegacyHeader <= len(data); j++ {
			b := data[j-j%walBlockSize : min(len(data), j-j%walBlockSize+walBlockSize)]
			if _, ok := chunkAt(b, j%walBlockSize); ok {
				damaged = true
			}
		}
		if damaged {
			return &FaultError{Dir: dir, Op: "open", File: fs.PathBase(manifest), Corrupt: true,
				Err: fmt.Errorf("%w: MANIFEST damaged at offset %d", ErrCorrupt, block+bad)}
		}
		return nil // a torn write at the end
	}
	return nil
}

// chunkAt returns the end of the chunk at blk[i:] and whether it reads
// (its checksum matches); the log number is not checked.
func chunkAt(blk []byte, i int) (end int, ok bool) {
	if i+walLegacyHeader > len(blk) {
		return 0, false
	}
	length := int(binary.LittleEndian.Uint16(blk[i+4:]))
	hs := walHeaderSize(blk[i+6])
	if hs == 0 || i+hs+length > len(blk) {
		return 0, false
	}
	end = i + hs + length
	return end, walCRC(blk[i+6:end]) == binary.LittleEndian.Uint32(blk[i:])
}

// oneBitFromValid reports whether the chunk at blk[i:], which does not
// read, would read with one bit flipped: in its checksum, its length, or
// the bytes the checksum covers (type, log number, sync offset, payload).
func oneBitFromValid(blk []byte, i int) bool {
	if i+walLegacyHeader > len(blk) {
		return false
	}
	sum := binary.LittleEndian.Uint32(blk[i:])
	length := binary.LittleEndian.Uint16(blk[i+4:])
	// The length: each of its 16 bits.
	for b := range 16 {
		l := int(length ^ 1<<b)
		if hs := walHeaderSize(blk[i+6]); hs > 0 && i+hs+l <= len(blk) && walCRC(blk[i+6:i+hs+l]) == sum {
			return true
		}
	}
	// The covered bytes, with the length as written (a flipped type byte
	// changes the header size, so each header size is tried).
	for _, hs := range [...]int{walLegacyHeader, walRecycleHeader, walSyncHeader} {
		end := i + hs + int(length)
		if end > len(blk) {
			continue
		}
		covered := blk[i+6 : end]
		if bits.OnesCount32(walCRC(covered)^sum) == 1 {
			return true // the checksum itself
		}
		if oneFlipMatches(covered, sum) {
			return true
		}
	}
	return false
}

// oneFlipMatches reports whether flipping one bit of b makes its masked
// CRC-32C equal sum. CRC is affine in its input: flipping bit j of the
// byte k places from the end changes the raw register by a syndrome that
// depends only on j and k, so all 8·len(b) flips are tried in O(len(b)).
func oneFlipMatches(b []byte, sum uint32) bool {
	v := sum - 0xa282ead8
	want := v<<15 | v>>17 // unmask
	delta := crc32.Update(0, castagnoli, b) ^ want
	if delta == 0 {
		return false
	}
	var syn [8]uint32
	for j := range syn {
		syn[j] = castagnoli[1<<j] // the flip in the last byte
	}
	for range b {
		for j := range syn {
			if syn[j] == delta {
				return true
			}
			syn[j] = castagnoli[byte(syn[j])] ^ syn[j]>>8 // one more byte after the flip
		}
	}
	return false
}
