// Package redis provides a store.Store kept in Redis or Redis Cluster, so
// that several processes (neardup servers on many machines) share one
// near-duplicate index and see each other's writes as soon as a batch is
// committed.
//
// Every index lives under a key prefix, so one Redis holds many indexes.
// Posting lists are Redis sets, one per lookup key (SADD, SREM, SMEMBERS;
// Manasse, "On the Efficient Determination of Most Near Neighbors" (the book)
// 3.1 and 6.1: one posting table per m-of-b combination, folded into one key
// space by the lsh package); ids are stored as signed decimal integers so
// small sets use Redis's compact integer-set encoding. Document records are
// fields of 4,096 hashes bucketed by the top twelve bits of the id, so a scan
// in id order reads one bucket at a time; metadata (the index configuration
// among it) is one more hash. A batch is sent as one pipeline wrapped in
// MULTI/EXEC, multi-key lookups as one pipeline: one round trip each. Ids
// come back from Redis unordered and are sorted here, so the store is Ordered
// like the embedded ones.
//
// On Redis Cluster (through go-redis's ClusterClient) keys spread over the
// slots of all masters, and a batch is one pipeline per master without
// MULTI/EXEC, because a Redis transaction cannot span slots: each command
// is atomic, a batch is not (a crash or a failed master in the middle of a
// Commit may leave part of it applied, which Capabilities states). A prefix
// holding a hash tag ("{idx}") puts all of an index's keys in one slot:
// batches are then MULTI/EXEC transactions again (Atomic), at the price of
// the whole index living on one master.
//
// Durability is the server's: a committed batch survives a kill -9 of
// redis-server and a crash of its machine when the server runs with
// "appendonly yes" and "appendfsync always" (the AOF is written and synced
// before the reply). Open detects that with CONFIG GET on every master and
// reports it as Capabilities().Durable; where CONFIG is disabled (managed
// services), Options.AssumeDurable states it. With replicas, a failover to
// a replica that had not received a write loses it unless the server is
// configured to wait for replicas; this package does not issue WAIT.
//
// Every batch also appends its posting writes, and the notes its writer
// adds, to a journal: a Redis stream under the prefix, written in the
// batch's own transaction (store.Journaled). A server that keeps the
// postings in memory (index.LoadPostings) replays it at start and reads
// its tail before each lookup, so it sees every other server's writes
// without asking Redis for posting sets. Each follower records how far it
// has read, and what every live follower has read is trimmed (see
// journal.go), so the journal holds about what the slowest live server
// has yet to read; a server that starts, or one silent for longer than
// Options.JournalExpiry, loads the postings themselves. On a cluster
// without a hash tag the journal is one more key in one slot, written in
// its master's pipeline: a reader may see a batch's journal entry before
// or after the batch's other writes land, as it may see any of them.
//
// This package is not an index and not a cache: it stores what package
// index writes, and keeps no copy of its own.
package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// DefaultPrefix is the key prefix when neither Options.Prefix nor the
// URL's prefix parameter gives one.
const DefaultPrefix = "neardup"

// Options configure Open. The zero value gives the defaults.
type Options struct {
	// Prefix is prepended to every key of the index, followed by ':'. It
	// may hold letters, digits and "_.-/:{}"; a hash tag in it ("{idx}")
	// keeps all keys in one cluster slot. The URL's prefix parameter
	// overrides it. The default is DefaultPrefix.
	Prefix string
	// Cluster makes a redis:// URL with a single host connect through the
	// cluster client. The redis+cluster:// scheme implies it.
	Cluster bool
	// AssumeDurable declares the server durable (appendonly yes,
	// appendfsync always) when CONFIG GET is not allowed. The default is
	// to ask the server and report it as not durable if it refuses.
	AssumeDurable bool
	// PoolSize is the number of connections per server. The default is
	// go-redis's (10 per CPU).
	PoolSize int
	// Timeout bounds one command or pipeline on the wire (dial, read,
	// write) when the caller's context has no earlier deadline. The
	// default is 10 seconds.
	Timeout time.Duration
	// JournalExpiry is how long a journal follower that stopped
	// acknowledging (a dead or paused server) keeps the entries it has
	// not read; after it, they are trimmed and the follower rebuilds its
	// postings from the store when it comes back. The URL's
	// journal_expiry parameter (a Go duration, "90s") overrides it. The
	// default is DefaultJournalExpiry.
	JournalExpiry time.Duration
}

