package accesslog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	nginxLine  = `203.0.113.7 - - [30/Nov/2024:05:50:00 +0000] "GET /api/v1/items?page=2 HTTP/1.1" 200 512 "-" "curl/8.5.0" 1732945800.123 0.045`
	apacheLine = `198.51.100.23 - alice [30/Nov/2024:05:50:00 +0000] "POST /api/v1/orders HTTP/1.1" 429 87 "https://shop.example/cart" "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0" 1732945800078 45123`
)

func TestParse(t *testing.T) {
	tests := []struct {
		name       string
		format     Format
		line       string
		start, end int64
		method     string
		path       string
		status     int
	}{
		{"nginx", Nginx, nginxLine, 1732945800_078_000_000, 1732945800_123_000_000, "GET", "/api/v1/items", 200},
		{"nginx instant request", Nginx,
			`10.0.0.1 - - [30/Nov/2024:05:50:01 +0000] "HEAD /healthz HTTP/1.1" 204 0 "-" "kube-probe/1.31" 1732945801.000 0.000`,
			1732945801_000_000_000, 1732945801_000_000_000, "HEAD", "/healthz", 204},
		{"nginx user with space and CRLF", Nginx,
			"10.0.0.1 - bob smith [30/Nov/2024:05:50:01 +0000] \"DELETE /api/v1/items/7 HTTP/2.0\" 404 - \"-\" \"python-requests/2.32\" 1732945801.999 1.500\r\n",
			1732945800_499_000_000, 1732945801_999_000_000, "DELETE", "/api/v1/items/7", 404},
		{"nginx escaped quote in agent", Nginx,
			`10.0.0.2 - - [30/Nov/2024:05:50:02 +0000] "GET /a HTTP/1.1" 200 3 "-" "bot \x22v2\x22 (+https://bot.example)" 1732945802.010 0.010`,
			1732945802_000_000_000, 1732945802_010_000_000, "GET", "/a", 200},
		{"nginx no request", Nginx,
			`10.0.0.3 - - [30/Nov/2024:05:50:03 +0000] "-" 400 0 "-" "-" 1732945803.001 0.000`,
			1732945803_001_000_000, 1732945803_001_000_000, "", "", 400},
		{"nginx TLS on plain port", Nginx,
			`10.0.0.3 - - [30/Nov/2024:05:50:03 +0000] "\x16\x03\x01\x00\xF7\x01\x00\x00" 400 157 "-" "-" 1732945803.002 0.001`,
			1732945803_001_000_000, 1732945803_002_000_000, "", "", 400},
		{"nginx HTTP/0.9 request", Nginx,
			`10.0.0.3 - - [30/Nov/2024:05:50:03 +0000] "GET /" 200 10 "-" "-" 1732945803.500 0.250`,
			1732945803_250_000_000, 1732945803_500_000_000, "GET", "/", 200},
		{"nginx extra fields before the times", Nginx,
			`10.0.0.4 - - [30/Nov/2024:05:50:04 +0000] "PUT /x HTTP/1.1" 201 2 "-" "-" upstream=10.1.1.1:8080 1732945804.100 0.100`,
			1732945804_000_000_000, 1732945804_100_000_000, "PUT", "/x", 201},
		{"apache", Apache, apacheLine, 1732945800_078_000_000, 1732945800_123_123_000, "POST", "/api/v1/orders", 429},
		{"apache escaped quote in agent", Apache,
			`192.0.2.9 - - [30/Nov/2024:05:50:05 +0000] "GET /search?q=%22x%22 HTTP/1.1" 200 1043 "-" "agent \"quoted\" \\ back" 1732945805000 1`,
			1732945805_000_000_000, 1732945805_000_001_000, "GET", "/search", 200},
		{"apache dash size", Apache,
			`192.0.2.9 - - [30/Nov/2024:05:50:06 +0000] "OPTIONS * HTTP/1.1" 200 - "-" "-" 1732945806999 0`,
			1732945806_999_000_000, 1732945806_999_000_000, "OPTIONS", "*", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.format, []byte(tt.line))
			require.NoError(t, err)
			assert.Equal(t, tt.start, e.Start, "start")
			assert.Equal(t, tt.end, e.End, "end")
			assert.Equal(t, tt.method, string(e.Method))
			assert.Equal(t, tt.path, string(e.Path))
			assert.Equal(t, tt.status, e.Status)
		})
	}
}

