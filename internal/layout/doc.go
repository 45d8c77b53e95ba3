// Package layout holds no code: its tests pin the shape of the module, so
// that it stays one a newcomer can read. Functions fit on a screen or two,
// library errors name settings rather than the command line's flags, and
// the packages depend on one another in one direction only.
package layout
