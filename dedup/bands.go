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
	for _, i := range r.unique {
		d := &r.res.Docs[i]
		ix, err := r.ixOf(i) // the sketch, read back when out of core
		if err != nil {
			return fmt.Errorf("dedup: export bands: %w", err)
		}
		if keys, err = r.x.Keys(keys[:0], &ix.Sketch); err != nil {
			return fmt.Errorf("dedup: export bands: %w", err)
		}
		rows = bandfile.AppendRows(rows[:0], d.Name, int64(d.Seq), keys)
		if err := w.Write(rows); err != nil {
			return fmt.Errorf("dedup: export bands: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("dedup: export bands: %w", err)
	}
	return nil
}
