// Package keytext is the one rule every rlcheck output follows for showing
// a key (or a file name) that is not valid UTF-8: Show writes it as the
// body of its Go string literal, so every output, metrics included, names
// it alike and none of them fails on it.
package keytext
