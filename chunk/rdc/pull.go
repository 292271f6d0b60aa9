package rdc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/neardup/neardup/chunk"
)

// PullOptions configure Pull. The zero value: keep local entries the
// server lacks, three tries per batch.
type PullOptions struct {
	// Delete removes local entries the server does not have.
	Delete bool
	// Tries bounds the fetches of one batch of chunks whose data fails its
	// check (a corrupted transfer). The default is 3.
	Tries int
	// Candidates is the number of similar local files, besides the file of
	// the same path, whose chunks a changed file may reuse. The default
	// is 4.
	Candidates int
	// BatchBytes is the estimated size of one chunks request. The default
	// is 4 MiB.
	BatchBytes int64
	// Workers is the number of chunk requests in flight. The default is 3.
	Workers int
	// DictBytes bounds the dictionary of one chunks request: the bytes of
	// the batch's files the receiver rebuilds from its own files, against
	// which the server compresses the chunks it sends (ChunksReq). The
	// default is MaxDictBytes; negative: no dictionary.
	DictBytes int64

	// tamperDict, in tests, changes a dictionary as read from the local
	// files (a receiver whose copy differs from the server's).
	tamperDict func([]byte)
}

// Stats says what a pull did.
type Stats struct {
	// BytesSent and BytesReceived count the wire (HTTP included);
	// RoundTrips the requests.
	BytesSent, BytesReceived int64
	RoundTrips               int64
	// Files is the number of files served; Unchanged were in place, Copied
	// were rebuilt from local files alone, Written needed chunks from the
	// server. Dirs and Symlinks count those entries.
	Files, Unchanged, Copied, Written int
	Dirs, Symlinks                    int
	// Chunks reused from the local file of the same path and from other
	// local files, and fetched from the server (with their bytes before
	// compression).
	ChunksSamePath, ChunksOtherFile, ChunksFetched int64
	BytesSamePath, BytesOtherFile, BytesFetched    int64
	// Retries counts batches fetched again after a failed check, Refetched
	// files fetched whole after their rebuilt root did not match.
	Retries, Refetched int
	// DictBytes counts the dictionary bytes of the chunks replies received
	// (the receiver's own bytes, not on the wire); DictRefused the batches
	// whose dictionary the server refused (fetched again without one).
	DictBytes   int64
	DictRefused int
	// Deleted counts local entries removed (Delete).
	Deleted int
	// Refused lists entries not written, with the reason (unsafe symbolic
	// links).
	Refused []string
	Seconds float64
}

// ErrRefused is returned (after everything else is done) when some
// entries were refused; Stats.Refused lists them.
var ErrRefused = errors.New("rdc: entries refused")

// ErrVerify reports a file whose rebuilt bytes do not match the server's
// signature root even when fetched whole.
var ErrVerify = errors.New("rdc: rebuilt file does not match the server's signature root")

// piece is a stretch of a new file: bytes of a local file, a chunk to
// fetch, or (while the signature is explored) a node not yet resolved.
type piece struct {
	kind  uint8 // pLocal, pFetch, pNode
	src   int   // local file (pLocal)
	off   int64 // in the local file (pLocal)
	n     int64 // length (pLocal)
	same  bool  // src is the file of the same path
	leaf  int   // first chunk of the piece in the new file
	count int   // chunks covered
	sum   Short // expected hash (pFetch with check, pNode)
	check bool  // sum is known (pFetch)
	level int   // pNode
	index int   // pNode
}

const (
	pLocal = iota
	pFetch
	pNode
)

// job is a file to write.
type job struct {
	entry  int // manifest entry
	pieces []piece
	whole  bool // fetched whole already (no second chance)
	// data holds fetched chunks by chunk index until the file is written.
	data  map[int][]byte
	need  int
	cands []int
	tries int

	// The file is written as its pieces become available, in order:
	// mu guards the writer state below.
	mu       sync.Mutex
	w        *fileWriter
	next     int // next piece to write
	nextLeaf int // next chunk to write within a fetched piece
	complete bool
}

