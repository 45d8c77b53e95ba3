// Package layering holds no code: its test pins which packages may import
// which (go list -deps), so that the layering the docs describe stays true.
package layering
