package redis

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// The journal (store.Journaled) is the stream P:j: one entry per batch's
// posting writes (field "o", 17-byte records), one per note (field "n"),
// and a marker (field "m", empty) where a follower joined an empty
// journal. Followers are fields of the hash P:jr: reader name → "<stream
// id> <unix milliseconds>", the last position the reader acknowledged and
// when. Trimming (XTRIM MINID, exact) keeps the entries from the lowest
// position of the live followers on — the entry at that position too, so
// a follower whose position is still in the stream knows that nothing
// after it was trimmed; a follower whose heartbeat is older than the
// expiry is dropped from P:jr and no longer holds entries. With no live
// follower a writer trims up to its own last entry. Trims run at most once
// per trimEvery per Store, after a Commit and after an acknowledgement.
// Followers' fields are read and changed by Lua scripts on P:jr alone
// (atomic, and a single key, so they run on a cluster too): a follower
// coming back after the expiry either finds its field gone — and rebuilds
// — or refreshes it before any trim can count it out.
//
// Clocks: a heartbeat is the follower's clock, its age is judged by the
// trimmer's; machines whose clocks differ by a fair part of the expiry
// should use a longer one.

// DefaultJournalExpiry is how long a silent follower keeps its place
// when neither Options.JournalExpiry nor the URL's journal_expiry
// parameter gives another.
const DefaultJournalExpiry = 10 * time.Minute

// trimEvery bounds how often one Store trims.
const trimEvery = time.Second

// journalRead is the number of journal entries one XRANGE reads.
const journalRead = 512

// FollowJournal implements store.Journaled: the journal's last entry
// (XREVRANGE, or a marker XADDed to an empty journal) registered in P:jr.
func (s *Store) FollowJournal(ctx context.Context, reader string) (string, error) {
	if s.closed.Load() {
		return "", store.ErrClosed
	}
	last, err := s.c.XRevRangeN(ctx, s.keys.journal(), "+", "-", 1).Result()
	if err != nil {
		return "", s.wrap(err)
	}
	var pos string
	if len(last) > 0 {
		pos = last[0].ID
	} else if pos, err = s.c.XAdd(ctx, &goredis.XAddArgs{Stream: s.keys.journal(), Values: []any{"m", ""}}).Result(); err != nil {
		return "", s.wrap(err)
	}
	if err := s.c.HSet(ctx, s.keys.readers(), reader, heartbeat(pos, time.Now())).Err(); err != nil {
		return "", s.wrap(err)
	}
	return pos, nil
}

func heartbeat(pos string, t time.Time) string {
	return pos + " " + strconv.FormatInt(t.UnixMilli(), 10)
}

// ReadJournal implements store.Journaled: XRANGE over the journal stream
// from just after after, journalRead entries per round trip. Positions
// are stream entry ids.
func (s *Store) ReadJournal(ctx context.Context, after string, fn func(key, id uint64, add bool, note []byte) error) (string, error) {
	if s.closed.Load() {
		return after, store.ErrClosed
	}
	for {
		if err := ctx.Err(); err != nil {
			return after, err
		}
		start := "-"
		if after != "" {
			start = "(" + after
		}
		msgs, err := s.c.XRangeN(ctx, s.keys.journal(), start, "+", journalRead).Result()
		if err != nil {
			return after, s.wrap(err)
		}
		for _, m := range msgs {
			if v, ok := m.Values["n"].(string); ok {
				if err := fn(0, 0, false, []byte(v)); err != nil {
					return after, err
				}
				after = m.ID
				continue
			}
			v, _ := m.Values["o"].(string)
			if len(v)%17 != 0 {
				return after, fmt.Errorf("%w: journal entry %s of %d bytes", store.ErrCorrupt, m.ID, len(v))
			}
			for i := 0; i < len(v); i += 17 {
				key := binary.BigEndian.Uint64([]byte(v[i+1 : i+9]))
				id := binary.BigEndian.Uint64([]byte(v[i+9 : i+17]))
				if err := fn(key, id, v[i] == 1, nil); err != nil {
					return after, err
				}
			}
			after = m.ID
		}
		if len(msgs) < journalRead {
			return after, nil
		}
	}
}

