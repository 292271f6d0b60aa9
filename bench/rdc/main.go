// Command rdc compares neardup's remote differential sync (files serve +
// files pull, package chunk/rdc) with rsync and zstd --patch-from on one
// tree pair, on loopback: it copies OLD to a scratch directory once per
// tool and brings it to NEW.
//
//   - rsync: a daemon of Debian's rsync bound to 127.0.0.1 serves NEW;
//     `rsync -az --no-whole-file --delete --stats` pulls it. Bytes are the
//     "Total bytes sent" plus "Total bytes received" of --stats.
//   - zstd: `zstd -L --long=27 --patch-from=old.tar new.tar` of the two
//     trees as tar files (one stream; no network). Bytes are the patch.
//   - neardup: `neardup files serve NEW` on a loopback port, then
//     `neardup files pull URL DIR --delete --json`; bytes are its
//     bytes_received + bytes_sent (counted on the TCP connections). The
//     server's start (signing NEW) is timed apart.
//
// Each pulled tree is compared with NEW (contents, modes, links). Wall
// times are of the client commands; CPU seconds are the client's (user +
// system, from rusage) and, for neardup, the server's over the whole run.
// The load average is printed before and after: the machine may be shared.
//
// Usage:
//
//	go run ./rdc                                   # Go 1.19 src -> this Go's src
//	go run ./rdc -old /usr/share/go-1.19/src -new /usr/local/go/src -zstd-levels 3,19
//	go run ./rdc -zstd-levels "" -serve-level 4       # files serve --level 4
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type result struct {
	name    string
	bytes   int64
	wall    time.Duration
	cpu     time.Duration
	extra   string
	checked bool
}

