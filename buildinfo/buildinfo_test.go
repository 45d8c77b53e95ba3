package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.1",
		Main:      debug.Module{Path: "github.com/rlcheck/rlcheck", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "74737f2d0e1a"},
			{Key: "vcs.time", Value: "2026-11-30T15:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	assert.Equal(t, Info{Version: "v0.1.0", Revision: "74737f2d0e1a", Time: "2026-11-30T15:00:00Z", Modified: true, GoVersion: "go1.26.1"},
		fromBuildInfo(stamped, true))
	assert.Equal(t, Info{Version: "(devel)", GoVersion: runtime.Version()}, fromBuildInfo(nil, false))

	// -ldflags -X wins over what the toolchain stamped.
	defer func(v, r, at string) { version, revision, revisionTime = v, r, at }(version, revision, revisionTime)
	version, revision, revisionTime = "v0.2.0", "abc123", "2026-12-01T00:00:00Z"
	assert.Equal(t, Info{Version: "v0.2.0", Revision: "abc123", Time: "2026-12-01T00:00:00Z", GoVersion: "go1.26.1"},
		fromBuildInfo(stamped, true))
}

func TestInfoString(t *testing.T) {
	got := Info{Version: "v0.1.0", Revision: "74737f2", Time: "2026-11-30T15:00:00Z", Modified: true, GoVersion: "go1.26.1"}.String()
	assert.Equal(t, "rlcheck v0.1.0\n  revision  74737f2 (modified)\n  time      2026-11-30T15:00:00Z\n  go        go1.26.1\n", got)
	got = Info{Version: "(devel)", GoVersion: "go1.26.1"}.String()
	assert.Equal(t, "rlcheck (devel)\n  revision  unknown\n  time      unknown\n  go        go1.26.1\n", got)
}

func TestHeader(t *testing.T) {
	assert.Equal(t, Header{SchemaVersion: 1, Version: Read().Version}, NewHeader())
}
