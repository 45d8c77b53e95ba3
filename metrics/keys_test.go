package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKeyLabels(t *testing.T) {
	l := NewKeyLabels(2)
	var got []string
	for _, k := range []string{"a", "caf\xe9", "b", "a", "c", "caf\xe9"} {
		got = append(got, l.Label(k))
	}
	assert.Equal(t, []string{"a", `caf\xe9`, OtherKeys, "a", OtherKeys, `caf\xe9`}, got)
	assert.Equal(t, OtherKeys, NewKeyLabels(-1).Label("a"))
	assert.Equal(t, OtherKeys, (&KeyLabels{}).Label("a"))
	assert.Equal(t, DefaultMaxKeys, NewKeyLabels(0).Max)
}
