package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/neardup/neardup/identity"
)

// upgradedNote says what opening an index of an earlier release did
// (index.Index.Upgraded).
const upgradedNote = "the index was written before keyed identity fingerprints: a secret key was drawn and recorded; the documents stored before keep their public 64-bit fingerprints, which are not trusted, so their copies are found as near-duplicates (add them again to give them keyed fingerprints)"

// loadKeyFile returns the identity key in the file path (64 hex digits),
// drawing a new key and writing it there (mode 0600) when the file does
// not exist. Processes that start at the same time with one path get one
// key: the new file is linked into place only if none is there yet.
func loadKeyFile(path string) (identity.Key, error) {
	read := func() (identity.Key, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return identity.Key{}, err
		}
		k, err := identity.ParseKey(string(b))
		if err != nil || k.IsZero() {
			return identity.Key{}, fmt.Errorf("--key-file %s: not a key (64 hex digits, not all zero)", path)
		}
		return k, nil
	}
	k, err := read()
	if !errors.Is(err, os.ErrNotExist) {
		return k, err
	}
	if k, err = identity.NewKey(); err != nil {
		return k, err
	}
	err = identity.WriteKeyFile(path, k, false)
	if errors.Is(err, os.ErrExist) {
		return read() // another process made it first
	}
	if err != nil {
		return k, fmt.Errorf("--key-file: %w", err)
	}
	return k, nil
}
