package keytext

import (
	"fmt"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestShow(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"alice", "alice"},
		{"café", "café"},
		{`a\b "c"`, `a\b "c"`},
		{"caf\xe9", `caf\xe9`},
		{"caf\xe9 \"x\"\\", `caf\xe9 \"x\"\\`},
		{"\xff\xfe", `\xff\xfe`},
		{"é\xc3", `é\xc3`},
	} {
		assert.Equal(t, tc.want, Show(tc.in), "%q", tc.in)
	}
}

func ExampleShow() {
	fmt.Println(Show("alice"), Show("caf\xe9"))
	// Output: alice caf\xe9
}

func FuzzShow(f *testing.F) {
	for _, s := range []string{"", "k", "caf\xe9", "\\x", "\x80\"\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Show(s)
		assert.True(t, utf8.ValidString(got))
		if utf8.ValidString(s) {
			assert.Equal(t, s, got)
			return
		}
		assert.Equal(t, strconv.Quote(s), `"`+got+`"`, "quoted writers agree")
		back, err := strconv.Unquote(`"` + got + `"`)
		assert.NoError(t, err)
		assert.Equal(t, s, back, "no two invalid keys are shown alike")
	})
}
