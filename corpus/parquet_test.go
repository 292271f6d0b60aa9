package corpus

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// allocDuring returns the bytes allocated while f runs (runtime.MemStats
// TotalAlloc: every allocation counts, even one the collector frees at
// once, so this bounds the peak from above).
func allocDuring(f func()) uint64 {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// thriftFooter wraps a Thrift-encoded FileMetaData into a Parquet file:
// magic, some data bytes, the footer, its length, magic.
func thriftFooter(footer []byte, data int) []byte {
	b := append([]byte("PAR1"), make([]byte, data)...)
	b = append(b, footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	return append(b, "PAR1"...)
}

// TestParquetCraftedFooter reads Parquet files of about 100 bytes whose
// footers claim huge sizes. Before the checks, the first one made
// parquet-go allocate 2 GiB (make([]byte, footerLength)); the others would
// have asked for a 2 GiB string and a list of 2^31 structs. Each must be
// one rejection, and reading them all must allocate little (TotalAlloc,
// an upper bound of the peak).
func TestParquetCraftedFooter(t *testing.T) {
	dir := t.TempDir()
	// 1. The trailer claims a footer of 2^31-1 bytes in a 112-byte file.
	lengthClaim := append([]byte("PAR1"), make([]byte, 100)...)
	lengthClaim = binary.LittleEndian.AppendUint32(lengthClaim, 1<<31-1)
	lengthClaim = append(lengthClaim, "PAR1"...)
	// 2. Field 1 (version, i32) = 1, then field 2 (schema) as a list of
	// 2^31-1 structs.
	listClaim := thriftFooter([]byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00}, 80)
	// 3. Field 6 (created_by, binary) claiming 2^31-1 bytes.
	stringClaim := thriftFooter([]byte{0x15, 0x02, 0x58, 0xff, 0xff, 0xff, 0xff, 0x07, 'x', 0x00}, 80)
	// 4. Structs nested 1000 deep.
	deep := []byte{0x15, 0x02}
	for range 1000 {
		deep = append(deep, 0x1c) // field +1, struct
	}
	deep = append(deep, make([]byte, 1001)...)
	nested := thriftFooter(deep, 10)
	files := map[string][]byte{"length.parquet": lengthClaim, "list.parquet": listClaim, "string.parquet": stringClaim, "nested.parquet": nested}
	var paths []string
	for name, data := range files {
		paths = append(paths, writeFile(t, dir, name, data))
	}
	if len(lengthClaim) != 112 {
		t.Fatalf("crafted file is %d bytes", len(lengthClaim))
	}
	var res *result
	alloc := allocDuring(func() { res = readAll(t, paths, Options{}) })
	t.Logf("4 crafted footers: TotalAlloc +%d KiB; %v", alloc>>10, res.rejects)
	if alloc > 100<<20 {
		t.Errorf("reading crafted footers allocated %d MiB", alloc>>20)
	}
	if len(res.docs) != 0 || len(res.rejects) != 4 {
		t.Fatalf("docs %d, rejects %v", len(res.docs), res.rejects)
	}
	for _, e := range res.rejects {
		if e.Reason != ReasonParquet || e.Records() != 1 {
			t.Errorf("reject %v", e)
		}
	}
}

// pqPage is one page of a column chunk in a file.
type pqPage struct {
	at, header, size int64 // header offset, header length, compressed size
}

// pqPages lists the pages of column col of row group rg.
func pqPages(t *testing.T, path string, rg, col int) []pqPage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata().RowGroups[rg].Columns[col].MetaData
	ck := chunkChecker{r: f, dataEnd: fi.Size(), lim: newPQLimits(DefaultMaxRecordBytes)}
	var pages []pqPage
	end := md.DataPageOffset + md.TotalCompressedSize
	for pos := md.DataPageOffset; pos < end; {
		h, n, err := ck.header(pos, end)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, pqPage{pos, n, int64(h.CompressedPageSize)})
		pos += n + int64(h.CompressedPageSize)
	}
	return pages
}

func pqTestRows(n int) []pqRow {
	var rows []pqRow
	for i := range n {
		rows = append(rows, pqRow{ID: fmt.Sprintf("doc-%03d", i), Text: ptr(fmt.Sprintf("text of document %d %s", i, strings.Repeat("w", i%13))), Lang: "en"})
	}
	return rows
}

