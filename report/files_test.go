package report_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup/report"
)

func TestChunkSizes(t *testing.T) {
	l := report.ChunkLengths{Cut: []int{6144, 7000, 8000, 10240}, Last: []int{12, 3000}, Min: 6144, Max: 10240}
	var a, b bytes.Buffer
	if err := report.ChunkSizes(&a, report.SVG, report.Chart{Title: "t"}, l, 16); err != nil {
		t.Fatal(err)
	}
	if err := report.ChunkSizes(&b, report.SVG, report.Chart{Title: "t"}, l, 16); err != nil {
		t.Fatal(err)
	}
	svg := a.String()
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("SVG output not deterministic")
	}
	for _, want := range []string{"chunk length (bytes)", "cut chunks", "last chunk of a file", "minimum cut length 6144"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	for _, bad := range []report.ChunkLengths{{Min: 6144, Max: 10240}, {Cut: []int{5}, Max: 0}} {
		if err := report.ChunkSizes(&a, report.SVG, report.Chart{}, bad, 16); !errors.Is(err, report.ErrInput) {
			t.Errorf("%+v: err %v, want ErrInput", bad, err)
		}
	}
	if err := report.ChunkSizes(&a, "gif", report.Chart{}, l, 16); !errors.Is(err, report.ErrFormat) {
		t.Errorf("gif: %v", err)
	}
}

func ExampleChunkSizes() {
	var b bytes.Buffer
	l := report.ChunkLengths{Cut: []int{6500, 8100, 9900}, Last: []int{700}, Min: 6144, Max: 10240}
	err := report.ChunkSizes(&b, report.PNG, report.Chart{Title: "Chunk sizes"}, l, 16)
	fmt.Println(err, bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")))
	// Output: <nil> true
}
