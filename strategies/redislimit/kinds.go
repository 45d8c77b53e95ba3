package redislimit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// The script keeps a fixed rule as the window index and its count, and a
// bucket rule as its level times its window and the instant of that level,
// in one state field of the head (admit.lua, "State fields" and "Fixed
// and bucket rules"), in whole microseconds: the decisions of
// strategies.FixedBook and strategies.TokenBucket at whole microseconds.

// maxExact bounds the integers the script computes with: Lua numbers are
// doubles, exact below 2^53.
const maxExact = 1 << 53

// CheckKind returns an error naming r when the script cannot keep its
// kind exactly (a first-call rule, a fixed rule in a time zone or out of
// whole microseconds, a bucket beyond 2^53 units times microseconds, or a
// margin that leaves no room); New refuses such a rule.
func CheckKind(r rule.Rule) error { return checkKind(r) }

// checkKind refuses a rule of a kind the script cannot keep exactly.
func checkKind(r rule.Rule) error {
	wµs, mµs := ceilMicros(r.Window), ceilMicros(max(r.Margin, 0))
	switch r.Kind {
	case rule.Sliding:
		return nil
	case rule.Fixed:
		switch {
		case r.Zone != "":
			return fmt.Errorf("redislimit: rule %v: the script keeps no time zone's days so far (strategies.NewCombined does)", r)
		case r.Window%time.Microsecond != 0 || r.Offset%time.Microsecond != 0:
			return fmt.Errorf("redislimit: rule %v: a fixed rule's window and offset must be whole microseconds in Redis", r)
		case mµs >= wµs:
			return fmt.Errorf("redislimit: rule %v: a margin of %v leaves no room in the window", r, r.Margin)
		}
		return nil
	case rule.Bucket:
		if float64(r.Burst)*float64(wµs) >= maxExact || float64(r.Limit)*float64(wµs) >= maxExact {
			return fmt.Errorf("redislimit: rule %v: burst or limit times the window in microseconds passes 2^53, beyond the script's exact integers", r)
		}
		if bucketFull(r) < wµs {
			return fmt.Errorf("redislimit: rule %v: a margin of %v leaves no room in the bucket", r, r.Margin)
		}
		return nil
	}
	return fmt.Errorf("redislimit: rule %v: the script keeps sliding, fixed and bucket rules only so far (strategies.NewCombined keeps every kind)", r)
}

// bucketFull is a bucket rule's capacity times its window, in units times
// microseconds, less the margin's refill.
func bucketFull(r rule.Rule) int64 {
	wµs, mµs := ceilMicros(r.Window), ceilMicros(max(r.Margin, 0))
	return int64(r.Burst)*wµs - min(int64(r.Limit)*mµs, int64(r.Burst)*wµs)
}

// kindCap is the largest cost a rule can ever admit in the script.
func kindCap(r rule.Rule) int64 {
	if r.Kind == rule.Bucket {
		return bucketFull(r) / ceilMicros(r.Window)
	}
	return int64(r.Limit)
}

// kindTag names a fixed or bucket rule's parameters, for its key and
// state field: rules merge only when all of them agree.
func kindTag(r rule.Rule) string {
	m := ""
	if r.Margin > 0 {
		m = "+" + strconv.FormatInt(ceilMicros(r.Margin), 10)
	}
	if r.Kind == rule.Fixed {
		return "fixed@" + strconv.FormatInt(ceilMicros(r.Offset), 10) + m
	}
	return "bucket" + strconv.Itoa(r.Limit) + "b" + strconv.Itoa(r.Burst) + m
}

// kindSpec is the script's third value of a fixed or bucket rule: f or k,
// then the offset (fixed) or the capacity times the window less the
// margin's refill (bucket), a comma, and the margin (fixed) or the time
// the bucket takes to fill from empty (bucket), in microseconds.
func kindSpec(r rule.Rule) string {
	if r.Kind == rule.Fixed {
		return "f" + strconv.FormatInt(ceilMicros(r.Offset), 10) + "," + strconv.FormatInt(ceilMicros(max(r.Margin, 0)), 10)
	}
	return "k" + strconv.FormatInt(bucketFull(r), 10) + "," + strconv.FormatInt(stateLife(r).Microseconds(), 10)
}

// stateLife is how long a rule's state matters after a record: its
// window, or for a bucket the time it takes to fill from empty.
func stateLife(r rule.Rule) time.Duration {
	if r.Kind != rule.Bucket {
		return r.Window
	}
	fill := (bucketFull(r) + int64(r.Limit) - 1) / int64(r.Limit)
	return max(r.Window, time.Duration(fill)*time.Microsecond)
}

// Config returns the limiter's configuration as its key's state records
// it: the time source, then every rule as the script keeps it (merged,
// its window in whole microseconds, its bookkeeping resolved, a fixed or
// bucket rule's margin after '+'), sorted, for example "server time:
// 10/1s:exact, 10000/24h:b64, 500/1m:b64". Limiters of one key must
// share it (Options.Key); the order of the rules given to New does not
// matter.
func (l *Limiter) Config() string {
	parts := make([]string, len(l.rules))
	for i, r := range l.rules {
		r.Window = time.Duration(ceilMicros(r.Window)) * time.Microsecond
		s := r.String()
		if r.Kind != rule.Sliding && r.Margin > 0 {
			s += " +" + rule.FormatWindow(time.Duration(ceilMicros(r.Margin))*time.Microsecond)
		}
		parts[i] = s
	}
	slices.Sort(parts)
	return l.source.String() + " time: " + strings.Join(parts, ", ")
}