// Store is a store.Store in Redis or Redis Cluster. It is safe for
// concurrent use. Costs: a posting lookup is one SMEMBERS round trip plus
// sorting the ids; LookupPostings and LookupDocs are one pipelined round
// trip (per master on a cluster) for any number of keys; Commit is one
// round trip per master. ScanDocs reads one bucket hash at a time (about
// n/4096 records), ScanPostings first lists every posting key of the
// index (8 bytes each in memory). The zero value is not usable.
type Store struct {
	c       goredis.UniversalClient
	cluster *goredis.ClusterClient // nil for a single server
	keys    keyspace
	caps    store.Capabilities
	closed  atomic.Bool
	bufs    sync.Pool // *[]byte for building keys
	expiry  time.Duration
	jmu     sync.Mutex // guards trimmed
	trimmed time.Time  // the last trim
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Journaled = (*Store)(nil)
)

// quietLogger drops go-redis's log lines: every failure also reaches the
// caller as an error, and libraries here never print.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quiet sync.Once

// Open connects to Redis and returns the store of the index under the
// configured prefix. url is one of
//
//	redis://[user:password@]host:port[/db][?prefix=P&option=value...]
//	rediss://...                                  (TLS)
//	redis+cluster://[user:password@]host:port,host:port,...[?prefix=P...]
//	rediss+cluster://...                          (TLS)
//
// where the options are go-redis's URL options (dial_timeout, pool_size,
// ...). Open checks the connection with PING on every master and reads the
// servers' persistence settings to fill Capabilities().Durable. o may be
// nil.
//
// go-redis logs through one process-wide logger; the first Open replaces
// it with one that drops messages (errors reach callers anyway). A program
// that wants them calls go-redis's SetLogger after Open.
func Open(ctx context.Context, rawURL string, o *Options) (*Store, error) {
	quiet.Do(func() { goredis.SetLogger(quietLogger{}) })
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	u, cluster, prefix, expiry, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if prefix != "" {
		opts.Prefix = prefix
	}
	if expiry > 0 {
		opts.JournalExpiry = expiry
	}
	if opts.JournalExpiry <= 0 {
		opts.JournalExpiry = DefaultJournalExpiry
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	cluster = cluster || opts.Cluster
	s := &Store{keys: keyspace{prefix: opts.Prefix}, expiry: opts.JournalExpiry}
	if cluster {
		co, err := goredis.ParseClusterURL(u)
		if err != nil {
			return nil, fmt.Errorf("store/redis: %s: %w", redact(rawURL), err)
		}
		co.ContextTimeoutEnabled = true
		setTimeouts(&co.DialTimeout, &co.ReadTimeout, &co.WriteTimeout, opts.Timeout)
		if opts.PoolSize > 0 {
			co.PoolSize = opts.PoolSize
		}
		s.cluster = goredis.NewClusterClient(co)
		s.c = s.cluster
	} else {
		so, err := goredis.ParseURL(u)
		if err != nil {
			return nil, fmt.Errorf("store/redis: %s: %w", redact(rawURL), err)
		}
		so.ContextTimeoutEnabled = true
		setTimeouts(&so.DialTimeout, &so.ReadTimeout, &so.WriteTimeout, opts.Timeout)
		if opts.PoolSize > 0 {
			so.PoolSize = opts.PoolSize
		}
		s.c = goredis.NewClient(so)
	}
	durable, err := s.probe(ctx)
	if err != nil {
		s.c.Close()
		return nil, fmt.Errorf("store/redis: %s: %w", redact(rawURL), err)
	}
	s.caps = store.Capabilities{
		Durable: durable || opts.AssumeDurable,
		Atomic:  s.cluster == nil || s.keys.oneSlot(),
		Ordered: true,
		Shared:  true,
	}
	s.bufs.New = func() any { b := make([]byte, 0, 64); return &b }
	return s, nil
}

func setTimeouts(dial, read, write *time.Duration, d time.Duration) {
	for _, p := range []*time.Duration{dial, read, write} {
		if *p == 0 {
			*p = d
		}
	}
}

// parseURL turns our URL forms into the one go-redis parses, and takes out
// the prefix and journal_expiry parameters, which go-redis would reject.
func parseURL(raw string) (goURL string, cluster bool, prefix string, expiry time.Duration, err error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", false, "", 0, fmt.Errorf("store/redis: %q is not a redis:// URL", redact(raw))
	}
	switch scheme {
	case "redis", "rediss":
	case "redis+cluster", "rediss+cluster":
		cluster = true
		scheme = strings.TrimSuffix(scheme, "+cluster")
	default:
		return "", false, "", 0, fmt.Errorf("store/redis: URL scheme %q, want redis, rediss, redis+cluster or rediss+cluster", scheme)
	}
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	userinfo, hosts := "", authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	hostList := strings.Split(hosts, ",")
	for _, h := range hostList {
		if h == "" {
			return "", false, "", 0, fmt.Errorf("store/redis: %s: empty host", redact(raw))
		}
	}
	if len(hostList) > 1 && !cluster {
		return "", false, "", 0, fmt.Errorf("store/redis: %s: several hosts need redis+cluster://", redact(raw))
	}
	path, query, _ := strings.Cut(tail, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", false, "", 0, fmt.Errorf("store/redis: %s: %w", redact(raw), err)
	}
	prefix = q.Get("prefix")
	q.Del("prefix")
	if e := q.Get("journal_expiry"); e != "" {
		if expiry, err = time.ParseDuration(e); err != nil || expiry <= 0 {
			return "", false, "", 0, fmt.Errorf("store/redis: %s: journal_expiry %q: want a positive duration such as 10m", redact(raw), e)
		}
	}
	q.Del("journal_expiry")
	for _, h := range hostList[1:] {
		q.Add("addr", h)
	}
	goURL = scheme + "://" + userinfo + hostList[0] + path
	if len(q) > 0 {
		goURL += "?" + q.Encode()
	}
	return goURL, cluster, prefix, expiry, nil
}

