package main

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	v := versionInfo{Module: "v1.2.3", Commit: "0123456789abcdef0123", Time: "2026-11-25T06:11:25Z", Modified: true, Go: "go1.26.0", Platform: "linux/amd64"}
	if got, want := v.String(), "neardup v1.2.3 (commit 0123456789ab+modified, 2026-11-25T06:11:25Z, go1.26.0 linux/amd64)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	v = versionInfo{Module: "(devel)", Go: "go1.26.0", Platform: "linux/amd64"}
	if got, want := v.String(), "neardup (devel) (go1.26.0 linux/amd64)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestVersionCommand: "version" and "--version" print the same line, with
// the Go version of the running binary, and exit 0; --json has the fields.
func TestVersionCommand(t *testing.T) {
	var lines []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		env, out, errb := testEnv()
		if code := Main(context.Background(), args, env); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		lines = append(lines, out.String())
	}
	if lines[0] != lines[1] {
		t.Errorf("version %q, --version %q", lines[0], lines[1])
	}
	if !strings.HasPrefix(lines[0], "neardup ") || !strings.Contains(lines[0], runtime.Version()) {
		t.Errorf("version line %q", lines[0])
	}
	env, out, _ := testEnv()
	if code := Main(context.Background(), []string{"version", "--json"}, env); code != ExitOK {
		t.Fatal(code)
	}
	var v versionInfo
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Module == "" || v.Go != runtime.Version() {
		t.Errorf("%+v %v", v, err)
	}
	// -ldflags "-X main.Version=..." wins over the build information.
	defer func(old string) { Version = old }(Version)
	Version = "v9.9.9"
	if v := buildVersion(); v.Module != "v9.9.9" {
		t.Errorf("Version override: %+v", v)
	}
}
