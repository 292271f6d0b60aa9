package redis

import (
	"context"
	"encoding/binary"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

type opKind uint8

const (
	opAdd opKind = iota
	opRemove
	opPutDoc
	opDeleteDoc
	opPutMeta
	opDeleteMeta
)

type op struct {
	kind    opKind
	key, id uint64
	name    string
	value   []byte
}

// batch collects writes and sends them in one pipeline: wrapped in
// MULTI/EXEC when the store is Atomic, plain (one pipeline per master, each
// command atomic on its own) on a cluster whose keys span slots. Commands
// on one key keep their order either way, so later writes win.
type batch struct {
	s      *Store
	ops    []op
	notes  [][]byte
	closed bool
}

var _ store.JournalBatch = (*batch)(nil)

// Note implements store.JournalBatch.
func (b *batch) Note(note []byte) { b.notes = append(b.notes, slices.Clone(note)) }

func (b *batch) AddPosting(key, id uint64) {
	b.ops = append(b.ops, op{kind: opAdd, key: key, id: id})
}

func (b *batch) RemovePosting(key, id uint64) {
	b.ops = append(b.ops, op{kind: opRemove, key: key, id: id})
}

func (b *batch) PutDoc(id uint64, rec []byte) {
	b.ops = append(b.ops, op{kind: opPutDoc, id: id, value: slices.Clone(rec)})
}

func (b *batch) DeleteDoc(id uint64) { b.ops = append(b.ops, op{kind: opDeleteDoc, id: id}) }

func (b *batch) PutMeta(name string, value []byte) {
	b.ops = append(b.ops, op{kind: opPutMeta, name: name, value: slices.Clone(value)})
}

func (b *batch) DeleteMeta(name string) { b.ops = append(b.ops, op{kind: opDeleteMeta, name: name}) }

func (b *batch) Len() int { return len(b.ops) + len(b.notes) }

func (b *batch) Close() { b.ops, b.notes, b.closed = nil, nil, true }

// Commit implements store.Batch. Runs of AddPosting (or RemovePosting) on
// one key become one SADD (SREM) with many members.
func (b *batch) Commit(ctx context.Context) error {
	if b.closed {
		return store.ErrClosed
	}
	s := b.s
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(b.ops) == 0 && len(b.notes) == 0 {
		return nil
	}
	queue := func(p goredis.Pipeliner) error {
		ops := b.ops
		for len(ops) > 0 {
			o := ops[0]
			switch o.kind {
			case opAdd, opRemove:
				n := 1
				for n < len(ops) && ops[n].kind == o.kind && ops[n].key == o.key {
					n++
				}
				members := make([]any, n)
				for i := range n {
					members[i] = member(ops[i].id)
				}
				k := s.key(func(buf []byte) []byte { return s.keys.posting(buf, o.key) })
				if o.kind == opAdd {
					p.SAdd(ctx, k, members...)
				} else {
					p.SRem(ctx, k, members...)
				}
				ops = ops[n:]
				continue
			case opPutDoc:
				p.HSet(ctx, s.keys.docBucket(o.id), docField(o.id), o.value)
			case opDeleteDoc:
				p.HDel(ctx, s.keys.docBucket(o.id), docField(o.id))
			case opPutMeta:
				p.HSet(ctx, s.keys.meta(), o.name, o.value)
			case opDeleteMeta:
				p.HDel(ctx, s.keys.meta(), o.name)
			}
			ops = ops[1:]
		}
		b.journal(ctx, p)
		return nil
	}
	var err error
	if s.caps.Atomic {
		_, err = s.c.TxPipelined(ctx, queue)
	} else {
		_, err = s.c.Pipelined(ctx, queue)
	}
	if err != nil {
		return s.wrap(err)
	}
	b.ops, b.notes = b.ops[:0], nil
	return nil
}

// journalOps bounds the posting writes of one journal entry (17 bytes
// each: a batch of a whole build is logged as several entries, in order).
const journalOps = 1 << 16

// journal queues, after the batch's writes and in its transaction, the
// stream entries that log its posting writes (see Store.ReadJournal): each
// a field "o" of 17-byte records, a flag byte (1 add, 0 remove) and the
// key and id big-endian; then one entry per note, a field "n".
func (b *batch) journal(ctx context.Context, p goredis.Pipeliner) {
	var rec []byte
	n := 0
	flush := func() {
		if n > 0 {
			p.XAdd(ctx, &goredis.XAddArgs{Stream: b.s.keys.journal(), Values: []any{"o", rec}})
			rec, n = nil, 0
		}
	}
	for _, o := range b.ops {
		if o.kind != opAdd && o.kind != opRemove {
			continue
		}
		flag := byte(0)
		if o.kind == opAdd {
			flag = 1
		}
		rec = append(rec, flag)
		rec = binary.BigEndian.AppendUint64(rec, o.key)
		rec = binary.BigEndian.AppendUint64(rec, o.id)
		if n++; n == journalOps {
			flush()
		}
	}
	flush()
	for _, note := range b.notes {
		p.XAdd(ctx, &goredis.XAddArgs{Stream: b.s.keys.journal(), Values: []any{"n", note}})
	}
}
