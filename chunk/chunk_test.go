package chunk

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// randBytes returns n pseudo-random bytes from a keyed stream.
func randBytes(seed uint64, n int) []byte {
	s := rng.New(rng.Key(seed))
	b := make([]byte, (n+7)&^7)
	for i := 0; i < len(b); i += 8 {
		v := s.Uint64()
		b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		b[i+4], b[i+5], b[i+6], b[i+7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
	}
	return b[:n]
}

// textLike returns n bytes of words from a small vocabulary (low entropy,
// many repeats), like source code or prose.
func textLike(seed uint64, n int) []byte {
	words := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there all one their we")
	s := rng.New(rng.Key(seed, 1))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[s.Intn(uint64(len(words)))])
		if s.Intn(12) == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:n]
}

// sparse returns n mostly-zero bytes with a random byte every gap bytes on
// average, like an uncompressed sparse spreadsheet.
func sparse(seed uint64, n, gap int) []byte {
	s := rng.New(rng.Key(seed, 2))
	b := make([]byte, n)
	for i := 0; i < n; i += 1 + int(s.Intn(uint64(2*gap))) {
		b[i] = byte(s.Uint64())
	}
	return b
}

// periodic repeats a short random pattern.
func periodic(seed uint64, n, period int) []byte {
	p := randBytes(seed, period)
	b := make([]byte, n)
	for i := range b {
		b[i] = p[i%period]
	}
	return b
}

type input struct {
	name string
	data []byte
}

func inputs() []input {
	mixed := append(append(append(randBytes(7, 100000), make([]byte, 70000)...), textLike(8, 90000)...), sparse(9, 120000, 3000)...)
	return []input{
		{"empty", nil},
		{"short", randBytes(1, 100)},
		{"random", randBytes(2, 1<<20)},
		{"text", textLike(3, 1<<20)},
		{"zeros", make([]byte, 300000)},
		{"sparse", sparse(4, 1<<20, 5000)},
		{"sparse-dense", sparse(5, 300000, 50)},
		{"periodic3", periodic(6, 300000, 3)},
		{"periodic100", periodic(6, 300000, 100)},
		{"mixed", mixed},
	}
}

var optionSets = []Options{
	{},
	{Min: 100, Max: 300},
	{Avg: 1024},
	{Min: 1000, Max: 1000},
	{Min: 65, Max: 4000},
}

func checkCuts(t *testing.T, cuts []int, n int, o Options) {
	t.Helper()
	o = o.EnsureDefaults()
	if n == 0 {
		if len(cuts) != 0 {
			t.Fatalf("empty input has cuts %v", cuts)
		}
		return
	}
	if cuts[len(cuts)-1] != n {
		t.Fatalf("last cut %d, want %d", cuts[len(cuts)-1], n)
	}
	prev := 0
	for i, c := range cuts {
		l := c - prev
		if l > o.Max || l <= 0 || (l < o.Min && i != len(cuts)-1) {
			t.Fatalf("chunk %d has length %d outside [%d, %d]", i, l, o.Min, o.Max)
		}
		prev = c
	}
}

// TestFastEqualsPlain checks that accelerated winnowing gives exactly the
// cut points of plain winnowing, on random, text-like and low-entropy data.
func TestFastEqualsPlain(t *testing.T) {
	for _, in := range inputs() {
		for _, o := range optionSets {
			fast, err := Cuts(nil, in.data, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Mode = Plain
			plain, _ := Cuts(nil, in.data, o)
			checkCuts(t, fast, len(in.data), o)
			if fmt.Sprint(fast) != fmt.Sprint(plain) {
				t.Errorf("%s %+v: fast and plain cut points differ:\nfast  %v\nplain %v", in.name, o, fast, plain)
			}
		}
	}
}

// TestZerosCutAtMax: equal hashes tie and the rightmost wins, so runs of
// zeros give chunks of exactly Max bytes.
func TestZerosCutAtMax(t *testing.T) {
	cuts, _ := Cuts(nil, make([]byte, 10*10240+5), Options{})
	for i, c := range cuts[:10] {
		if c != (i+1)*10240 {
			t.Fatalf("cut %d at %d, want %d", i, c, (i+1)*10240)
		}
	}
}

// chunkyReader returns reads of varying small sizes.
type chunkyReader struct {
	data []byte
	s    rng.Stream
}

func (r *chunkyReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), 1+int(r.s.Intn(70000)))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func streamCuts(t *testing.T, data []byte, o Options) []int {
	t.Helper()
	k, err := NewChunker(&chunkyReader{data: data, s: rng.New(3)}, o)
	if err != nil {
		t.Fatal(err)
	}
	var cuts []int
	var buf []byte
	for {
		c, err := k.Next(buf)
		if errors.Is(err, io.EOF) {
			return cuts
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Data, data[c.Offset:c.Offset+int64(len(c.Data))]) {
			t.Fatalf("chunk at %d has wrong bytes", c.Offset)
		}
		buf = c.Data
		cuts = append(cuts, int(c.Offset)+len(c.Data))
	}
}