func main() {
	oldDir := flag.String("old", "/usr/share/go-1.19/src", "the receiver's tree (copied, never changed)")
	newDir := flag.String("new", "/usr/local/go/src", "the served tree")
	bin := flag.String("neardup", "", "neardup binary (default: built from ../cmd/neardup)")
	levels := flag.String("zstd-levels", "3", "zstd --patch-from levels to run, comma-separated (empty: none)")
	keep := flag.Bool("keep", false, "keep the scratch directory")
	serveLevel := flag.Int("serve-level", 0, "zstd level of neardup files serve (--level; 0: its default)")
	flag.Parse()
	if err := run(*oldDir, *newDir, *bin, *levels, *keep, *serveLevel); err != nil {
		fmt.Fprintln(os.Stderr, "rdc:", err)
		os.Exit(1)
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func run(oldDir, newDir, bin, levels string, keep bool, serveLevel int) error {
	tmp, err := os.MkdirTemp("", "bench-rdc-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(tmp)
	}
	if bin == "" {
		bin = filepath.Join(tmp, "neardup-bin")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/neardup")
		cmd.Dir = ".." // the main module, from bench/
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building neardup: %w", err)
		}
	}
	want, err := describe(newDir)
	if err != nil {
		return err
	}
	fmt.Printf("OLD %s -> NEW %s (%d entries); load average before: %s\n", oldDir, newDir, len(want), loadavg())
	var res []result
	r, err := runRsync(tmp, oldDir, newDir, want)
	if err != nil {
		return err
	}
	res = append(res, r)
	r, err = runNeardup(tmp, bin, oldDir, newDir, want, serveLevel)
	if err != nil {
		return err
	}
	res = append(res, r)
	if levels != "" {
		for _, l := range strings.Split(levels, ",") {
			r, err := runZstd(tmp, oldDir, newDir, strings.TrimSpace(l))
			if err != nil {
				return err
			}
			res = append(res, r)
		}
	}
	fmt.Printf("load average after: %s\n\n", loadavg())
	fmt.Printf("%-22s %14s %9s %9s %9s  %s\n", "tool", "bytes", "vs rsync", "wall s", "CPU s", "notes")
	base := res[0]
	for _, r := range res {
		ok := ""
		if r.checked {
			ok = "tree identical; "
		}
		fmt.Printf("%-22s %14d %9.3f %9.2f %9.2f  %s%s\n", r.name, r.bytes, float64(r.bytes)/float64(base.bytes),
			r.wall.Seconds(), r.cpu.Seconds(), ok, r.extra)
	}
	nd := res[1]
	fmt.Printf("\ngoal: neardup bytes <= 0.6 x rsync: %.3f (%s); wall <= 2 x rsync: %.2f (%s)\n",
		float64(nd.bytes)/float64(base.bytes), verdict(float64(nd.bytes) <= 0.6*float64(base.bytes)),
		nd.wall.Seconds()/base.wall.Seconds(), verdict(nd.wall <= 2*base.wall))
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func copyTree(src, dst string) error {
	out, err := exec.Command("cp", "-a", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp: %v: %s", err, out)
	}
	return nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 18730
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func cpuOf(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

func runRsync(tmp, oldDir, newDir string, want map[string]string) (result, error) {
	dst := filepath.Join(tmp, "rsync")
	if err := copyTree(oldDir, dst); err != nil {
		return result{}, err
	}
	port := freePort()
	conf := filepath.Join(tmp, "rsyncd.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("use chroot = no\nlog file = %s/rsyncd.log\n[new]\npath = %s\nread only = yes\n", tmp, newDir)), 0o644)
	d := exec.Command("rsync", "--daemon", "--no-detach", "--config="+conf, "--address=127.0.0.1", "--port="+strconv.Itoa(port))
	if err := d.Start(); err != nil {
		return result{}, fmt.Errorf("rsync daemon (apt-get install rsync): %w", err)
	}
	defer func() { d.Process.Kill(); d.Wait() }()
	waitPort(port)
	cmd := exec.Command("rsync", "-az", "--no-whole-file", "--delete", "--stats", fmt.Sprintf("rsync://127.0.0.1:%d/new/", port), dst+"/")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("rsync: %v: %s", err, out.String())
	}
	num := func(label string) int64 {
		m := regexp.MustCompile(label + `: ([\d,]+)`).FindStringSubmatch(out.String())
		if m == nil {
			return -1
		}
		n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		return n
	}
	sent, recv := num("Total bytes sent"), num("Total bytes received")
	r := result{name: "rsync -az", bytes: sent + recv, wall: wall, cpu: cpuOf(cmd.ProcessState),
		extra: fmt.Sprintf("sent %d, received %d, literal %d", sent, recv, num("Literal data"))}
	r.checked, err = same(dst, want)
	return r, err
}

func waitPort(port int) {
	for i := 0; i < 100; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runNeardup(tmp, bin, oldDir, newDir string, want map[string]string, level int) (result, error) {
	dst := filepath.Join(tmp, "neardup")
	if err := copyTree(oldDir, dst); err != nil {
		return result{}, err
	}
	port := freePort()
	srv := exec.Command(bin, "files", "serve", newDir, "--addr", fmt.Sprintf("127.0.0.1:%d", port))
	if level != 0 {
		srv.Args = append(srv.Args, "--level", strconv.Itoa(level))
	}
	stderr, _ := srv.StderrPipe()
	start := time.Now()
	if err := srv.Start(); err != nil {
		return result{}, err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "serving") {
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	signing := time.Since(start)
	cmd := exec.Command(bin, "files", "pull", fmt.Sprintf("http://127.0.0.1:%d", port), dst, "--delete", "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start = time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("neardup pull: %v: %s", err, errb.String())
	}
	var js struct {
		Received int64 `json:"bytes_received"`
		Sent     int64 `json:"bytes_sent"`
		Trips    int64 `json:"round_trips"`
		Chunks   struct {
			Same, Other, Fetched int64
		} `json:"-"`
	}
	var raw map[string]any
	json.Unmarshal(out.Bytes(), &raw)
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		return result{}, fmt.Errorf("neardup pull --json: %v: %s", err, out.String())
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	r := result{name: "neardup files pull", bytes: js.Received + js.Sent, wall: wall, cpu: cpuOf(cmd.ProcessState),
		extra: fmt.Sprintf("sent %d, received %d, %d round trips, chunks %v, dictionary bytes %v; server: signing %.2f s, %.2f CPU-s in all",
			js.Sent, js.Received, js.Trips, raw["chunks"], raw["dict_bytes"], signing.Seconds(), cpuOf(srv.ProcessState).Seconds())}
	r.checked, err = same(dst, want)
	return r, err
}

func runZstd(tmp, oldDir, newDir, level string) (result, error) {
	ot, nt := filepath.Join(tmp, "old.tar"), filepath.Join(tmp, "new.tar")
	if _, err := os.Stat(ot); err != nil {
		for _, c := range [][2]string{{oldDir, ot}, {newDir, nt}} {
			if out, err := exec.Command("tar", "-C", filepath.Dir(c[0]), "-cf", c[1], filepath.Base(c[0])).CombinedOutput(); err != nil {
				return result{}, fmt.Errorf("tar: %v: %s", err, out)
			}
		}
	}
	patch := filepath.Join(tmp, "patch.zst")
	cmd := exec.Command("zstd", "-q", "-f", "-"+level, "--long=27", "--patch-from="+ot, nt, "-o", patch)
	if l, _ := strconv.Atoi(level); l > 19 {
		cmd.Args = append(cmd.Args[:1], append([]string{"--ultra"}, cmd.Args[1:]...)...)
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("zstd (apt-get install zstd): %v: %s", err, out)
	}
	fi, err := os.Stat(patch)
	if err != nil {
		return result{}, err
	}
	return result{name: "zstd -" + level + " --patch-from", bytes: fi.Size(), wall: wall, cpu: cpuOf(cmd.ProcessState),
		extra: "both trees as tar files on one machine, no network"}, nil
}

// describe lists every entry under dir: type, mode and content hash or
// link target.
func describe(dir string) (map[string]string, error) {
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			m[rel] = fmt.Sprintf("d %o", fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			m[rel] = "l " + t
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("f %o %x", fi.Mode().Perm(), sha256.Sum256(b))
		}
		return nil
	})
	return m, err
}

func same(dir string, want map[string]string) (bool, error) {
	got, err := describe(dir)
	if err != nil {
		return false, err
	}
	if len(got) != len(want) {
		return false, fmt.Errorf("%s: %d entries, want %d", dir, len(got), len(want))
	}
	for k, v := range want {
		if k == "." {
			continue
		}
		if got[k] != v {
			return false, fmt.Errorf("%s: %s is %q, want %q", dir, k, got[k], v)
		}
	}
	return true, nil
}
