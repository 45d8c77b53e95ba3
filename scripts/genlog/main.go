// Command genlog writes a deterministic synthetic send log as CSV
// (ts_ns,key: epoch nanoseconds and a tenant key), for benchmarks.
//
//	go run ./scripts/genlog -lines 10000000 > big.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	lines := flag.Int("lines", 10_000_000, "sends to write")
	keys := flag.Int("keys", 100, "distinct keys")
	meanGap := flag.Duration("mean-gap", 150_000_000, "mean gap between sends (exponential)")
	seed := flag.Uint64("seed", 1, "random seed")
	start := flag.Int64("start", 1767225600_000_000_000, "first send, epoch ns (default 2026-01-01T00:00:00Z)")
	flag.Parse()

	rng := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	w.WriteString("ts_ns,key\n")
	t := *start
	buf := make([]byte, 0, 64)
	for range *lines {
		t += int64(rng.ExpFloat64() * float64(*meanGap))
		buf = strconv.AppendInt(buf[:0], t, 10)
		buf = append(buf, ",k"...)
		buf = strconv.AppendInt(buf, int64(rng.IntN(*keys)), 10)
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			fmt.Fprintln(os.Stderr, "genlog:", err)
			os.Exit(1)
		}
	}
}