// TestStreamEqualsOneShot: the streaming Chunker (with short reads and
// buffer compaction over a 3 MiB input) cuts where the one-shot API does.
func TestStreamEqualsOneShot(t *testing.T) {
	big := append(randBytes(11, 3<<20), textLike(12, 1<<20)...)
	for _, in := range append(inputs(), input{"big", big}) {
		for _, o := range optionSets[:3] {
			want, _ := Cuts(nil, in.data, o)
			got := streamCuts(t, in.data, o)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %+v: stream %v, one-shot %v", in.name, o, got, want)
			}
		}
	}
}

type failReader struct{ n int }

func (r *failReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

func TestReadError(t *testing.T) {
	k, _ := NewChunker(&failReader{n: 100000}, Options{})
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = k.Next(nil)
	}
	var re *ReadError
	if !errors.As(err, &re) || re.Offset != 100000 {
		t.Fatalf("got %v, want ReadError at 100000", err)
	}
}

func TestOptions(t *testing.T) {
	o := Options{}.EnsureDefaults()
	if o.Min != 6144 || o.Avg != 8192 || o.Max != 10240 {
		t.Fatalf("defaults %+v", o)
	}
	if o := (Options{Min: 1000, Max: 3000}).EnsureDefaults(); o.Avg != 2000 {
		t.Fatalf("derived avg %+v", o)
	}
	for _, bad := range []Options{{Min: 64}, {Min: 500, Max: 400}, {Min: 100, Avg: 1000, Max: 300}, {Mode: 7}} {
		if err := bad.Validate(); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: got %v", bad, err)
		}
	}
}

// TestLengthDistribution compares chunk lengths on random data with the
// idealized model: the same chained winnowing over independent uniform
// 64-bit keys (winnowSeq on an rng stream). If boundary hashes behave as
// independent uniform values, the two length distributions agree. (They are
// not uniform on [Min, Max]: the boundaries right of a cut are known to
// exceed its minimum, which pushes the next minimum right, and the mean sits
// a few percent above (Min+Max)/2.) With n1 ≈ 20,000 real and n2 = 100,000
// model chunks of SD σ ≈ 58, the difference of means has standard error
// σ·sqrt(1/n1+1/n2) ≈ 0.45 bytes; we allow 5 standard errors. The SDs agree
// within 5% (their relative standard error is about 0.6%).
func TestLengthDistribution(t *testing.T) {
	o := Options{Min: 100, Max: 300}
	stats := func(cuts []int) (mean, sd float64, n int) {
		var sum, sum2 float64
		prev := 0
		for _, c := range cuts[:len(cuts)-1] {
			l := float64(c - prev)
			sum += l
			sum2 += l * l
			prev = c
			n++
		}
		mean = sum / float64(n)
		return mean, math.Sqrt(sum2/float64(n) - mean*mean), n
	}
	real, _ := Cuts(nil, randBytes(21, 4<<20), o)
	m1, s1, n1 := stats(real)
	s := rng.New(22)
	keys := make([]uint64, 100000*200)
	for i := range keys {
		keys[i] = s.Uint64()
	}
	model := winnowSeq(nil, len(keys), o.Min, o.Max, func(i int) uint64 { return keys[i] })
	m2, s2, n2 := stats(model)
	t.Logf("real: mean %.2f sd %.2f (n=%d); model: mean %.2f sd %.2f (n=%d)", m1, s1, n1, m2, s2, n2)
	se := s2 * math.Sqrt(1/float64(n1)+1/float64(n2))
	if math.Abs(m1-m2) > 5*se {
		t.Errorf("mean %.2f, model %.2f ± %.2f", m1, m2, 5*se)
	}
	if math.Abs(s1-s2) > 0.05*s2 {
		t.Errorf("sd %.2f, model %.2f ± 5%%", s1, s2)
	}
	if m1 < 200 || m1 > 220 {
		t.Errorf("mean %.2f far from (Min+Max)/2 = 200", m1)
	}
}

