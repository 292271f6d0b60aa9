package progress_test

import (
	"os"

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
