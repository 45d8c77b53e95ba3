package accesslog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFilter(t *testing.T) {
	entry := func(method, path string, status int) *Entry {
		return &Entry{Method: []byte(method), Path: []byte(path), Status: status}
	}
	tests := []struct {
		name string
		spec FilterSpec
		e    *Entry
		want bool
	}{
		{"empty spec keeps all", FilterSpec{}, entry("GET", "/", 500), true},
		{"prefix", FilterSpec{Paths: []string{"/api/"}}, entry("GET", "/api/v1/items", 200), true},
		{"prefix miss", FilterSpec{Paths: []string{"/api/"}}, entry("GET", "/apix", 200), false},
		{"prefix is literal", FilterSpec{Paths: []string{"/api"}}, entry("GET", "/apix", 200), true},
		{"glob", FilterSpec{Paths: []string{"/api/*/items"}}, entry("GET", "/api/v1/items", 200), true},
		{"glob does not cross slash", FilterSpec{Paths: []string{"/api/*/items"}}, entry("GET", "/api/v1/x/items", 200), false},
		{"glob class", FilterSpec{Paths: []string{"/v[12]/*"}}, entry("GET", "/v2/orders", 200), true},
		{"glob question", FilterSpec{Paths: []string{"/v?"}}, entry("GET", "/v3", 200), true},
		{"glob whole path", FilterSpec{Paths: []string{"/api/*"}}, entry("GET", "/api/v1/items", 200), false},
		{"any path in list", FilterSpec{Paths: []string{"/nope", "/api/*/items"}}, entry("GET", "/api/v1/items", 200), true},
		{"no path never matches a path filter", FilterSpec{Paths: []string{"/"}}, entry("", "", 400), false},
		{"method case", FilterSpec{Methods: []string{"post"}}, entry("POST", "/", 200), true},
		{"method list", FilterSpec{Methods: []string{"GET", "put"}}, entry("Put", "/", 200), true},
		{"method miss", FilterSpec{Methods: []string{"GET"}}, entry("GETX", "/", 200), false},
		{"status exact", FilterSpec{Statuses: []string{"429"}}, entry("GET", "/", 429), true},
		{"status exact miss", FilterSpec{Statuses: []string{"429"}}, entry("GET", "/", 428), false},
		{"status class", FilterSpec{Statuses: []string{"2xx"}}, entry("GET", "/", 204), true},
		{"status class upper", FilterSpec{Statuses: []string{"5XX"}}, entry("GET", "/", 503), true},
		{"status class miss", FilterSpec{Statuses: []string{"2xx"}}, entry("GET", "/", 302), false},
		{"status list", FilterSpec{Statuses: []string{"2xx", "429"}}, entry("GET", "/", 429), true},
		{"status zero", FilterSpec{Statuses: []string{"2xx"}}, entry("GET", "/", 0), false},
		{"all must hold", FilterSpec{Paths: []string{"/api/"}, Methods: []string{"GET"}, Statuses: []string{"2xx"}}, entry("GET", "/api/x", 500), false},
		{"all hold", FilterSpec{Paths: []string{"/api/"}, Methods: []string{"GET"}, Statuses: []string{"2xx"}}, entry("get", "/api/x", 201), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFilter(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f.Match(tt.e))
		})
	}
	var none *Filter
	assert.True(t, none.Match(entry("GET", "/", 200)), "a nil filter left a request out")
}

func TestNewFilterErrors(t *testing.T) {
	for _, spec := range []FilterSpec{
		{Paths: []string{""}},
		{Paths: []string{"/api/[a-"}},
		{Methods: []string{""}},
		{Methods: []string{"GET POST"}},
		{Statuses: []string{"4x"}},
		{Statuses: []string{"0xx"}},
		{Statuses: []string{"2x5"}},
		{Statuses: []string{"x29"}},
		{Statuses: []string{"4290"}},
	} {
		_, err := NewFilter(spec)
		assert.Error(t, err, "NewFilter(%+v)", spec)
	}
}

func TestParserCountsFiltered(t *testing.T) {
	f, err := NewFilter(FilterSpec{Statuses: []string{"429"}})
	require.NoError(t, err)
	p := Parser{Format: Apache, Filter: f}
	lines := []string{
		apacheLine,
		`1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800079 1`,
		`1.2.3.4 - - [x] "GET / HTTP/1.1" 200 5 "-" "-" 1732945800080`,
		`1.2.3.4 - - [x] "GET / HTTP/1.1" 500 5 "-" "-" 1732945800081 1`,
	}
	var kept, bad int
	for _, l := range lines {
		_, keep, err := p.Parse([]byte(l))
		switch {
		case err != nil:
			bad++
		case keep:
			kept++
		}
	}
	assert.Equal(t, 1, kept, "kept")
	assert.Equal(t, 1, bad, "bad")
	assert.Equal(t, int64(2), p.Filtered, "filtered")
}
