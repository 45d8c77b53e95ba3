// Command inferlog writes a log for rlcheck infer: probing traffic (bursts,
// idle spells, steady paces) replayed through a provider keeping a hidden
// contract, as ts_ms,status lines (docs/infer.md, Cost). With -delay, each
// call reaches the provider a random 0 to -delay after it was sent (the
// provider judges in arrival order) and the log is the client's: its send
// instants, as ts_us,status.
//
//	go run ./scripts/inferlog -lines 1000000 -rules 7/1s,40/10s > calls-1m.csv
//	go run ./scripts/inferlog -lines 1000000 -delay 5ms > delayed-1m.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

func main() {
	lines := flag.Int("lines", 1_000_000, "calls to write")
	rules := flag.String("rules", "7/1s,40/10s", "the provider's hidden contract (sliding or fixed rules)")
	seed := flag.Uint64("seed", 1, "random seed")
	delay := flag.Duration("delay", 0, "largest delay from the client to the provider (0: the provider's own log)")
	flag.Parse()
	rs, err := rule.ParseList(*rules)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inferlog:", err)
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(*seed, 2))
	p := infertest.NewProvider(rs, true)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	ms := infertest.Traffic(rng, rs[0], *lines)
	if *delay > 0 {
		err = writeDelayed(w, p, rng, ms, *delay)
	} else {
		err = infertest.WriteCSV(w, infertest.Replay(p, ms))
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "inferlog:", err)
		os.Exit(1)
	}
}

// writeDelayed sends the calls (ms) through p in the order they arrive, each
// delayed by up to d, and writes the client's log: send instants in µs.
func writeDelayed(w *bufio.Writer, p *infertest.Provider, rng *rand.Rand, ms []int64, d time.Duration) error {
	type call struct {
		sent, arrived int64
		refused       bool
	}
	calls := make([]call, len(ms))
	for i, t := range ms {
		sent := t*int64(time.Millisecond) + rng.Int64N(int64(time.Millisecond))
		calls[i] = call{sent: sent, arrived: sent + rng.Int64N(int64(d)+1)}
	}
	order := make([]int, len(calls))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(calls[a].arrived - calls[b].arrived) })
	for _, i := range order {
		calls[i].refused = p.Call(calls[i].arrived)
	}
	slices.SortStableFunc(calls, func(a, b call) int { return int(a.sent - b.sent) })
	if _, err := w.WriteString("ts_us,status\n"); err != nil {
		return err
	}
	for _, c := range calls {
		st := 200
		if c.refused {
			st = 429
		}
		if _, err := fmt.Fprintf(w, "%d,%d\n", c.sent/int64(time.Microsecond), st); err != nil {
			return err
		}
	}
	return nil
}
