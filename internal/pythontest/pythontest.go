// Package pythontest is test support for the tests that run python3: they skip
// without it, naming the Debian package, and fail instead under
// RLCHECK_REQUIRE_PYTHON=1.
package pythontest

import (
	"os"
	"os/exec"
	"testing"
)

// Need returns python3's path, or ends t: a skip, or a failure when
// RLCHECK_REQUIRE_PYTHON=1; why says what needs it.
func Need(t testing.TB, why string) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err == nil {
		return path
	}
	if os.Getenv("RLCHECK_REQUIRE_PYTHON") == "1" {
		t.Fatalf("python3 not found on PATH, and RLCHECK_REQUIRE_PYTHON=1 requires it")
	}
	t.Skipf("SKIPPING: python3 not found on PATH: %s needs it (Debian: apt-get install python3); set RLCHECK_REQUIRE_PYTHON=1 to fail instead", why)
	return ""
}
