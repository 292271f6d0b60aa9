package pipeline

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/lsh/bandfile"
)

// The elements that flow between stages. Every field is exported so that
// Beam's schema coder encodes them on any runner.

// fileRef is one input: its number in input order and its path.
type fileRef struct {
	Index int
	Path  string
}

// orderBits is the width of the record number in an Order.
const orderBits = 40

// order numbers a document by input order: its input's index in the high
// bits, its position among the records that input yielded in the low 40
// bits. Orders sort like dedup's sequence numbers.
func order(file int, i int64) uint64 { return uint64(file)<<orderBits | uint64(i) }

// orderFile and orderIndex undo order.
func orderFile(o uint64) int    { return int(o >> orderBits) }
func orderIndex(o uint64) int64 { return int64(o & (1<<orderBits - 1)) }

// docRec is a sketched document.
type docRec struct {
	Order  uint64
	ID     string
	FP     string   // identity fingerprint of the body (fpKey)
	Sketch []uint64 // empty for a body without features
	// Source, Line and Offset locate the record (corpus.Document's), for
	// the rejection of a duplicate id.
	Source       string
	Line, Offset int64
	// Features is the sorted set of the body's feature ids, for exact
	// verification: set only on the records the verification stage
	// re-reads for the documents of candidate pairs (featuresFn), never
	// on the records of every document.
	Features []uint64
}

// nodeInfo is what the cluster stage needs of a document.
type nodeInfo struct {
	Order uint64
	ID    string
	Exact bool // an identical copy of an earlier document
}

// rejectRec is a rejected record.
type rejectRec struct {
	Order  uint64 // of the next document of its input (for output order)
	Path   string
	Line   int64
	Offset int64
	Reason string
	Error  string
	ID     string // when known
}

// fileStat counts the records of one input.
type fileStat struct {
	File                                       int
	Read, Yielded, Rejected, Warnings, Skipped int64
}

// half is a candidate pair (A, B) on its way to B's sketch, carrying A's
// (and A's feature set under exact verification).
type half struct {
	A        uint64
	AID      string
	Keys     int64 // band keys the pair shares (within the MaxRun windows)
	Sketch   []uint64
	Features []uint64
}

// pairRec is a verified pair: A before B in input order.
type pairRec struct {
	A, B       uint64
	AID, BID   string
	Similarity float64
	Keys       int64
	Identical  bool
}

// hotKey is a band key shared by more than MaxRun documents.
type hotKey struct {
	Key  uint64 // the band key
	Docs int64
}

// line is one line of a sharded JSONL output, ordered by Order.
type line struct {
	Order uint64
	Text  string
}

func init() {
	for _, t := range []any{fileRef{}, docRec{}, nodeInfo{}, rejectRec{}, fileStat{}, half{}, pairRec{}, hotKey{}, line{}, bandfile.Row{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
}
