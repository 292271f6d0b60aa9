package store

import "strconv"

// OpKind names one kind of Batch write.
type OpKind uint8

// The kinds of write, one per Batch method.
const (
	OpAddPosting OpKind = iota
	OpRemovePosting
	OpPutDoc
	OpDeleteDoc
	OpPutMeta
	OpDeleteMeta
)

var opKindNames = [...]string{"AddPosting", "RemovePosting", "PutDoc", "DeleteDoc", "PutMeta", "DeleteMeta"}

// String returns the name of the Batch method the kind records.
func (k OpKind) String() string {
	if int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return "OpKind(" + strconv.Itoa(int(k)) + ")"
}

// Op is one recorded write. Key is set for postings, ID for postings and
// documents, Name for metadata, Value for PutDoc and PutMeta.
type Op struct {
	Kind  OpKind
	Key   uint64
	ID    uint64
	Name  string
	Value []byte
}

// Writes records the writes of a batch, in order, for whoever applies them
// later: a store whose batches take effect at Commit (Memory, Redis), or a
// caller that decides only after the writes where they go (index's bulk
// builds replay them into a batch or a bulk). It has Batch's write methods
// and Len, and copies the values it is given into one buffer, so recording
// allocates only as the buffers grow. The zero value is empty and ready.
type Writes struct {
	ops  []writeOp
	vals []byte // the values, back to back in the order of ops
}

type writeOp struct {
	kind    OpKind
	key, id uint64
	name    string
	end     int // the end of the op's value in vals; it starts where the previous op's ends
}

func (w *Writes) add(o writeOp) {
	o.end = len(w.vals)
	w.ops = append(w.ops, o)
}

// AddPosting records Batch.AddPosting.
func (w *Writes) AddPosting(key, id uint64) { w.add(writeOp{kind: OpAddPosting, key: key, id: id}) }

// RemovePosting records Batch.RemovePosting.
func (w *Writes) RemovePosting(key, id uint64) {
	w.add(writeOp{kind: OpRemovePosting, key: key, id: id})
}

// PutDoc records Batch.PutDoc; rec is copied.
func (w *Writes) PutDoc(id uint64, rec []byte) {
	w.vals = append(w.vals, rec...)
	w.add(writeOp{kind: OpPutDoc, id: id})
}

// DeleteDoc records Batch.DeleteDoc.
func (w *Writes) DeleteDoc(id uint64) { w.add(writeOp{kind: OpDeleteDoc, id: id}) }

// PutMeta records Batch.PutMeta; value is copied.
func (w *Writes) PutMeta(name string, value []byte) {
	w.vals = append(w.vals, value...)
	w.add(writeOp{kind: OpPutMeta, name: name})
}

// DeleteMeta records Batch.DeleteMeta.
func (w *Writes) DeleteMeta(name string) { w.add(writeOp{kind: OpDeleteMeta, name: name}) }

// Len returns the number of writes recorded.
func (w *Writes) Len() int { return len(w.ops) }

// Op returns the i-th write, 0 <= i < Len. Its Value shares the recorder's
// buffer: it is valid until the next Reset, and callers that keep it copy
// it.
func (w *Writes) Op(i int) Op {
	o := w.ops[i]
	op := Op{Kind: o.kind, Key: o.key, ID: o.id, Name: o.name}
	if o.kind == OpPutDoc || o.kind == OpPutMeta {
		start := 0
		if i > 0 {
			start = w.ops[i-1].end
		}
		op.Value = w.vals[start:o.end:o.end]
	}
	return op
}

// Reset forgets the recorded writes and keeps the buffers for reuse.
func (w *Writes) Reset() {
	w.ops = w.ops[:0]
	w.vals = w.vals[:0]
}

// Replay applies the recorded writes to b, in order. The recorder keeps
// them; Reset it to start over.
func (w *Writes) Replay(b Batch) {
	for i := range w.ops {
		o := w.Op(i)
		switch o.Kind {
		case OpAddPosting:
			b.AddPosting(o.Key, o.ID)
		case OpRemovePosting:
			b.RemovePosting(o.Key, o.ID)
		case OpPutDoc:
			b.PutDoc(o.ID, o.Value)
		case OpDeleteDoc:
			b.DeleteDoc(o.ID)
		case OpPutMeta:
			b.PutMeta(o.Name, o.Value)
		case OpDeleteMeta:
			b.DeleteMeta(o.Name)
		}
	}
}