// ackScript sets a follower's field of P:jr and returns whether it was
// there: one atomic step on one key, so that a trim that drops the
// follower as expired either happens before (the follower learns it was
// dropped) or sees the new heartbeat.
var ackScript = goredis.NewScript(`
local had = redis.call('HEXISTS', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return had`)

// liveScript drops the followers of P:jr whose heartbeat (or field) is
// older than ARGV[2] milliseconds at ARGV[1] (unix milliseconds) or
// malformed, and returns the positions of the others: atomic on one key,
// as ackScript.
var liveScript = goredis.NewScript(`
local all = redis.call('HGETALL', KEYS[1])
local now, expiry = tonumber(ARGV[1]), tonumber(ARGV[2])
local live = {}
for i = 1, #all, 2 do
  local pos, ms = string.match(all[i+1], '^(%S+) (%d+)$')
  if ms == nil or now - tonumber(ms) > expiry then
    redis.call('HDEL', KEYS[1], all[i])
  else
    table.insert(live, pos)
  end
end
return live`)

// AckJournal implements store.Journaled: the reader's position and
// heartbeat set in P:jr (ackScript), then a trim (at most one per second
// per Store). A reader that was no longer registered — dropped as expired,
// so the entries after its position may be trimmed — gets
// store.ErrJournalTrimmed (and is registered again at pos).
func (s *Store) AckJournal(ctx context.Context, reader, pos string) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	had, err := ackScript.Run(ctx, s.c, []string{s.keys.readers()}, reader, heartbeat(pos, time.Now())).Int()
	if err != nil {
		return s.wrap(err)
	}
	if had == 0 {
		return store.ErrJournalTrimmed
	}
	return s.trim(ctx, "")
}

// LeaveJournal implements store.Journaled.
func (s *Store) LeaveJournal(ctx context.Context, reader string) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.wrap(s.c.HDel(ctx, s.keys.readers(), reader).Err())
}

// JournalSize implements store.Journaled: XLEN and MEMORY USAGE (bytes
// -1 where MEMORY is not allowed).
func (s *Store) JournalSize(ctx context.Context) (entries, bytes int64, err error) {
	if s.closed.Load() {
		return 0, 0, store.ErrClosed
	}
	if entries, err = s.c.XLen(ctx, s.keys.journal()).Result(); err != nil {
		return 0, 0, s.wrap(err)
	}
	bytes, err = s.c.MemoryUsage(ctx, s.keys.journal()).Result()
	switch {
	case errors.Is(err, goredis.Nil):
		return entries, 0, nil // no journal yet
	case err != nil:
		return entries, -1, nil
	}
	return entries, bytes, nil
}

// trim removes the journal entries below the lowest position of the live
// followers (liveScript drops the expired ones), or with none below last
// (a writer's last entry; "" trims nothing then). It runs at most once per
// trimEvery per Store.
func (s *Store) trim(ctx context.Context, last string) error {
	now := time.Now()
	s.jmu.Lock()
	if now.Sub(s.trimmed) < trimEvery {
		s.jmu.Unlock()
		return nil
	}
	s.trimmed = now
	s.jmu.Unlock()
	live, err := liveScript.Run(ctx, s.c, []string{s.keys.readers()}, now.UnixMilli(), s.expiry.Milliseconds()).StringSlice()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return s.wrap(err)
	}
	var low streamID
	found := false
	for _, pos := range live {
		if id, ok := parseStreamID(pos); ok && (!found || id.less(low)) {
			low, found = id, true
		}
	}
	if !found {
		if low, found = parseStreamID(last); !found {
			return nil
		}
	}
	return s.wrap(s.c.XTrimMinID(ctx, s.keys.journal(), low.String()).Err())
}

// streamID is a Redis stream entry id, ms-seq.
type streamID struct{ ms, seq uint64 }

func parseStreamID(s string) (streamID, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return streamID{}, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return streamID{ms, seq}, err1 == nil && err2 == nil
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }

func (a streamID) String() string {
	return strconv.FormatUint(a.ms, 10) + "-" + strconv.FormatUint(a.seq, 10)
}
