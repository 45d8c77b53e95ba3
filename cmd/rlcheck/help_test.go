package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHelpFilled checks that every command has its long help, with every
// placeholder filled in.
func TestHelpFilled(t *testing.T) {
	root := NewRootCmd(streams{in: strings.NewReader(""), out: &strings.Builder{}, errOut: &strings.Builder{}})
	for _, c := range append(root.Commands(), root) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Name() == "version" {
			continue
		}
		assert.NotEmpty(t, c.Long, "rlcheck %s has no long help", c.Name())
		assert.NotContains(t, c.Long, "{{", "rlcheck %s: a placeholder is left in its help", c.Name())
	}
	assert.Contains(t, help("simulate"), "fleet, gate-order", "the shipped scenarios are listed")
	assert.Contains(t, help("simulate"), "sequential, combined", "the strategies are listed")
}
