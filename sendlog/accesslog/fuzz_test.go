package accesslog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse checks that no line panics the parser and that what it accepts
// is consistent: a call never ends before it starts, and Method and Path
// come from the line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		nginxLine, apacheLine, "", "[", `a [b] "`, `a [b] "c" 200 - "" "" 1 2`,
		`a [b] "GET /?x HTTP/1.1" 200 - "" "" 1.5 0.5`,
		`a [b] "\"" 999 0 "\\" "\"" 9223372036854 1`,
		`a [b] "GET / HTTP/1.1" 200 5 "-" "-" 9223372036.854775807 0.000000001`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := []byte(s)
		for _, format := range []Format{Nginx, Apache} {
			e, err := Parse(format, line)
			if err != nil {
				continue
			}
			require.True(t, e.Start >= 0 && e.End >= e.Start, "%v %q: call over [%d, %d)", format, s, e.Start, e.End)
			require.True(t, e.Status >= 0 && e.Status <= 999, "%v %q: status %d", format, s, e.Status)
			require.True(t, bytes.Contains(line, e.Method) && bytes.Contains(line, e.Path), "%v %q: method %q or path %q not in the line", format, s, e.Method, e.Path)
			require.Equal(t, len(e.Method) == 0, len(e.Path) == 0, "%v %q: method %q without path %q", format, s, e.Method, e.Path)
		}
	})
}

// FuzzRoundTrip writes lines the way nginx and Apache do and checks that the
// parser reads back the exact times and fields.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(1732945800123), uint32(45), uint32(45123), "GET", "/api/v1/items", "page=2", uint16(200), "curl/8.5.0")
	f.Add(uint64(0), uint32(0), uint32(0), "post", "/", "", uint16(429), `a "quoted" agent`)
	f.Add(uint64(9223372036854), uint32(1), uint32(0), "DELETE", "/x y", "", uint16(999), "")
	f.Fuzz(func(t *testing.T, endMs uint64, tookMs, tookUs uint32, method, path, query string, status uint16, agent string) {
		endMs %= 9223372036854 + 1
		status %= 1000
		if uint64(tookMs) > endMs {
			tookMs = uint32(endMs)
		}
		// Methods and paths are single request-line tokens.
		if method == "" || path == "" || strings.ContainsAny(method+path+query, " \"\\\r\n\t") || strings.Contains(path, "?") {
			return
		}
		agentNginx := strings.NewReplacer(`"`, `\x22`, `\`, `\x5C`).Replace(agent)
		agentApache := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(agent)
		target := path
		if query != "" {
			target += "?" + query
		}
		req := fmt.Sprintf(`"%s %s HTTP/1.1" %03d 512 "-"`, method, target, status)

		ng := fmt.Sprintf(`10.0.0.1 - - [30/Nov/2024:05:50:00 +0000] %s "%s" %d.%03d %d.%03d`,
			req, agentNginx, endMs/1000, endMs%1000, tookMs/1000, tookMs%1000)
		e, err := ParseNginx([]byte(ng))
		require.NoError(t, err, ng)
		wantEnd := int64(endMs) * 1_000_000
		require.Equal(t, wantEnd, e.End, ng)
		require.Equal(t, wantEnd-int64(tookMs)*1_000_000, e.Start, ng)
		checkFields(t, ng, e, method, path, int(status))

		startMs := endMs
		if startMs*1_000_000+uint64(tookUs)*1000 > 1<<63-1 {
			return
		}
		ap := fmt.Sprintf(`10.0.0.1 - - [30/Nov/2024:05:50:00 +0000] %s "%s" %d %d`, req, agentApache, startMs, tookUs)
		e, err = ParseApache([]byte(ap))
		require.NoError(t, err, ap)
		wantStart := int64(startMs) * 1_000_000
		require.Equal(t, wantStart, e.Start, ap)
		require.Equal(t, wantStart+int64(tookUs)*1000, e.End, ap)
		checkFields(t, ap, e, method, path, int(status))
	})
}

func checkFields(t *testing.T, line string, e Entry, method, path string, status int) {
	t.Helper()
	require.Equal(t, method, string(e.Method), line)
	require.Equal(t, path, string(e.Path), line)
	require.Equal(t, status, e.Status, line)
}
