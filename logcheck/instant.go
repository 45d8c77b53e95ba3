package logcheck

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rlcheck/rlcheck/report"
)

// ParseShard reads check's --from, --to and --line-offset; empty bounds are
// open.
func ParseShard(from, to string, lineOffset int64) (*report.Shard, error) {
	sh := &report.Shard{HasFrom: from != "", HasTo: to != "", LineOffset: lineOffset}
	var err error
	if sh.HasFrom {
		if sh.From, err = ParseInstant(from); err != nil {
			return nil, err
		}
	}
	if sh.HasTo {
		if sh.To, err = ParseInstant(to); err != nil {
			return nil, err
		}
	}
	if sh.HasFrom && sh.HasTo && sh.To <= sh.From {
		return nil, errors.New("report.Shard.To must be after report.Shard.From")
	}
	return sh, nil
}

// ParseInstant reads a shard bound: an RFC 3339 time or integer epoch
// nanoseconds.
func ParseInstant(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("time %q: want RFC 3339 (2026-01-01T00:00:00Z) or integer epoch nanoseconds", s)
	}
	return t.UnixNano(), nil
}
