// Package genlog writes deterministic synthetic send logs for benchmarks:
// CSV lines "ts_ns,key" with exponential gaps between sends, and with
// Config.MaxTokens a third column "tokens".
package genlog

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// Config describes a generated log.
type Config struct {
	Lines   int
	Keys    int           // distinct keys, k0 to k(Keys-1)
	MeanGap time.Duration // mean of the exponential gaps
	Seed    uint64
	Start   int64 // the first send's epoch nanoseconds, before its gap
	// MaxTokens, when above 1, adds a "tokens" column: a cost uniform in
	// 1 to MaxTokens-1, from a stream of its own (the times and keys are
	// those of the log without it).
	MaxTokens int64
}

// Default is the benchmark log: 150 ms mean gaps, 100 keys, from
// 2026-01-01T00:00:00Z.
func Default(lines int) Config {
	return Config{Lines: lines, Keys: 100, MeanGap: 150 * time.Millisecond, Seed: 1, Start: 1767225600_000_000_000}
}

// Times returns the send times of cfg, in order.
func Times(cfg Config) []int64 {
	ts := make([]int64, 0, cfg.Lines)
	each(cfg, func(t int64, _ int) { ts = append(ts, t) })
	return ts
}

// WriteCSV writes cfg's log with a "ts_ns,key" header ("ts_ns,key,tokens"
// with MaxTokens).
func WriteCSV(w io.Writer, cfg Config) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var tokens *rand.Rand
	if cfg.MaxTokens > 1 {
		tokens = rand.New(rand.NewPCG(cfg.Seed^0x746f6b656e73, cfg.Seed))
		bw.WriteString("ts_ns,key,tokens\n")
	} else {
		bw.WriteString("ts_ns,key\n")
	}
	buf := make([]byte, 0, 64)
	var err error
	each(cfg, func(t int64, key int) {
		buf = strconv.AppendInt(buf[:0], t, 10)
		buf = append(buf, ",k"...)
		buf = strconv.AppendInt(buf, int64(key), 10)
		if tokens != nil {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, 1+tokens.Int64N(cfg.MaxTokens-1), 10)
		}
		buf = append(buf, '\n')
		if err == nil {
			_, err = bw.Write(buf)
		}
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func each(cfg Config, f func(t int64, key int)) {
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	t := cfg.Start
	for range cfg.Lines {
		t += int64(rng.ExpFloat64() * float64(cfg.MeanGap))
		f(t, rng.IntN(max(cfg.Keys, 1)))
	}
}
