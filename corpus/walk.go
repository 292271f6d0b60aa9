package corpus

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// globs holds validated Include and Exclude patterns and the
// ExcludePaths.
type globs struct {
	include, exclude [][]string
	paths            []exclPath
}

// exclPath is one of Options.ExcludePaths: its absolute path, and what it
// is (nil when it does not exist) to recognize it under another name.
type exclPath struct {
	abs  string
	info fs.FileInfo
}

// setPaths records the ExcludePaths.
func (g *globs) setPaths(paths []string) error {
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		info, _ := os.Stat(p)
		g.paths = append(g.paths, exclPath{abs: abs, info: info})
	}
	return nil
}

// pathExcluded reports whether the walked entry at abs is one of the
// ExcludePaths, by name or (for a directory) by identity.
func (g *globs) pathExcluded(abs string, d fs.DirEntry) bool {
	var info fs.FileInfo
	for _, x := range g.paths {
		if x.abs == abs {
			return true
		}
		if x.info != nil && x.info.IsDir() && d.IsDir() {
			if info == nil {
				var err error
				if info, err = d.Info(); err != nil {
					return false
				}
			}
			if os.SameFile(info, x.info) {
				return true
			}
		}
	}
	return false
}

// checkGlob reports whether p is a valid pattern.
func checkGlob(p string) error {
	if p == "" {
		return path.ErrBadPattern
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

func newGlobs(include, exclude []string) (*globs, error) {
	g := &globs{}
	for _, p := range include {
		if err := checkGlob(p); err != nil {
			return nil, err
		}
		g.include = append(g.include, strings.Split(p, "/"))
	}
	for _, p := range exclude {
		if err := checkGlob(p); err != nil {
			return nil, err
		}
		g.exclude = append(g.exclude, strings.Split(p, "/"))
	}
	return g, nil
}

// matchGlob matches a split pattern against a slash-separated relative
// path: a one-segment pattern against the base name, a longer one against
// all segments, with "**" matching any number of segments.
func matchGlob(pat []string, rel string) bool {
	if len(pat) == 1 && pat[0] != "**" {
		ok, _ := path.Match(pat[0], path.Base(rel))
		return ok
	}
	return matchSegs(pat, strings.Split(rel, "/"))
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

func (g *globs) excluded(rel string) bool {
	for _, p := range g.exclude {
		if matchGlob(p, rel) {
			return true
		}
	}
	return false
}

func (g *globs) included(rel string) bool {
	if len(g.include) == 0 {
		return true
	}
	for _, p := range g.include {
		if matchGlob(p, rel) {
			return true
		}
	}
	return false
}

// commonRoot returns the deepest directory that holds every input path:
// a directory input counts as itself, anything else (a file, a path that
// does not exist) as its parent. Paths are made absolute lexically
// (filepath.Abs, no symbolic links resolved). Standard input ("-") does
// not count; with no other input the root is "".
func commonRoot(paths []string) string {
	var root []string
	first := true
	for _, p := range paths {
		if p == "-" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			abs = filepath.Dir(abs)
		}
		segs := splitPath(abs)
		if first {
			root, first = segs, false
			continue
		}
		n := 0
		for n < len(root) && n < len(segs) && root[n] == segs[n] {
			n++
		}
		root = root[:n]
	}
	if first || len(root) == 0 {
		return ""
	}
	return filepath.Join(root...)
}

// splitPath splits an absolute path into its volume-and-root element
// ("/" or `C:\`) followed by its names.
func splitPath(abs string) []string {
	vol := filepath.VolumeName(abs)
	rest := abs[len(vol):]
	segs := []string{vol + string(filepath.Separator)}
	for _, s := range strings.Split(filepath.ToSlash(rest), "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// relName returns the name of the file at path p under root: slash-
// separated, relative, without ".." elements. When p does not lie under
// root (only possible for a root of "" or across volumes), it falls back
// to localName of the absolute path.
func relName(root, p string) string {
	abs, err := filepath.Abs(p)
	if err == nil && root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	if err != nil {
		abs = p
	}
	return localName(abs)
}

// expand appends the inputs named by p: "-" for stdin, a file, or every
// selected regular file under a directory in lexical order. A named path
// is followed if it is a symbolic link; links met inside a walk are not.
// Files are named by their path relative to root, the common root of all
// inputs.
func expand(dst []input, p, root string, g *globs, st *Stats) []input {
	if p == "-" {
		return append(dst, input{path: "-", name: "stdin", id: "-", size: -1, stdin: true})
	}
	fi, err := os.Stat(p)
	if err != nil {
		name := relName(root, p)
		return append(dst, input{path: p, name: name, id: name, err: err})
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			st.Skipped++
			st.SkippedBy[SkipNotRegular]++
			return dst
		}
		name := relName(root, p)
		return append(dst, input{path: p, name: name, id: name, size: fi.Size()})
	}
	// Names of walked files: the directory's name under the root, then
	// the path inside it.
	dirName := relName(root, p)
	if root != "" {
		if abs, err := filepath.Abs(p); err == nil && abs == root {
			dirName = "."
		}
	}
	named := func(rel string) string { return path.Join(dirName, rel) }
	// WalkDir visits entries in lexical order and does not follow links;
	// a trailing separator makes it enter a root named through a link.
	walkRoot := p
	if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		walkRoot = p + string(filepath.Separator)
	}
	absP, _ := filepath.Abs(p)
	filepath.WalkDir(walkRoot, func(fp string, d fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(p, fp)
		if rerr != nil {
			rel = fp
		}
		if len(g.paths) > 0 && rel != "." && d != nil && g.pathExcluded(filepath.Join(absP, rel), d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			// An unreadable directory (or entry): one rejection, and
			// the walk goes on with its siblings.
			dst = append(dst, input{path: fp, name: named(rel), id: named(rel), err: err, walked: true})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			if rel != "." && g.excluded(rel) {
				return fs.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			if g.included(rel) && !g.excluded(rel) {
				st.Skipped++
				st.SkippedBy[SkipSymlink]++
			}
			return nil
		case !d.Type().IsRegular():
			if g.included(rel) && !g.excluded(rel) {
				st.Skipped++
				st.SkippedBy[SkipNotRegular]++
			}
			return nil
		}
		if !g.included(rel) || g.excluded(rel) {
			return nil
		}
		info, ierr := d.Info()
		if ierr != nil {
			dst = append(dst, input{path: fp, name: named(rel), id: named(rel), err: ierr, walked: true})
			return nil
		}
		dst = append(dst, input{path: fp, name: named(rel), id: named(rel), size: info.Size(), walked: true})
		return nil
	})
	return dst
}

// localName turns a path named directly into a relative, slash-separated
// name that cannot leave an output directory: cleaned, without volume,
// leading slashes or ".." elements.
func localName(p string) string {
	p = filepath.ToSlash(filepath.Clean(strings.TrimPrefix(p, filepath.VolumeName(p))))
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return "input"
	}
	return strings.Join(out, "/")
}
