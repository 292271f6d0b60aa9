package redis

import (
	"context"

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
	closed bool
}

func (b *batch) Close() { b.Writes, b.closed = store.Writes{}, true }

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
	queue := func(p goredis.Pipeliner) error {
		for i := 0; i < b.Len(); {
			o := b.Op(i)
			switch o.Kind {
			case store.OpAddPosting, store.OpRemovePosting:
				n := 1
				for i+n < b.Len() {
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
	return nil
}