func TestParseErrors(t *testing.T) {
	combined := `203.0.113.7 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1" 200 512 "-" "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"`
	tests := []struct {
		name   string
		format Format
		line   string
		field  string // the field the error must name
		msg    string // and a fragment of its text
	}{
		{"empty", Nginx, "", "$time_local", "no [time]"},
		{"plain combined", Nginx, combined, "$msec $request_time", "not numbers"},
		{"plain combined apache", Apache, combined, "%{msec}t %D", "%{msec}t %D"},
		{"common format", Apache, `203.0.113.7 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1" 200 512`, "%{msec}t %D", "missing"},
		{"one time field", Nginx, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1" 200 5 1732945800.123`, "$msec $request_time", "two fields"},
		{"no closing bracket", Nginx, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000 "GET /" 200 5 1.0 0.1`, "$time_local", "closing ]"},
		{"no request", Nginx, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000] 200 5 "-" "-" 1.0 0.1`, "$request", "quoted request"},
		{"open quote", Nginx, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1 200 5 1.0 0.1`, "$request", "closing quote"},
		{"status word", Nginx, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1" OK 5 "-" "-" 1.0 0.1`, "$status", "three-digit"},
		{"status four digits", Apache, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1" 2000 5 "-" "-" 1 1`, "%>s", "three-digit"},
		{"size missing", Apache, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1" 200`, "%b", "byte count"},
		{"msec with comma", Nginx, `1.2.3.4 - - [30/Nov/2024:05:50:00 +0000] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800,123 0.045`, "$msec $request_time", "not numbers"},
		{"msec two dots", Nginx, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800.1.2 0.045`, "$msec", "seconds since the epoch"},
		{"msec trailing dot", Nginx, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800. 0.045`, "$msec", "seconds since"},
		{"msec below ns", Nginx, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800.1234567891 0.045`, "$msec", "seconds since"},
		{"msec after 2262", Nginx, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 9300000000.000 0.045`, "$msec", "seconds since"},
		{"request_time dot only", Nginx, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800.123 .`, "$request_time", "seconds such as"},
		{"request before epoch", Nginx, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1.000 2.000`, "$request_time", "longer than"},
		{"apache msec fraction", Apache, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800.078 45123`, "%{msec}t", "milliseconds"},
		{"apache msec huge", Apache, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 99999999999999999 1`, "%{msec}t", "milliseconds"},
		{"apache D fraction", Apache, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800078 45.1`, "%D", "microseconds"},
		{"apache end overflows", Apache, `1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 9223372036854 9223372036854`, "%D", "2262"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Parse(tt.format, []byte(tt.line))
			require.Error(t, err, "got %+v", e)
			var pe *Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.field, pe.Field)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
}

func TestParseFormat(t *testing.T) {
	for s, want := range map[string]Format{"nginx": Nginx, "apache": Apache, "httpd": Apache} {
		got, err := ParseFormat(s)
		if assert.NoError(t, err, "ParseFormat(%q)", s) {
			assert.Equal(t, want, got, "ParseFormat(%q)", s)
		}
	}
	_, err := ParseFormat("iis")
	assert.Error(t, err, "ParseFormat(iis)")
	_, err = Parse(Format(9), []byte(nginxLine))
	assert.Error(t, err, "Parse with an unknown format")
}

// The parser is meant for logs of millions of lines: it must not allocate.
func TestParseDoesNotAllocate(t *testing.T) {
	f, err := NewFilter(FilterSpec{Paths: []string{"/api/*/items", "/v2/"}, Methods: []string{"get"}, Statuses: []string{"2xx", "429"}})
	require.NoError(t, err)
	p := &Parser{Format: Nginx, Filter: f}
	ap := &Parser{Format: Apache, Filter: f}
	ng, apl := []byte(nginxLine), []byte(apacheLine)
	allocs := testing.AllocsPerRun(100, func() {
		_, keep, err := p.Parse(ng)
		require.NoError(t, err)
		require.True(t, keep, "nginx line")
		_, keep, err = ap.Parse(apl)
		require.NoError(t, err)
		require.False(t, keep, "apache line")
	})
	assert.Zero(t, allocs, "allocations per line pair")
}

func BenchmarkParseNginx(b *testing.B) {
	line := []byte(nginxLine)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := ParseNginx(line); err != nil {
			b.Fatal(err)
		}
	}
}
