package lshplot_test

import (
	"bytes"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/lsh/lshplot"
)

func TestSCurvePNG(t *testing.T) {
	var buf bytes.Buffer
	err := lshplot.SCurve(&buf, lshplot.Options{Threshold: 0.8}, lshplot.Curve{Params: lsh.AltaVista(), Label: "AltaVista"}, lshplot.Curve{Params: lsh.Bing()})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("image %v", b)
	}
	var svg bytes.Buffer
	if err := lshplot.SCurve(&svg, lshplot.Options{Format: "svg", Log: true, Threshold: 0.9}, lshplot.Curve{Params: lsh.AltaVista()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "<svg") {
		t.Error("not an SVG")
	}
	if err := lshplot.SCurve(&svg, lshplot.Options{}); err == nil {
		t.Error("no curves accepted")
	}
	if err := lshplot.SCurve(&svg, lshplot.Options{}, lshplot.Curve{Params: lsh.Params{}}); err == nil {
		t.Error("invalid params accepted")
	}
}

func ExampleSCurve() {
	var buf bytes.Buffer
	err := lshplot.SCurve(&buf, lshplot.Options{Threshold: 0.8, Format: "svg"},
		lshplot.Curve{Params: lsh.AltaVista(), Label: "AltaVista 2 of 6 × 14"})
	fmt.Println(err, strings.Contains(buf.String(), "AltaVista 2 of 6"))
	// Output: <nil> true
}
