package identity_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/identity"
)

func ExampleNewKey() {
	k, err := identity.NewKey() // a new secret, from crypto/rand
	if err != nil {
		panic(err)
	}
	back, _ := identity.ParseKey(k.String()) // as recorded: 64 hex digits
	fmt.Println(len(k.String()), back == k, k.IsZero())
	// Output: 64 true false
}

func ExampleParseKey() {
	_, err := identity.ParseKey("not a key")
	fmt.Println(err)
	// Output: identity: a key is 64 hex digits
}

func ExampleCompare() {
	h := identity.New(identity.Key{3})
	a, b := h.Sum([]byte("one body")), h.Sum([]byte("one body"))
	fmt.Println(identity.Compare(a, b), a == b)
	// Output: 0 true
}

func ExampleFingerprint_AppendHex() {
	f := identity.Fingerprint{Hi: 1, Lo: 2, Len: 3}
	fmt.Println(string(f.AppendHex([]byte("fp="))), f.String() == "00000000000000010000000000000002")
	// Output: fp=00000000000000010000000000000002 true
}

func ExampleNew() {
	keyed := identity.New(identity.Key{1}) // an index's: secret
	public := identity.New(identity.Key{}) // reproducible, not a security boundary
	body := []byte("a page")
	fmt.Println(keyed.Sum(body) == public.Sum(body))
	// Output: false
}

func ExampleWriteKeyFile() {
	dir, _ := os.MkdirTemp("", "key")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "shards.key")
	k, _ := identity.NewKey()
	fmt.Println(identity.WriteKeyFile(path, k, false))
	// A second process that lost the race keeps the first key.
	other, _ := identity.NewKey()
	fmt.Println(errors.Is(identity.WriteKeyFile(path, other, false), os.ErrExist))
	b, _ := os.ReadFile(path)
	got, _ := identity.ParseKey(string(b))
	fmt.Println(got == k)
	// Output:
	// <nil>
	// true
	// true
}
