// Package buildinfo says which rlcheck is running: the module version, the
// VCS revision and time it was built from, and the Go version. Every JSON
// report and metrics file carries it, so a result can be traced to the code
// that produced it.
//
// The figures come from runtime/debug.ReadBuildInfo. Release builds, which
// may be built outside a module download or a checkout, set them with
//
//	-ldflags "-X github.com/rlcheck/rlcheck/buildinfo.version=v0.1.0
//	          -X github.com/rlcheck/rlcheck/buildinfo.revision=COMMIT
//	          -X github.com/rlcheck/rlcheck/buildinfo.revisionTime=2026-11-30T00:00:00Z"
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// SchemaVersion is the version of the shape of rlcheck's JSON documents
// (docs/json.md); it changes only when a field is renamed or removed or
// changes its meaning.
const SchemaVersion = 1

// Set by -ldflags -X for release builds; empty otherwise.
var (
	version      string
	revision     string
	revisionTime string
)

// Info describes the running build.
type Info struct {
	// Version is the module version: a tag (v0.1.0), a pseudo-version, or
	// "(devel)" for a build that Go could not stamp.
	Version string
	// Revision and Time are the VCS commit and its time, "" when unknown.
	Revision string
	Time     string
	// Modified: the working tree had uncommitted changes.
	Modified bool
	// GoVersion is the Go toolchain that built the binary (go1.26.0).
	GoVersion string
}

// Read returns the running build's Info: the -ldflags values where set,
// else what the Go toolchain stamped into the binary.
func Read() Info {
	return fromBuildInfo(debug.ReadBuildInfo())
}

func fromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	info := Info{Version: "(devel)", GoVersion: runtime.Version()}
	if ok {
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		info.Version = version
	}
	if revision != "" {
		info.Revision, info.Modified = revision, false
	}
	if revisionTime != "" {
		info.Time = revisionTime
	}
	return info
}

// Version is Read().Version.
func Version() string { return Read().Version }

// String is the text "rlcheck version" prints: the version, then the
// revision, its time and the Go version, one a line ("unknown" when Go
// could not stamp them, as in "go run" outside a checkout).
func (i Info) String() string {
	rev, at := i.Revision, i.Time
	if rev == "" {
		rev = "unknown"
	} else if i.Modified {
		rev += " (modified)"
	}
	if at == "" {
		at = "unknown"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rlcheck %s\n", i.Version)
	fmt.Fprintf(&b, "  revision  %s\n", rev)
	fmt.Fprintf(&b, "  time      %s\n", at)
	fmt.Fprintf(&b, "  go        %s\n", i.GoVersion)
	return b.String()
}

// Header is the first two fields of every rlcheck JSON document; embed it.
type Header struct {
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"version"`
}

// NewHeader returns the Header of the running build.
func NewHeader() Header {
	return Header{SchemaVersion: SchemaVersion, Version: Version()}
}