// redact hides a password in a URL for error messages.
func redact(raw string) string {
	u, err := url.Parse(strings.Replace(raw, ",", "%2C", -1))
	if err != nil || u.User == nil {
		if i := strings.LastIndexByte(raw, '@'); i >= 0 {
			return "redis://…@" + raw[i+1:]
		}
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	s, _ := url.PathUnescape(u.String())
	return s
}

// probe pings every master and reports whether all of them run with
// appendonly yes and appendfsync always. A refused CONFIG GET counts as not
// durable, not as an error.
func (s *Store) probe(ctx context.Context) (bool, error) {
	var mu sync.Mutex
	durable := true
	check := func(ctx context.Context, c *goredis.Client) error {
		if err := c.Ping(ctx).Err(); err != nil {
			return err
		}
		d := false
		aof, err1 := c.ConfigGet(ctx, "appendonly").Result()
		fsync, err2 := c.ConfigGet(ctx, "appendfsync").Result()
		if err1 == nil && err2 == nil {
			d = aof["appendonly"] == "yes" && fsync["appendfsync"] == "always"
		}
		mu.Lock()
		durable = durable && d
		mu.Unlock()
		return nil
	}
	if s.cluster != nil {
		if err := s.cluster.ForEachMaster(ctx, check); err != nil {
			return false, err
		}
		return durable, nil
	}
	return durable, check(ctx, s.c.(*goredis.Client))
}

// Prefix returns the key prefix of the index.
func (s *Store) Prefix() string { return s.keys.prefix }

// Capabilities implements store.Store: Ordered and Shared always; Atomic on
// a single server, or on a cluster when the prefix holds a hash tag;
// Durable when every master runs with appendonly yes and appendfsync
// always (or Options.AssumeDurable).
func (s *Store) Capabilities() store.Capabilities { return s.caps }

// Close implements store.Store: it closes the connections.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return store.ErrClosed
	}
	return s.c.Close()
}

// wrap turns a go-redis error into ours.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	if s.closed.Load() || errors.Is(err, goredis.ErrClosed) {
		return store.ErrClosed
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("store/redis: %w", err)
}

func (s *Store) key(f func(dst []byte) []byte) string {
	bp := s.bufs.Get().(*[]byte)
	b := f((*bp)[:0])
	k := string(b)
	*bp = b
	s.bufs.Put(bp)
	return k
}

// appendIDs parses set members (signed decimal ids) and appends them.
func appendIDs(dst []uint64, members []string) ([]uint64, error) {
	for _, m := range members {
		v, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			return dst, fmt.Errorf("%w: posting member %q", store.ErrCorrupt, m)
		}
		dst = append(dst, uint64(v))
	}
	return dst, nil
}

func member(id uint64) string { return strconv.FormatInt(int64(id), 10) }

// Postings implements store.Store.
func (s *Store) Postings(ctx context.Context, key uint64, dst []uint64) ([]uint64, error) {
	if s.closed.Load() {
		return dst, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	k := s.key(func(b []byte) []byte { return s.keys.posting(b, key) })
	members, err := s.c.SMembers(ctx, k).Result()
	if err != nil {
		return dst, s.wrap(err)
	}
	n := len(dst)
	dst, err = appendIDs(dst, members)
	slices.Sort(dst[n:])
	return dst, err
}

// LookupPostings implements store.Store: one pipeline of SMEMBERS.
func (s *Store) LookupPostings(ctx context.Context, keys []uint64, fn func(i int, ids []uint64) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	cmds := make([]*goredis.StringSliceCmd, len(keys))
	_, err := s.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, key := range keys {
			cmds[i] = p.SMembers(ctx, s.key(func(b []byte) []byte { return s.keys.posting(b, key) }))
		}
		return nil
	})
	if err != nil {
		return s.wrap(err)
	}
	var ids []uint64
	for i, c := range cmds {
		if ids, err = appendIDs(ids[:0], c.Val()); err != nil {
			return err
		}
		slices.Sort(ids)
		if err := fn(i, ids); err != nil {
			return err
		}
	}
	return nil
}

