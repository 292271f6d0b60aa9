package progress_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/progress"
)

func ExampleNew() {
	// Log lines (no terminal): at most one per Every, then a summary.
	bar := progress.New(progress.Options{W: os.Stderr}, "sketch", 1000, "docs")
	for i := 0; i < 1000; i++ {
		bar.Add(1)
	}
	bar.Finish() // "sketch: 1000 docs in …"
}

// Set records an absolute count, for example bytes read as reported by the
// reader; Finish writes one summary line.
func ExampleBar_Set() {
	var out strings.Builder
	bar := progress.New(progress.Options{W: &out, Every: time.Hour}, "read", 3000, "docs")
	bar.Set(1000)
	bar.Add(500)
	bar.Set(3000)
	bar.Finish()
	line := out.String()
	fmt.Println(line[:strings.Index(line, " in ")]) // the rest is a duration
	// Output: read: 3000 docs
}

// A nil *Bar discards updates, so a library can take a Bar and report
// through it without checking.
func ExampleBar_Add() {
	var bar *progress.Bar
	bar.Add(10)
	fmt.Println(bar.Finish())
	quiet := progress.New(progress.Options{}, "scan", -1, "docs") // nil W: no output
	quiet.Add(1)
	quiet.Finish()
	// Output: 0s
}