// fileWriter is a file being written: a temporary file beside its place,
// and the signer that checks it as the bytes go by.
type fileWriter struct {
	dir     *os.Root
	base    string
	tmp     string
	release func()
	f       *os.File
	pw      *io.PipeWriter
	out     io.Writer
	done    chan signed
	srcs    map[int]*os.File
}

type signed struct {
	sig *chunk.Signature
	err error
}

type puller struct {
	ctx    context.Context
	c      *Client
	dir    string
	root   *os.Root
	o      PullOptions
	m      *Manifest
	local  *Tree
	st     Stats
	mu     sync.Mutex
	stage  string
	staged map[int]string
	signer sync.Pool
	dmu    sync.Mutex
	dirs   map[string]*os.Root // opened directories, by path (writeFiles)
}

// dirOf returns the directory holding name, opened as a Root (cached, so
// that operations on the file resolve one name, not the whole path), and
// the file's base name.
// At most maxDirs directories stay open; beyond, each use opens its own.
func (p *puller) dirOf(name string) (*os.Root, string, func(), error) {
	d, base := path.Dir(name), path.Base(name)
	if d == "." {
		return p.root, base, func() {}, nil
	}
	p.dmu.Lock()
	defer p.dmu.Unlock()
	if r, ok := p.dirs[d]; ok {
		return r, base, func() {}, nil
	}
	r, err := p.root.OpenRoot(d)
	if err != nil {
		return nil, "", nil, err
	}
	if len(p.dirs) >= maxDirs {
		return r, base, func() { r.Close() }, nil
	}
	if p.dirs == nil {
		p.dirs = map[string]*os.Root{}
	}
	p.dirs[d] = r
	return r, base, func() {}, nil
}

const maxDirs = 256

func (p *puller) closeDirs() {
	p.dmu.Lock()
	defer p.dmu.Unlock()
	for _, r := range p.dirs {
		r.Close()
	}
	p.dirs = nil
}