// TestParquetCorruptPage corrupts pages of the text column in the middle
// row group of three: the rows from the bad page to the end of the group
// are rejected with one counted error, and the next row group is read.
func TestParquetCorruptPage(t *testing.T) {
	rows := pqTestRows(300)
	good := parquetBytes(t, rows, 100) // 3 row groups, pages of ~256 bytes
	dir := t.TempDir()
	ref := writeFile(t, dir, "ref.parquet", good)
	pages := pqPages(t, ref, 1, 1)
	if len(pages) < 2 {
		t.Fatalf("want several pages in the text column, got %d", len(pages))
	}
	ids := func(res *result) map[string]bool {
		m := map[string]bool{}
		for _, d := range res.docs {
			m[d.ID] = true
		}
		return m
	}

	// A flipped byte in the data of the second page: its checksum fails
	// when it is read.
	bad := append([]byte(nil), good...)
	bad[pages[1].at+pages[1].header+pages[1].size/2] ^= 0x55
	p := writeFile(t, dir, "data.parquet", bad)
	res := readAll(t, []string{p}, Options{})
	if len(res.rejects) != 1 {
		t.Fatalf("rejects %v", res.rejects)
	}
	e := res.rejects[0]
	firstBad := int64(len(res.docs)) - 200 + 1 // groups 0 and 2 are whole; the good rows of group 1 came before
	if e.Reason != ReasonParquet || e.Line != 100+firstBad || e.Records() != 100-firstBad+1 || e.Records() < 2 || !strings.Contains(e.Error(), "records)") {
		t.Errorf("reject %v (line %d, count %d), %d docs", e, e.Line, e.Count, len(res.docs))
	}
	got := ids(res)
	for i := range 300 {
		want := i < 100 || i >= 200 || int64(i-100+1) < firstBad
		if got[rows[i].ID] != want {
			t.Errorf("row %d read %v, want %v", i, got[rows[i].ID], want)
		}
	}
	if s := res.stats; s.Read != 300 || s.Rejected != e.Records() || s.RejectedBy[ReasonParquet] != e.Records() {
		t.Errorf("stats %v", s)
	}

	// A page header that claims 2 GiB: the whole group is rejected before
	// parquet-go allocates anything for it.
	bad = append([]byte(nil), good...)
	var h format.PageHeader
	f, _ := os.Open(ref)
	ck := chunkChecker{r: f, dataEnd: int64(len(good)), lim: newPQLimits(DefaultMaxRecordBytes)}
	h, n, err := ck.header(pages[0].at, pages[0].at+pages[0].header+pages[0].size)
	f.Close()
	if err != nil || n != pages[0].header {
		t.Fatal(err)
	}
	h.CompressedPageSize = 1<<31 - 1
	h.UncompressedPageSize = 1<<31 - 1
	h.DataPageHeaderV2.V.Statistics = format.Statistics{} // room for the longer sizes
	hdr, err := thrift.Marshal(&thrift.CompactProtocol{}, &h)
	if err != nil {
		t.Fatal(err)
	}
	// What follows a shorter header is never reached.
	if int64(len(hdr)) > pages[0].header {
		t.Fatalf("re-encoded header has %d bytes, more than %d", len(hdr), pages[0].header)
	}
	copy(bad[pages[0].at:], hdr)
	p = writeFile(t, dir, "header.parquet", bad)
	alloc := allocDuring(func() { res = readAll(t, []string{p}, Options{}) })
	t.Logf("page header claiming 2 GiB: TotalAlloc +%d KiB", alloc>>10)
	if alloc > 100<<20 {
		t.Errorf("allocated %d MiB", alloc>>20)
	}
	if len(res.docs) != 200 || len(res.rejects) != 1 || res.rejects[0].Records() != 100 || res.rejects[0].Line != 101 || !strings.Contains(res.rejects[0].Error(), "page") {
		t.Fatalf("%d docs, rejects %v", len(res.docs), res.rejects)
	}
	got = ids(res)
	for i := range 300 {
		if got[rows[i].ID] != (i < 100 || i >= 200) {
			t.Errorf("row %d read %v", i, got[rows[i].ID])
		}
	}
}

// TestParquetCodecs reads the fuzz seeds, one file per codec, page version
// and encoding parquet-go writes: the checks must pass every valid file.
func TestParquetCodecs(t *testing.T) {
	dir := t.TempDir()
	rows := pqSeedRows()
	for i, seed := range parquetSeeds(t) {
		p := writeFile(t, dir, fmt.Sprintf("seed%d.parquet", i), seed)
		res := readAll(t, []string{p}, Options{MetaFields: []string{"lang"}})
		if len(res.docs) != len(rows)-1 || len(res.rejects) != 1 || res.rejects[0].Reason != ReasonMissingText || res.rejects[0].ID != "b" {
			t.Fatalf("seed %d: %d docs, rejects %v", i, len(res.docs), res.rejects)
		}
		for j, d := range res.docs {
			r := rows[j]
			if j >= 1 {
				r = rows[j+1]
			}
			if d.ID != r.ID || string(d.Body) != *r.Text || d.Meta["lang"] != r.Lang {
				t.Errorf("seed %d doc %d: %q %q %v", i, j, d.ID, d.Body, d.Meta)
			}
		}
	}
}
