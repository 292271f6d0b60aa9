package rdc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// BenchmarkLiteralBound measures, for a real tree pair, how small the
// chunks a pull fetches could get: the literal bytes left by chunk-level
// matching (the file of the same path and 4 similar files, as Pull picks
// them), compressed in 4 MiB batches as the server does, (plain) alone,
// (held) against the batch's files' locally held chunks, as Pull's
// dictionaries do, and (old) against the whole candidate files of the
// receiver, which no sender holds: the bound of any byte-granular matching
// against those files, before the cost of its signatures. It reads the
// trees named by NEARDUP_RDC_OLD and NEARDUP_RDC_NEW and is skipped
// without them:
//
//	NEARDUP_RDC_OLD=/usr/share/go-1.19/src NEARDUP_RDC_NEW=/usr/local/go/src \
//	  go test ./chunk/rdc -run '^$' -bench LiteralBound -benchtime 1x
func BenchmarkLiteralBound(b *testing.B) {
	oldDir, newDir := os.Getenv("NEARDUP_RDC_OLD"), os.Getenv("NEARDUP_RDC_NEW")
	if oldDir == "" || newDir == "" {
		b.Skip("set NEARDUP_RDC_OLD and NEARDUP_RDC_NEW")
	}
	ctx := context.Background()
	ot, err := Scan(ctx, oldDir, DefaultChunk)
	if err != nil {
		b.Fatal(err)
	}
	nt, err := Scan(ctx, newDir, DefaultChunk)
	if err != nil {
		b.Fatal(err)
	}
	roots := map[[32]byte]bool{}
	byPath := map[string]int{}
	for i, e := range ot.Manifest.Entries {
		if e.Kind == File {
			roots[e.Root] = true
			byPath[e.Path] = i
		}
	}
	ix := newSketchIndex(ot)
	type fileLit struct{ lit, held, old []byte }
	var files []fileLit
	var litRaw int64
	for i, e := range nt.Manifest.Entries {
		if e.Kind != File || roots[e.Root] || e.Size == 0 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(newDir, e.Path))
		if err != nil {
			b.Fatal(err)
		}
		var cands []int
		li, ok := byPath[e.Path]
		if ok {
			cands = append(cands, li)
		}
		for _, c := range ix.query(nil, e.Sketch, 3, 5) {
			if c != li && len(cands) < 5 {
				cands = append(cands, c)
			}
		}
		have := map[Short]bool{}
		var f fileLit
		for _, c := range cands {
			for _, r := range ot.Sigs[c].Chunks {
				have[ShortOf(r.Sum)] = true
			}
			old, _ := os.ReadFile(filepath.Join(oldDir, ot.Manifest.Entries[c].Path))
			f.old = append(f.old, old...)
		}
		for _, r := range nt.Sigs[i].Chunks {
			d := data[r.Offset : r.Offset+int64(r.Length)]
			if have[ShortOf(r.Sum)] {
				f.held = append(f.held, d...)
			} else {
				f.lit = append(f.lit, d...)
			}
		}
		litRaw += int64(len(f.lit))
		files = append(files, f)
	}
	compress := func(level zstd.EncoderLevel, dict, data []byte) int {
		opts := []zstd.EOption{zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(16 << 20)}
		if len(dict) > 0 {
			opts = append(opts, zstd.WithEncoderDictRaw(dictID, dict))
		}
		var out bytes.Buffer
		e, err := zstd.NewWriter(&out, opts...)
		if err != nil {
			b.Fatal(err)
		}
		e.Write(data)
		e.Close()
		return out.Len()
	}
	b.ResetTimer()
	for range b.N {
		b.ReportMetric(float64(litRaw), "literal-bytes")
		for _, mode := range []string{"plain", "held", "old"} {
			for _, level := range []zstd.EncoderLevel{zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
				total := 0
				var cur, dict []byte
				flush := func() {
					if len(dict) > MaxDictBytes {
						dict = dict[len(dict)-MaxDictBytes:]
					}
					if len(cur) > 0 {
						total += compress(level, dict, cur)
					}
					cur, dict = nil, nil
				}
				for _, f := range files {
					cur = append(cur, f.lit...)
					switch mode {
					case "held":
						dict = append(dict, f.held...)
					case "old":
						dict = append(dict, f.old...)
					}
					if len(cur) >= 4<<20 {
						flush()
					}
				}
				flush()
				b.ReportMetric(float64(total), mode+"-level"+level.String()+"-bytes")
			}
		}
	}
}