// Pull makes dir equal to the tree c serves: contents, modes, symbolic
// links and directories (and, with Delete, nothing else). dir must exist.
// Every file is verified against the server's signature root before it
// is renamed into place; an error leaves every file either as it was or
// complete and verified. Run again after any failure, it continues: files
// in place are not fetched again.
func Pull(ctx context.Context, c *Client, dir string, o PullOptions) (*Stats, error) {
	start := time.Now()
	if o.Tries <= 0 {
		o.Tries = 3
	}
	if o.Candidates <= 0 {
		o.Candidates = 4
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 4 << 20
	}
	if o.Workers <= 0 {
		o.Workers = 3
	}
	if o.DictBytes == 0 || o.DictBytes > MaxDictBytes {
		o.DictBytes = MaxDictBytes
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	p := &puller{ctx: ctx, c: c, dir: dir, root: root, o: o, staged: map[int]string{}}
	err = p.run()
	if p.stage != "" {
		if rerr := root.RemoveAll(p.stage); err == nil && rerr != nil {
			err = rerr
		}
	}
	p.st.BytesSent, p.st.BytesReceived, p.st.RoundTrips = c.Counts()
	p.st.Seconds = time.Since(start).Seconds()
	if err == nil && len(p.st.Refused) > 0 {
		err = fmt.Errorf("%w: %d (first: %s)", ErrRefused, len(p.st.Refused), p.st.Refused[0])
	}
	return &p.st, err
}

func (p *puller) run() error {
	m, err := p.c.Manifest(p.ctx)
	if err != nil {
		return err
	}
	p.m = m
	if err := p.cleanLeftovers(); err != nil {
		return err
	}
	p.local, err = Scan(p.ctx, p.dir, m.Chunk)
	if err != nil {
		return err
	}
	jobs, err := p.plan()
	if err != nil {
		return err
	}
	if err := p.explore(jobs); err != nil {
		return err
	}
	if err := p.stageSources(jobs); err != nil {
		return err
	}
	if err := p.makeDirs(); err != nil {
		return err
	}
	err = p.writeFiles(jobs)
	p.closeDirs()
	if err != nil {
		return err
	}
	if err := p.makeLinks(); err != nil {
		return err
	}
	if p.o.Delete {
		if err := p.deleteExtra(); err != nil {
			return err
		}
	}
	return p.setDirModes()
}

// cleanLeftovers removes the temporary files of an interrupted pull.
func (p *puller) cleanLeftovers() error {
	return fs.WalkDir(p.root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			return nil
		}
		if len(d.Name()) > len(tempPrefix) && d.Name()[:len(tempPrefix)] == tempPrefix {
			if err := p.root.RemoveAll(name); err != nil {
				return err
			}
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
}

// plan classifies every served file and lists the files to write.
func (p *puller) plan() ([]*job, error) {
	lt := p.local
	byPath := make(map[string]int, len(lt.Manifest.Entries))
	byRoot := make(map[chunk.Sum]int)
	ix := newSketchIndex(lt)
	for i, e := range lt.Manifest.Entries {
		byPath[e.Path] = i
		if e.Kind != File {
			continue
		}
		if _, ok := byRoot[e.Root]; !ok {
			byRoot[e.Root] = i
		}
	}
	var jobs []*job
	for i, e := range p.m.Entries {
		switch e.Kind {
		case Dir:
			p.st.Dirs++
			continue
		case Symlink:
			p.st.Symlinks++
			continue
		}
		p.st.Files++
		li, hasPath := byPath[e.Path]
		if !hasPath {
			li = -1
		}
		ok := hasPath
		if ok && lt.Manifest.Entries[li].Kind == File && lt.Manifest.Entries[li].Root == e.Root {
			p.st.Unchanged++
			p.st.ChunksSamePath += int64(e.Chunks)
			p.st.BytesSamePath += e.Size
			if lt.Manifest.Entries[li].Mode != e.Mode {
				if err := p.root.Chmod(e.Path, e.Mode); err != nil {
					return nil, err
				}
			}
			continue
		}
		j := &job{entry: i}
		jobs = append(jobs, j)
		if e.Size == 0 {
			continue
		}
		if src, ok := byRoot[e.Root]; ok {
			same := src == li
			j.pieces = []piece{{kind: pLocal, src: src, n: e.Size, same: same, count: e.Chunks}}
			continue
		}
		var cands []int
		if ok && lt.Manifest.Entries[li].Kind == File && lt.Manifest.Entries[li].Size > 0 {
			cands = append(cands, li)
		}
		for _, c := range ix.query(nil, e.Sketch, 3, p.o.Candidates+1) {
			if c != li && len(cands) < p.o.Candidates+1 {
				cands = append(cands, c)
			}
		}
		if e.Depth == 0 || len(cands) == 0 {
			j.pieces = []piece{{kind: pFetch, leaf: 0, count: e.Chunks, sum: ShortOf(e.Root), check: e.Chunks == 1}}
			j.whole = true
			continue
		}
		j.pieces = []piece{{kind: pNode, level: e.Depth - 1, index: 0, leaf: 0, count: e.Chunks, sum: ShortOf(e.Root)}}
		j.data = map[int][]byte{}
		j.cands = cands
	}
	return jobs, nil
}

// explore walks the signatures of the changed files top-down, a level per
// round trip for all files at once: a node held by a candidate source is
// taken from it, the others are asked for their children, down to chunks.
func (p *puller) explore(jobs []*job) error {
	hold := newHoldIndex(p.local)
	type owner struct {
		j *job
		k int
	}
	for {
		var reqs []NodeReq
		var owners []owner
		for _, j := range jobs {
			for k, pc := range j.pieces {
				if pc.kind == pNode {
					reqs = append(reqs, NodeReq{File: j.entry, Level: pc.level, Index: pc.index})
					owners = append(owners, owner{j, k})
				}
			}
		}
		if len(reqs) == 0 {
			break
		}
		resps := make([]NodeResp, 0, len(reqs))
		for lo := 0; lo < len(reqs); lo += MaxNodeReqs {
			r, err := p.c.Nodes(p.ctx, reqs[lo:min(lo+MaxNodeReqs, len(reqs))])
			if err != nil {
				return err
			}
			resps = append(resps, r...)
		}
		expanded := make(map[*job][][]piece)
		for i, ow := range owners {
			pc := ow.j.pieces[ow.k]
			cands := ow.j.cands
			samePath := p.local.Manifest.Entries[cands[0]].Path == p.m.Entries[ow.j.entry].Path
			var out []piece
			leaf := pc.leaf
			for k, ch := range resps[i].Children {
				switch c, ok := find(hold.chunks, ch.Sum, cands, 1); {
				case pc.level == 0 && ok:
					out = append(out, piece{kind: pLocal, src: c.src, off: c.off, n: c.n, same: samePath && c.src == cands[0], leaf: leaf, count: 1})
				case pc.level == 0:
					out = append(out, piece{kind: pFetch, leaf: leaf, count: 1, sum: ch.Sum, check: true})
				default:
					if c, ok := find(hold.nodes, ch.Sum, cands, ch.Chunks); ok {
						out = append(out, piece{kind: pLocal, src: c.src, off: c.off, n: c.n, same: samePath && c.src == cands[0], leaf: leaf, count: ch.Chunks})
					} else {
						out = append(out, piece{kind: pNode, level: pc.level - 1, index: resps[i].Lo + k, leaf: leaf, count: ch.Chunks, sum: ch.Sum})
					}
				}
				leaf += ch.Chunks
			}
			if leaf-pc.leaf != pc.count || len(out) == 0 {
				return fmt.Errorf("%w: node %d/%d of %s covers %d chunks, want %d", ErrFormat, pc.level, pc.index,
					p.m.Entries[ow.j.entry].Path, leaf-pc.leaf, pc.count)
			}
			if expanded[ow.j] == nil {
				expanded[ow.j] = make([][]piece, len(ow.j.pieces))
			}
			expanded[ow.j][ow.k] = out
		}
		for j, ex := range expanded {
			var ps []piece
			for k, pc := range j.pieces {
				if ex[k] != nil {
					ps = append(ps, ex[k]...)
				} else {
					ps = append(ps, pc)
				}
			}
			j.pieces = ps
		}
	}
	for _, j := range jobs {
		for _, pc := range j.pieces {
			switch {
			case pc.kind == pLocal && pc.same:
				p.st.ChunksSamePath += int64(pc.count)
				p.st.BytesSamePath += pc.n
			case pc.kind == pLocal:
				p.st.ChunksOtherFile += int64(pc.count)
				p.st.BytesOtherFile += pc.n
			}
		}
	}
	return nil
}

// stageSources links every local file a new file copies from into a
// staging directory, so that it stays readable after its own path is
// replaced.
func (p *puller) stageSources(jobs []*job) error {
	for _, j := range jobs {
		for _, pc := range j.pieces {
			if pc.kind != pLocal {
				continue
			}
			if _, ok := p.staged[pc.src]; ok {
				continue
			}
			if p.stage == "" {
				p.stage = tempPrefix + "stage-" + randHex()
				if err := p.root.Mkdir(p.stage, 0o700); err != nil {
					return err
				}
			}
			name := p.stage + "/" + strconv.Itoa(pc.src)
			from := p.local.Manifest.Entries[pc.src].Path
			if err := p.root.Link(from, name); err != nil {
				if err := p.copyLocal(from, name); err != nil {
					return err
				}
			}
			p.staged[pc.src] = name
		}
	}
	return nil
}

func (p *puller) copyLocal(from, to string) error {
	src, err := p.root.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := p.root.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

func randHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// makeDirs makes every served directory a real directory (writable by us
// until setDirModes).
func (p *puller) makeDirs() error {
	for _, e := range p.m.Entries {
		if e.Kind != Dir {
			continue
		}
		fi, err := p.root.Lstat(e.Path)
		switch {
		case err == nil && fi.IsDir():
			if fi.Mode().Perm()&0o700 != 0o700 {
				if err := p.root.Chmod(e.Path, fi.Mode().Perm()|0o700); err != nil {
					return err
				}
			}
			continue
		case err == nil:
			if err := p.root.RemoveAll(e.Path); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := p.root.Mkdir(e.Path, 0o700); err != nil {
			return err
		}
	}
	return nil
}

func (p *puller) setDirModes() error {
	for i := len(p.m.Entries) - 1; i >= 0; i-- {
		e := p.m.Entries[i]
		if e.Kind != Dir {
			continue
		}
		fi, err := p.root.Lstat(e.Path)
		if err != nil {
			return err
		}
		if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != e.Mode {
			if err := p.root.Chmod(e.Path, e.Mode); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *puller) makeLinks() error {
	for _, e := range p.m.Entries {
		if e.Kind != Symlink {
			continue
		}
		if !LinkInside(e.Path, e.Target) {
			p.st.Refused = append(p.st.Refused, fmt.Sprintf("%s -> %s: the link leaves the tree", e.Path, e.Target))
			continue
		}
		if t, err := p.root.Readlink(e.Path); err == nil && t == e.Target {
			continue
		}
		tmp := path.Join(path.Dir(e.Path), tempPrefix+randHex())
		if err := p.root.Symlink(e.Target, tmp); err != nil {
			return err
		}
		if err := replace(p.root, tmp, e.Path); err != nil {
			return err
		}
	}
	return nil
}

// replace renames tmp to name in root, removing a directory in the way.
func replace(root *os.Root, tmp, name string) error {
	if fi, err := root.Lstat(name); err == nil && fi.IsDir() {
		if err := root.RemoveAll(name); err != nil {
			root.Remove(tmp)
			return err
		}
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// deleteExtra removes local entries the server does not have, inside
// served directories only (never through a symbolic link).
func (p *puller) deleteExtra() error {
	served := make(map[string]Kind, len(p.m.Entries))
	for _, e := range p.m.Entries {
		served[e.Path] = e.Kind
	}
	ents := p.local.Manifest.Entries
	for i := len(ents) - 1; i >= 0; i-- {
		name := ents[i].Path
		if _, ok := served[name]; ok {
			continue
		}
		if d := path.Dir(name); d != "." {
			if k, ok := served[d]; !ok || k != Dir {
				continue
			}
		}
		if err := p.root.RemoveAll(name); err != nil {
			return err
		}
		p.st.Deleted++
	}
	return nil
}

// writeFiles writes every job: those that need nothing from the server at
// once, the others as their chunks arrive.
func (p *puller) writeFiles(jobs []*job) error {
	var local, remote []*job
	for _, j := range jobs {
		fetch := false
		for _, pc := range j.pieces {
			if pc.kind == pFetch {
				fetch = true
			}
		}
		if fetch {
			remote = append(remote, j)
		} else {
			local = append(local, j)
		}
	}
	// Whatever fails, no temporary file stays behind.
	defer func() {
		for _, j := range jobs {
			j.mu.Lock()
			p.abort(j)
			j.mu.Unlock()
		}
	}()
	if err := parallel(p.ctx, len(local), func() func(int) error {
		return func(k int) error { return p.progress(local[k]) }
	}); err != nil {
		return err
	}
	return p.fetch(remote)
}

// batch is one chunks request and the pieces it fills; dict are the
// ranges of its files held locally (the request's dictionary), read from
// dictSrc.
type batch struct {
	reqs    []RangeReq
	slots   []slot
	dict    []RangeReq
	dictSrc []piece
}

type slot struct {
	j     *job
	leaf  int
	check bool
	sum   Short
}

func (p *puller) batches(jobs []*job) []*batch {
	var out []*batch
	cur := &batch{}
	var curBytes int64
	maxChunks := min(MaxRangeChunks, MaxRangeBytes/p.m.Chunk.Max)
	flush := func() {
		if len(cur.reqs) > 0 {
			out = append(out, cur)
		}
		cur, curBytes = &batch{}, 0
	}
	for _, j := range jobs {
		e := p.m.Entries[j.entry]
		j.data = map[int][]byte{}
		j.need = 0
		for _, pc := range j.pieces {
			if pc.kind != pFetch {
				continue
			}
			per := int64(p.m.Chunk.Avg)
			if pc.count == e.Chunks && e.Chunks > 0 {
				per = max(1, e.Size/int64(e.Chunks))
			}
			for lo := pc.leaf; lo < pc.leaf+pc.count; {
				if len(cur.slots) >= maxChunks || (curBytes > 0 && curBytes+per > p.o.BatchBytes) {
					flush()
				}
				room := max(1, int((p.o.BatchBytes-curBytes)/per))
				n := min(pc.leaf+pc.count-lo, maxChunks-len(cur.slots), room)
				est := int64(n) * per
				if k := len(cur.reqs) - 1; k >= 0 && cur.reqs[k].File == j.entry && cur.reqs[k].Hi == lo {
					cur.reqs[k].Hi += n
				} else {
					cur.reqs = append(cur.reqs, RangeReq{File: j.entry, Lo: lo, Hi: lo + n})
				}
				for l := lo; l < lo+n; l++ {
					cur.slots = append(cur.slots, slot{j: j, leaf: l, check: pc.check, sum: pc.sum})
				}
				j.need += n
				curBytes += est
				lo += n
			}
		}
	}
	flush()
	for _, b := range out {
		p.addDict(b)
	}
	return out
}

// addDict names as b's dictionary the stretches of b's files that the
// receiver rebuilds from its own files, file by file in the batch's order,
// up to DictBytes.
func (p *puller) addDict(b *batch) {
	if p.o.DictBytes < 0 {
		return
	}
	var n int64
	chunks := 0
	var last *job
	for _, s := range b.slots {
		if s.j == last {
			continue
		}
		last = s.j
		for _, pc := range s.j.pieces {
			if pc.kind != pLocal || pc.n == 0 || n+pc.n > p.o.DictBytes || chunks+pc.count > MaxRangeChunks {
				continue
			}
			n += pc.n
			chunks += pc.count
			b.dictSrc = append(b.dictSrc, pc)
			if k := len(b.dict) - 1; k >= 0 && b.dict[k].File == s.j.entry && b.dict[k].Hi == pc.leaf {
				b.dict[k].Hi += pc.count
			} else {
				b.dict = append(b.dict, RangeReq{File: s.j.entry, Lo: pc.leaf, Hi: pc.leaf + pc.count})
			}
		}
	}
}

// readDict reads b's dictionary from the staged local sources.
func (p *puller) readDict(b *batch) ([]byte, error) {
	var total int64
	for _, pc := range b.dictSrc {
		total += pc.n
	}
	dict := make([]byte, total)
	files := map[int]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var off int64
	for _, pc := range b.dictSrc {
		f := files[pc.src]
		if f == nil {
			var err error
			if f, err = p.root.Open(p.staged[pc.src]); err != nil {
				return nil, err
			}
			files[pc.src] = f
		}
		if _, err := f.ReadAt(dict[off:off+pc.n], pc.off); err != nil {
			return nil, err
		}
		off += pc.n
	}
	return dict, nil
}

func (p *puller) fetch(jobs []*job) error {
	if len(jobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	work := make(chan *batch)
	var (
		wg    sync.WaitGroup
		emu   sync.Mutex
		first error
	)
	fail := func(err error) {
		emu.Lock()
		if first == nil {
			first = err
			cancel()
		}
		emu.Unlock()
	}
	var retry []*job
	var rmu sync.Mutex
	// Fetchers keep requests in flight while finishers write the files
	// whose chunks have all arrived.
	ready := make(chan *job, 64)
	var fwg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		fwg.Add(1)
		go func() {
			defer fwg.Done()
			for j := range ready {
				if ctx.Err() != nil {
					continue
				}
				err := p.progress(j)
				if errors.Is(err, errMismatch) {
					rmu.Lock()
					retry = append(retry, j)
					rmu.Unlock()
					continue
				}
				if err != nil {
					fail(err)
				}
			}
		}()
	}
	for w := 0; w < p.o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				done, err := p.fetchBatch(ctx, b)
				if err != nil {
					fail(err)
					continue
				}
				for _, j := range done {
					ready <- j
				}
			}
		}()
	}
	bs := p.batches(jobs)
send:
	for _, b := range bs {
		select {
		case work <- b:
		case <-ctx.Done():
			break send
		}
	}
	close(work)
	wg.Wait()
	close(ready)
	fwg.Wait()
	if first != nil {
		return first
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if len(retry) == 0 {
		return nil
	}
	// A false match of a 32-bit hash (or a corruption no check caught):
	// fetch those files whole.
	for _, j := range retry {
		e := p.m.Entries[j.entry]
		j.tries++
		if j.tries >= p.o.Tries {
			return fmt.Errorf("%w: %s", ErrVerify, e.Path)
		}
		j.whole = true
		j.pieces = []piece{{kind: pFetch, leaf: 0, count: e.Chunks, sum: ShortOf(e.Root), check: e.Chunks == 1}}
		j.next, j.nextLeaf, j.complete = 0, 0, false
		p.mu.Lock()
		p.st.Refetched++
		p.mu.Unlock()
	}
	return p.fetch(retry)
}

var errMismatch = errors.New("rdc: root mismatch")

// fetchBatch fetches a batch (again, up to Tries times, when a chunk
// fails its check) and returns the jobs it brought chunks for.
//
// The first try carries the batch's dictionary; a try after a failure
// goes without (the failure may be the dictionary's: a local source that
// changed since the scan, or a chunk taken from the wrong local file
// through a 32-bit hash that matched by chance).
func (p *puller) fetchBatch(ctx context.Context, b *batch) ([]*job, error) {
	var lastErr error
	useDict := len(b.dict) > 0
	for try := 0; try < p.o.Tries; try++ {
		if try > 0 {
			p.mu.Lock()
			p.st.Retries++
			p.mu.Unlock()
		}
		q := &ChunksReq{Ranges: b.reqs}
		var dict []byte
		if useDict {
			useDict = false
			d, err := p.readDict(b)
			if err == nil {
				if p.o.tamperDict != nil {
					p.o.tamperDict(d)
				}
				q.Dict, q.DictSum, dict = b.dict, DictSumOf(d), d
			}
		}
		body, err := p.c.Chunks(ctx, q, dict)
		if err != nil {
			if errors.Is(err, ErrDict) {
				p.mu.Lock()
				p.st.DictRefused++
				p.mu.Unlock()
			}
			if errors.Is(err, ErrFormat) || errors.Is(err, ErrDict) {
				lastErr = err
				continue
			}
			return nil, err
		}
		got, err := p.readBatch(body, b)
		if err != nil {
			lastErr = err
			continue
		}
		var touched []*job
		p.mu.Lock()
		p.st.DictBytes += int64(len(dict))
		for i, s := range b.slots {
			s.j.data[s.leaf] = got[i]
			p.st.ChunksFetched++
			p.st.BytesFetched += int64(len(got[i]))
			if len(touched) == 0 || touched[len(touched)-1] != s.j {
				touched = append(touched, s.j)
			}
		}
		p.mu.Unlock()
		return touched, nil
	}
	return nil, fmt.Errorf("rdc: chunks failed their check %d times: %w", p.o.Tries, lastErr)
}

func (p *puller) readBatch(body []byte, b *batch) ([][]byte, error) {
	cr := NewChunkReader(bytes.NewReader(body), p.m.Chunk.Max)
	got := make([][]byte, len(b.slots))
	for i, s := range b.slots {
		d, err := cr.Next(nil)
		if err != nil {
			return nil, err
		}
		if s.check && ShortOf(chunk.SumChunk(d)) != s.sum {
			return nil, fmt.Errorf("%w: chunk %d of %s fails its hash", ErrFormat, s.leaf, p.m.Entries[s.j.entry].Path)
		}
		got[i] = d
	}
	if _, err := cr.Next(nil); err == nil || !errors.Is(err, ErrFormat) {
		return nil, fmt.Errorf("%w: more chunks than asked", ErrFormat)
	}
	return got, nil
}

// progress writes as much of job j's file as has arrived (local pieces,
// fetched chunks in order), and once all of it is written checks it
// against the served root and renames it into place. It returns
// errMismatch when the check fails. Safe to call again and concurrently.
func (p *puller) progress(j *job) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.complete {
		return nil
	}
	if j.w == nil {
		w, err := p.openWriter(j)
		if err != nil {
			return err
		}
		j.w = w
	}
	if err := p.writeAvailable(j); err != nil {
		p.abort(j)
		return fmt.Errorf("write %s: %w", p.m.Entries[j.entry].Path, err)
	}
	if j.next < len(j.pieces) {
		return nil
	}
	j.complete = true
	return p.close(j)
}

func (p *puller) openWriter(j *job) (*fileWriter, error) {
	e := p.m.Entries[j.entry]
	dir, base, release, err := p.dirOf(e.Path)
	if err != nil {
		return nil, err
	}
	w := &fileWriter{dir: dir, base: base, tmp: tempPrefix + randHex(), release: release, done: make(chan signed, 1), srcs: map[int]*os.File{}}
	w.f, err = dir.OpenFile(w.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		release()
		return nil, err
	}
	s, _ := p.signer.Get().(*chunk.Signer)
	if s == nil {
		s, _ = chunk.NewSigner(p.m.Chunk)
	}
	pr, pw := io.Pipe()
	w.pw = pw
	w.out = io.MultiWriter(w.f, pw)
	go func() {
		sig, err := s.Sign(pr, nil)
		pr.CloseWithError(err)
		p.signer.Put(s)
		w.done <- signed{sig, err}
	}()
	return w, nil
}

// abort closes j's writer and removes its temporary file.
func (p *puller) abort(j *job) {
	w := j.w
	if w == nil {
		return
	}
	j.w = nil
	w.pw.CloseWithError(errAborted)
	<-w.done
	w.f.Close()
	w.dir.Remove(w.tmp)
	for _, f := range w.srcs {
		f.Close()
	}
	w.release()
}

var errAborted = errors.New("rdc: aborted")

func (p *puller) close(j *job) error {
	e := p.m.Entries[j.entry]
	w := j.w
	w.pw.Close()
	r := <-w.done
	for _, f := range w.srcs {
		f.Close()
	}
	defer w.release()
	j.w, j.data = nil, nil
	cerr := w.f.Close()
	switch {
	case r.err != nil:
		w.dir.Remove(w.tmp)
		return r.err
	case cerr != nil:
		w.dir.Remove(w.tmp)
		return fmt.Errorf("write %s: %w", e.Path, cerr)
	case r.sig.Root != e.Root || r.sig.Size != e.Size:
		w.dir.Remove(w.tmp)
		return fmt.Errorf("%w: %s", errMismatch, e.Path)
	}
	if err := w.dir.Chmod(w.tmp, e.Mode); err != nil {
		w.dir.Remove(w.tmp)
		return err
	}
	if err := replace(w.dir, w.tmp, w.base); err != nil {
		return err
	}
	fetched := false
	for _, pc := range j.pieces {
		fetched = fetched || pc.kind == pFetch
	}
	p.mu.Lock()
	if fetched {
		p.st.Written++
	} else {
		p.st.Copied++
	}
	p.mu.Unlock()
	return nil
}

// writeAvailable writes j's pieces from j.next on, up to the first chunk
// not yet arrived.
func (p *puller) writeAvailable(j *job) error {
	w := j.w
	for ; j.next < len(j.pieces); j.next++ {
		pc := j.pieces[j.next]
		switch pc.kind {
		case pLocal:
			src := w.srcs[pc.src]
			if src == nil {
				var err error
				if src, err = p.root.Open(p.staged[pc.src]); err != nil {
					return err
				}
				w.srcs[pc.src] = src
			}
			n, err := io.Copy(w.out, io.NewSectionReader(src, pc.off, pc.n))
			if err != nil {
				return err
			}
			if n != pc.n {
				return fmt.Errorf("%w: local source %s is shorter than scanned", errMismatch, p.local.Manifest.Entries[pc.src].Path)
			}
		case pFetch:
			j.nextLeaf = max(j.nextLeaf, pc.leaf)
			for ; j.nextLeaf < pc.leaf+pc.count; j.nextLeaf++ {
				p.mu.Lock()
				d, ok := j.data[j.nextLeaf]
				delete(j.data, j.nextLeaf)
				p.mu.Unlock()
				if !ok {
					return nil
				}
				if _, err := w.out.Write(d); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("rdc: internal error: unresolved node in %s", p.m.Entries[j.entry].Path)
		}
	}
	return nil
}