// Doc implements store.Store.
func (s *Store) Doc(ctx context.Context, id uint64, dst []byte) ([]byte, bool, error) {
	if s.closed.Load() {
		return dst, false, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return dst, false, err
	}
	rec, err := s.c.HGet(ctx, s.keys.docBucket(id), docField(id)).Result()
	if errors.Is(err, goredis.Nil) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, s.wrap(err)
	}
	return append(dst, rec...), true, nil
}

// LookupDocs implements store.Store: one pipeline of HGET.
func (s *Store) LookupDocs(ctx context.Context, ids []uint64, fn func(i int, rec []byte, ok bool) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	cmds := make([]*goredis.StringCmd, len(ids))
	_, err := s.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGet(ctx, s.keys.docBucket(id), docField(id))
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return s.wrap(err)
	}
	var rec []byte
	for i, c := range cmds {
		v, err := c.Result()
		ok := true
		switch {
		case errors.Is(err, goredis.Nil):
			ok = false
		case err != nil:
			return s.wrap(err)
		}
		rec = append(rec[:0], v...)
		if err := fn(i, rec, ok); err != nil {
			return err
		}
	}
	return nil
}

// Meta implements store.Store.
func (s *Store) Meta(ctx context.Context, name string, dst []byte) ([]byte, bool, error) {
	if s.closed.Load() {
		return dst, false, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return dst, false, err
	}
	v, err := s.c.HGet(ctx, s.keys.meta(), name).Result()
	if errors.Is(err, goredis.Nil) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, s.wrap(err)
	}
	return append(dst, v...), true, nil
}

// ScanDocs implements store.Store. It asks every bucket's size in one
// pipeline, then reads each non-empty bucket with HSCAN in order of the
// buckets and calls fn in increasing id order within each, so it holds one
// bucket (about n/4096 records) at a time.
func (s *Store) ScanDocs(ctx context.Context, fn func(id uint64, rec []byte) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	lens := make([]*goredis.IntCmd, numBuckets)
	_, err := s.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for b := range lens {
			lens[b] = p.HLen(ctx, s.keys.bucket(uint16(b)))
		}
		return nil
	})
	if err != nil {
		return s.wrap(err)
	}
	type entry struct {
		id  uint64
		rec string
	}
	var entries []entry
	for b, l := range lens {
		if l.Val() == 0 {
			continue
		}
		entries = entries[:0]
		key := s.keys.bucket(uint16(b))
		var cursor uint64
		for {
			kv, next, err := s.c.HScan(ctx, key, cursor, "", 512).Result()
			if err != nil {
				return s.wrap(err)
			}
			for i := 0; i+1 < len(kv); i += 2 {
				id, ok := parseDocField(kv[i])
				if !ok {
					return fmt.Errorf("%w: document field %q in %q", store.ErrCorrupt, kv[i], key)
				}
				entries = append(entries, entry{id, kv[i+1]})
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		// HSCAN may return an element more than once.
		slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
		entries = slices.CompactFunc(entries, func(a, b entry) bool { return a.id == b.id })
		var rec []byte
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec = append(rec[:0], e.rec...)
			if err := fn(e.id, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// ScanPostings implements store.Store. It lists the index's posting keys
// with SCAN (on every master of a cluster), sorts them, and reads their
// sets 256 at a time in one pipeline each.
func (s *Store) ScanPostings(ctx context.Context, fn func(key, id uint64) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var mu sync.Mutex
	var keys []uint64
	pattern := s.keys.postingPattern()
	scan := func(ctx context.Context, c goredis.Cmdable) error {
		var cursor uint64
		for {
			names, next, err := c.ScanType(ctx, cursor, pattern, 1000, "set").Result()
			if err != nil {
				return err
			}
			mu.Lock()
			for _, n := range names {
				if k, ok := s.keys.parsePosting(n); ok {
					keys = append(keys, k)
				}
			}
			mu.Unlock()
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var err error
	if s.cluster != nil {
		err = s.cluster.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, s.c)
	}
	if err != nil {
		return s.wrap(err)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	const chunk = 256
	for len(keys) > 0 {
		n := min(chunk, len(keys))
		err := s.LookupPostings(ctx, keys[:n], func(i int, ids []uint64) error {
			for _, id := range ids {
				if err := fn(keys[i], id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// NewBatch implements store.Store.
func (s *Store) NewBatch() store.Batch { return &batch{s: s} }
