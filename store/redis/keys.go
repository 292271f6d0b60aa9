package redis

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Key layout under prefix P (binary parts big-endian):
//
//	P:p:<key 8 bytes>      set of ids (signed decimal) posted under an lsh key
//	P:d:<bucket 2 bytes>   hash: field <id 8 bytes> → document record;
//	                       bucket = id >> 52 (4,096 buckets)
//	P:m                    hash: field name → metadata value
//	P:j                    stream: the journal of posting writes, one
//	                       entry per batch (store.Journaled)
//	P:jr                   hash: journal follower → "<position> <unix ms>"
//
// Binary parts may contain '{' or '}' and so change which cluster slot a
// key falls in, never which key it is; no command here names two keys, so
// slots matter only for spreading the load and for oneSlot.
const (
	bucketBits = 12
	numBuckets = 1 << bucketBits
)

type keyspace struct {
	prefix string
}

// checkPrefix accepts letters, digits and "_.-/:{}" (no glob characters,
// so the prefix can head a SCAN pattern as it is).
func checkPrefix(p string) error {
	if p == "" || len(p) > 200 {
		return fmt.Errorf("store/redis: prefix of %d bytes, want 1..200", len(p))
	}
	for _, c := range []byte(p) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_.-/:{}", c) >= 0:
		default:
			return fmt.Errorf("store/redis: prefix %q: character %q not allowed (letters, digits and _.-/:{} only)", p, c)
		}
	}
	return nil
}

// oneSlot reports whether the prefix holds a Redis Cluster hash tag: a
// '{' followed later in the prefix by a '}' with something in between.
// Every key then hashes to the slot of that tag.
func (k keyspace) oneSlot() bool {
	i := strings.IndexByte(k.prefix, '{')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(k.prefix[i+1:], '}')
	return j > 0
}

func (k keyspace) journal() string { return k.prefix + ":j" }

func (k keyspace) readers() string { return k.prefix + ":jr" }

func (k keyspace) posting(dst []byte, key uint64) []byte {
	dst = append(dst, k.prefix...)
	dst = append(dst, ":p:"...)
	return binary.BigEndian.AppendUint64(dst, key)
}

// postingPattern is the SCAN pattern of the posting keys.
func (k keyspace) postingPattern() string { return k.prefix + ":p:*" }

// parsePosting returns the lsh key of a posting key name, and false for a
// name of another shape (another index whose prefix extends ours).
func (k keyspace) parsePosting(name string) (uint64, bool) {
	head := len(k.prefix) + 3
	if len(name) != head+8 || name[:len(k.prefix)] != k.prefix || name[len(k.prefix):head] != ":p:" {
		return 0, false
	}
	return binary.BigEndian.Uint64([]byte(name[head:])), true
}

func (k keyspace) bucket(b uint16) string {
	var buf [2]byte
	binary.BigEndian.PutUint16(buf[:], b)
	return k.prefix + ":d:" + string(buf[:])
}

func (k keyspace) docBucket(id uint64) string { return k.bucket(uint16(id >> (64 - bucketBits))) }

func (k keyspace) meta() string { return k.prefix + ":m" }

func docField(id uint64) string {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], id)
	return string(buf[:])
}

func parseDocField(f string) (uint64, bool) {
	if len(f) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64([]byte(f)), true
}
