//go:build !linux

package sendlog

import "os"

// mapFile maps nothing outside Linux: the Reader reads the file.
func mapFile(*os.File, int64) []byte { return nil }

func dropPages([]byte) {}

func unmapFile([]byte) {}
