package cli

import (
	"errors"
	"fmt"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/merge"
	"github.com/rlcheck/rlcheck/report"
)

// ParseShard reads check's --from, --to, --line-offset and --log-start:
// nil when none is given.
func ParseShard(from, to string, lineOffset int64, logStart bool) (*report.Shard, error) {
	if logStart && from == "" {
		return nil, errors.New("--log-start says that the input before --from is the whole log: give --from")
	}
	if from == "" && to == "" && lineOffset == 0 {
		return nil, nil
	}
	sh, err := logcheck.ParseShard(from, to, lineOffset)
	if err != nil {
		return nil, err
	}
	sh.LogStart = logStart
	return sh, nil
}

// ShardHint names the flag that answers a shard's or merge's error: an
// input that starts too late for --from may be the log from its first
// line (--log-start), and shards with gaps may be a deliberate subset
// (--subset). Other errors are returned as they are.
func ShardHint(err error) error {
	var ce *logcheck.ShardContextError
	var he *logcheck.ShardHistoryError
	if errors.As(err, &ce) || errors.As(err, &he) {
		return fmt.Errorf("--from: %w (--log-start)", err)
	}
	var me *merge.Error
	if errors.As(err, &me) && me.Gap {
		return fmt.Errorf("%w (--subset)", err)
	}
	return err
}
