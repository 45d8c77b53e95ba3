// Package nodetest is test support for the tests that run node: they skip
// without node, npm or the npm registry, naming the Debian packages, and
// fail instead under RLCHECK_REQUIRE_NODE=1. Project installs the npm
// packages a package-lock.json pins once per lock file into the user's
// cache, so that only the first run needs the registry.
package nodetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RequireEnv names the variable that turns a missing node, npm or
// registry into a failure.
const RequireEnv = "RLCHECK_REQUIRE_NODE"

// Skip skips t for want of node, npm or the registry (why), or fails it
// under RLCHECK_REQUIRE_NODE=1; what says what needs them.
func Skip(t testing.TB, what, why string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s, and %s=1 requires it", why, RequireEnv)
	}
	t.Skipf("SKIPPING: %s: %s runs on Node (Debian: apt-get install nodejs npm); set %s=1 to fail instead", why, what, RequireEnv)
}

// Node returns node's path, or ends t (see Skip).
func Node(t testing.TB, what string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Skip(t, what, "node not found on PATH")
	}
	return node
}

// Project returns node and a fresh directory holding a copy of src's
// files (not its node_modules) beside node_modules installed by npm ci
// from src's package.json and package-lock.json, once per lock file, in
// ${XDG_CACHE_HOME:-$HOME/.cache}/rlcheck-test-node/HASH. probe is a
// file under node_modules whose presence means the install is complete.
func Project(t testing.TB, what, src, probe string) (node, dir string) {
	t.Helper()
	node = Node(t, what)
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	installed := filepath.Join(cache, "rlcheck-test-node", hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(installed, "node_modules", probe)); err != nil {
		install(t, what, src, filepath.Dir(installed), installed)
	}
	dir = t.TempDir()
	if err := os.Symlink(filepath.Join(installed, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	copyFiles(t, src, dir)
	return node, dir
}

// copyFiles copies the regular files at the top of src into dst.
func copyFiles(t testing.TB, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
		}
		if err != nil {
			t.Fatalf("nodetest: %v", err)
		}
	}
}

// install runs npm ci in a directory of its own under root, then moves it
// to dst, so that a run cut short leaves nothing half installed.
func install(t testing.TB, what, src, root, dst string) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		Skip(t, what, "npm not found on PATH")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	tmp, err := os.MkdirTemp(root, "install-")
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, f), b, 0o644)
		}
		if err != nil {
			t.Fatalf("nodetest: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci")
	cmd.Dir = tmp
	// npm reads its settings from npm_config_* too: no audit, no funding
	// notes, no install scripts.
	cmd.Env = append(os.Environ(), "npm_config_audit=false", "npm_config_fund=false", "npm_config_ignore_scripts=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		Skip(t, what, "npm ci could not install "+src+"'s packages (no network to the npm registry?): "+lastLine(string(out)))
	}
	if err := os.Rename(tmp, dst); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(dst); statErr != nil {
			t.Fatalf("nodetest: %v", err)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
