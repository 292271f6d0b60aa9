package rdc

import (
	"bytes"
	"reflect"
	"testing"
)

// Every parser of the protocol takes any bytes without panicking, and
// what it accepts encodes back to an equal message.

func FuzzDecodeManifest(f *testing.F) {
	m := &Manifest{Chunk: DefaultChunk.EnsureDefaults(), Entries: []Entry{
		{Kind: Dir, Path: "a", Mode: 0o755},
		{Kind: File, Path: "a/f", Mode: 0o644, Size: 3, Root: sumChunk([]byte("abc")), Chunks: 1, Sketch: []uint64{1, 2, 3}},
		{Kind: Symlink, Path: "l", Target: "a/f"},
	}}
	var b bytes.Buffer
	m.Encode(&b)
	f.Add(b.Bytes())
	f.Add([]byte(manifestMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := m.Encode(&out); err != nil {
			t.Fatal(err)
		}
		m2, err := DecodeManifest(&out)
		if err != nil {
			t.Fatalf("re-encoded manifest refused: %v", err)
		}
		if len(m2.Entries) != len(m.Entries) {
			t.Fatal("round trip changed the entries")
		}
		for i := range m.Entries {
			if err := CheckName(m.Entries[i].Path); err != nil {
				t.Fatalf("accepted unsafe name: %v", err)
			}
		}
	})
}

func FuzzDecodeNodeReqs(f *testing.F) {
	var b bytes.Buffer
	EncodeNodeReqs(&b, []NodeReq{{1, 2, 3}, {0, 0, 0}})
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := DecodeNodeReqs(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		EncodeNodeReqs(&out, reqs)
		again, err := DecodeNodeReqs(&out)
		if err != nil || len(again) != len(reqs) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzDecodeNodeResps(f *testing.F) {
	var b bytes.Buffer
	EncodeNodeResps(&b, []NodeResp{{Lo: 3, Children: []Child{{1, 4}, {2, 5}}}, {Lo: 0, Children: []Child{{7, 1}}}}, []bool{false, true})
	f.Add(b.Bytes(), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, mask uint8) {
		leaf := []bool{mask&1 == 0, mask&2 != 0}
		resps, err := DecodeNodeResps(bytes.NewReader(data), leaf)
		if err != nil {
			return
		}
		var out bytes.Buffer
		EncodeNodeResps(&out, resps, leaf)
		again, err := DecodeNodeResps(&out, leaf)
		if err != nil || len(again) != len(resps) {
			t.Fatalf("round trip: %v", err)
		}
		for i := range resps {
			if again[i].Lo != resps[i].Lo || len(again[i].Children) != len(resps[i].Children) {
				t.Fatalf("round trip changed reply %d", i)
			}
			for j, c := range resps[i].Children {
				if again[i].Children[j] != c {
					t.Fatalf("round trip changed child %d of %d", j, i)
				}
			}
		}
	})
}

func FuzzDecodeChunksReq(f *testing.F) {
	for _, q := range []*ChunksReq{
		{Ranges: []RangeReq{{1, 0, 3}, {2, 5, 6}}},
		{Ranges: []RangeReq{{1, 3, 4}}, Dict: []RangeReq{{1, 0, 3}, {1, 4, 9}}, DictSum: 0x0123456789abcdef},
	} {
		var b bytes.Buffer
		EncodeChunksReq(&b, q)
		f.Add(b.Bytes())
		f.Add(b.Bytes()[:b.Len()-3]) // truncated
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := DecodeChunksReq(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, rs := range [][]RangeReq{q.Ranges, q.Dict} {
			n := 0
			for _, r := range rs {
				if r.Hi <= r.Lo {
					t.Fatalf("accepted empty range %+v", r)
				}
				n += r.Hi - r.Lo
			}
			if n > MaxRangeChunks {
				t.Fatalf("accepted %d chunks", n)
			}
		}
		var out bytes.Buffer
		if err := EncodeChunksReq(&out, q); err != nil {
			t.Fatal(err)
		}
		again, err := DecodeChunksReq(&out)
		if err != nil || !reflect.DeepEqual(again, q) {
			t.Fatalf("round trip changed the request: %+v, %v, want %+v", again, err, q)
		}
	})
}

func FuzzChunkReader(f *testing.F) {
	f.Add([]byte(chunksMagic+"\x03abc\x00"), 8)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		max = max&0xffff + 1
		cr := NewChunkReader(bytes.NewReader(data), max)
		for i := 0; i < 1000; i++ {
			d, err := cr.Next(nil)
			if err != nil {
				return
			}
			if len(d) > max {
				t.Fatalf("chunk of %d bytes over %d", len(d), max)
			}
		}
	})
}
