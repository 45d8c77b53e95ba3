// Command inflate decompresses a gzip file to nothing with the gzip reader
// rlcheck uses (klauspost/compress), to time inflating alone:
//
//	go run ./scripts/inflate FILE.gz
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: inflate FILE.gz")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err == nil {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(f); err == nil {
			var n int64
			n, err = io.Copy(io.Discard, zr)
			fmt.Println(n, "bytes")
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "inflate:", err)
		os.Exit(1)
	}
}