// TestEditKeepsChunks: a 100-byte insert, delete or overwrite in a 64 MiB
// file keeps at least 90% of its chunks (in fact all but a handful).
func TestEditKeepsChunks(t *testing.T) {
	size := 64 << 20
	if testing.Short() {
		size = 8 << 20
	}
	old := randBytes(31, size)
	c, _ := NewCutter(Options{})
	set := func(d []byte) (map[Sum]bool, int) {
		cuts := c.Cuts(nil, d)
		m := make(map[Sum]bool, len(cuts))
		prev := 0
		for _, e := range cuts {
			m[SumChunk(d[prev:e])] = true
			prev = e
		}
		return m, len(cuts)
	}
	oldSet, oldN := set(old)
	s := rng.New(32)
	patch := randBytes(33, 100)
	for _, kind := range []string{"insert", "delete", "overwrite"} {
		at := int(s.Intn(uint64(size - 100)))
		var d []byte
		switch kind {
		case "insert":
			d = append(append(append([]byte{}, old[:at]...), patch...), old[at:]...)
		case "delete":
			d = append(append([]byte{}, old[:at]...), old[at+100:]...)
		case "overwrite":
			d = append([]byte{}, old...)
			copy(d[at:], patch)
		}
		newSet, _ := set(d)
		kept := 0
		for k := range oldSet {
			if newSet[k] {
				kept++
			}
		}
		frac := float64(kept) / float64(len(oldSet))
		t.Logf("%s at %d: kept %d of %d chunks (%.4f%%)", kind, at, kept, oldN, 100*frac)
		if frac < 0.9 {
			t.Errorf("%s: kept only %.2f%% of chunks", kind, 100*frac)
		}
	}
}

// TestGolden pins cut points and boundary hashes (testdata/cuts.golden);
// run with -update to regenerate after an intended format change.
func TestGolden(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "gear[0]=%#x gear[255]=%#x polyB=%#x\n", gear[0], gear[255], polyB)
	fmt.Fprintf(&b, "H(random64)=%#x H(zeros64)=%#x lead bits %d\n", boundaryHash(randBytes(40, 64), 8), boundaryHash(make([]byte, 64), 10), leadBits(8193))
	for _, in := range inputs() {
		for _, o := range optionSets[:3] {
			cuts, _ := Cuts(nil, in.data, o)
			if len(cuts) > 40 {
				cuts = cuts[:40]
			}
			fmt.Fprintf(&b, "%s %d/%d: %v\n", in.name, o.EnsureDefaults().Min, o.EnsureDefaults().Max, cuts)
		}
	}
	sig := Sign(randBytes(41, 300000))
	fmt.Fprintf(&b, "root(random300000)=%v chunks=%d levels=%d\n", sig.Root, len(sig.Chunks), len(sig.Levels))
	fmt.Fprintf(&b, "root(empty)=%v\n", Sign(nil).Root)
	golden(t, "cuts.golden", b.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		os.WriteFile(path+".got", []byte(got), 0o644)
		t.Fatalf("%s differs from golden output; see %s.got", path, path)
	}
}

// TestDeterministic: two Cutters and two runs agree.
func TestDeterministic(t *testing.T) {
	d := textLike(50, 500000)
	a, _ := Cuts(nil, d, Options{})
	c, _ := NewCutter(Options{})
	b1 := c.Cuts(nil, d)
	b2 := c.Cuts(nil, d)
	if fmt.Sprint(a) != fmt.Sprint(b1) || fmt.Sprint(b1) != fmt.Sprint(b2) {
		t.Fatal("cut points differ across runs")
	}
}

func FuzzCuts(f *testing.F) {
	f.Add([]byte("hello"), uint16(100), uint16(300))
	f.Add(make([]byte, 3000), uint16(65), uint16(70))
	f.Fuzz(func(t *testing.T, data []byte, lo, hi uint16) {
		o := Options{Min: 65 + int(lo%500), Max: 65 + int(lo%500) + int(hi%700)}
		o.Avg = (o.Min + o.Max) / 2
		fast, err := Cuts(nil, data, o)
		if err != nil {
			t.Fatal(err)
		}
		checkCuts(t, fast, len(data), o)
		o.Mode = Plain
		plain, _ := Cuts(nil, data, o)
		if fmt.Sprint(fast) != fmt.Sprint(plain) {
			t.Fatalf("fast %v plain %v", fast, plain)
		}
	})
}
