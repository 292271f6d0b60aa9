package dedup

import (
	"fmt"

	"github.com/neardup/neardup/lsh/bandfile"
)

// exportBands writes the band keys of the documents to index (r.unique, in
// input order) to o.ExportBands as one Parquet file (package
// lsh/bandfile), when asked to.
func (r *run) exportBands() error {
	if r.o.ExportBands == nil {
		return nil
	}
	w := bandfile.NewWriter(r.o.ExportBands)
	var keys []uint64
	var rows []bandfile.Row
	// The index's keys, of the full values (values.go), in batches
	// widened from memory or read back.
	const batch = 2048
	l := r.newLoader(true, false)
	for lo := 0; lo < len(r.unique); lo += batch {
		part := r.unique[lo:min(lo+batch, len(r.unique))]
		ds, err := l.load(part)
		if err != nil {
			return fmt.Errorf("dedup: export bands: %w", err)
		}
		for k, i := range part {
			d := &r.res.Docs[i]
			if keys, err = r.x.Keys(keys[:0], &ds[k].Sketch); err != nil {
				return fmt.Errorf("dedup: export bands: %w", err)
			}
			rows = bandfile.AppendRows(rows[:0], d.Name, int64(d.Seq), keys)
			if err := w.Write(rows); err != nil {
				return fmt.Errorf("dedup: export bands: %w", err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("dedup: export bands: %w", err)
	}
	return nil
}
