package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version overrides the module version from the build information; set it
// with -ldflags "-X main.Version=v1.2.3" when building a release by hand.
var Version = ""

// versionInfo is what neardup knows about its own build (--json output of
// neardup version).
type versionInfo struct {
	// Module is the module version: "v1.2.3" for a binary built by "go
	// install github.com/neardup/neardup/cmd/neardup@v1.2.3", "(devel)"
	// for one built from a clone (go build, go install ./cmd/neardup, go
	// run).
	Module string `json:"version"`
	// Commit, Time and Modified describe the VCS revision the binary was
	// built from, when the go command recorded it (-buildvcs); empty
	// otherwise.
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// buildVersion reads the build information of the running binary.
func buildVersion() versionInfo {
	v := versionInfo{Module: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v.Module = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if Version != "" {
		v.Module = Version
	}
	return v
}

// String formats the version as one line:
// "neardup v1.2.3 (commit 0123456789ab, 2026-11-25T06:11:25Z, go1.26.0 linux/amd64)".
func (v versionInfo) String() string {
	var parts []string
	if v.Commit != "" {
		c := v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			c += "+modified"
		}
		parts = append(parts, "commit "+c)
		if v.Time != "" {
			parts = append(parts, v.Time)
		}
	}
	parts = append(parts, v.Go+" "+v.Platform)
	return fmt.Sprintf("neardup %s (%s)", v.Module, strings.Join(parts, ", "))
}

type versionOptions struct{ JSON bool }

func newVersionCmd(env *Env) *cobra.Command {
	var opts versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the neardup version, commit and Go version",
		Long: `version prints the module version (v1.2.3 for a binary installed with
go install github.com/neardup/neardup/cmd/neardup@v1.2.3, "(devel)" for one
built from a clone), the commit it was built from when the go command
recorded it, and the Go version. "neardup --version" prints the same line.`,
		Example: "  neardup version\n  neardup --version\n  neardup version --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVersion(env, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the version as JSON")
	return cmd
}

func runVersion(env *Env, opts versionOptions) error {
	v := buildVersion()
	if opts.JSON {
		return json.NewEncoder(env.Stdout).Encode(v)
	}
	_, err := fmt.Fprintln(env.Stdout, v)
	return err
}
