package redis

import (
	"context"
	"encoding/binary"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// batch collects writes and sends them in one pipeline: wrapped in
// MULTI/EXEC when the store is Atomic, plain (one pipeline per master, each
// command atomic on its own) on a cluster whose keys span slots. Commands
// on one key keep their order either way, so later writes win.
type batch struct {
	store.Writes
	s      *Store
	notes  [][]byte
	closed bool
}

var _ store.JournalBatch = (*batch)(nil)

// Note implements store.JournalBatch.
func (b *batch) Note(note []byte) { b.notes = append(b.notes, slices.Clone(note)) }

// Len implements store.Batch: the writes and the notes.
func (b *batch) Len() int { return b.Writes.Len() + len(b.notes) }

func (b *batch) Close() { b.Writes, b.notes, b.closed = store.Writes{}, nil, true }

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
	if b.Len() == 0 {
		return nil
	}
	var adds []*goredis.StringCmd
	queue := func(p goredis.Pipeliner) error {
		for i := 0; i < b.Writes.Len(); {
			o := b.Op(i)
			switch o.Kind {
			case store.OpAddPosting, store.OpRemovePosting:
				n := 1
				for i+n < b.Writes.Len() {
					next := b.Op(i + n)
					if next.Kind != o.Kind || next.Key != o.Key {
						break
					}
					n++
				}
				members := make([]any, n)
				for j := range n {
					members[j] = member(b.Op(i + j).ID)
				}
				k := s.key(func(buf []byte) []byte { return s.keys.posting(buf, o.Key) })
				if o.Kind == store.OpAddPosting {
					p.SAdd(ctx, k, members...)
				} else {
					p.SRem(ctx, k, members...)
				}
				i += n
				continue
			case store.OpPutDoc:
				p.HSet(ctx, s.keys.docBucket(o.ID), docField(o.ID), o.Value)
			case store.OpDeleteDoc:
				p.HDel(ctx, s.keys.docBucket(o.ID), docField(o.ID))
			case store.OpPutMeta:
				p.HSet(ctx, s.keys.meta(), o.Name, o.Value)
			case store.OpDeleteMeta:
				p.HDel(ctx, s.keys.meta(), o.Name)
			}
			i++
		}
		adds = b.journal(ctx, p)
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
	b.Reset()
	b.notes = nil
	if len(adds) > 0 {
		// Trimming is upkeep: the batch is committed whatever it says.
		_ = s.trim(ctx, adds[len(adds)-1].Val())
	}
	return nil
}

// journalOps bounds the posting writes of one journal entry (17 bytes
// each: a batch of a whole build is logged as several entries, in order).
const journalOps = 1 << 16

// journal queues, after the batch's writes and in its transaction, the
// stream entries that log its posting writes (see Store.ReadJournal): each
// a field "o" of 17-byte records, a flag byte (1 add, 0 remove) and the
// key and id big-endian; then one entry per note, a field "n". It returns
// the XADD commands, whose values are the entries' ids once the pipeline
// ran.
func (b *batch) journal(ctx context.Context, p goredis.Pipeliner) []*goredis.StringCmd {
	var rec []byte
	var adds []*goredis.StringCmd
	n := 0
	flush := func() {
		if n > 0 {
			adds = append(adds, p.XAdd(ctx, &goredis.XAddArgs{Stream: b.s.keys.journal(), Values: []any{"o", rec}}))
			rec, n = nil, 0
		}
	}
	for i := range b.Writes.Len() {
		o := b.Op(i)
		if o.Kind != store.OpAddPosting && o.Kind != store.OpRemovePosting {
			continue
		}
		flag := byte(0)
		if o.Kind == store.OpAddPosting {
			flag = 1
		}
		rec = append(rec, flag)
		rec = binary.BigEndian.AppendUint64(rec, o.Key)
		rec = binary.BigEndian.AppendUint64(rec, o.ID)
		if n++; n == journalOps {
			flush()
		}
	}
	flush()
	for _, note := range b.notes {
		adds = append(adds, p.XAdd(ctx, &goredis.XAddArgs{Stream: b.s.keys.journal(), Values: []any{"n", note}}))
	}
	return adds
}
