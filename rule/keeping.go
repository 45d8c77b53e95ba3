package rule

import "time"

// The default policy, for rules that leave their bookkeeping open
// (Buckets == 0): an exact sliding log while it costs little, buckets once
// the limit makes the log large. docs/windows.md gives the measurements
// behind both numbers.
const (
	// ExactUpTo is the largest limit the default policy keeps exactly. In
	// Redis such a log stays a small listpack (a few dozen bytes an entry);
	// past 128 entries it becomes a skiplist of about 129 bytes an entry.
	ExactUpTo = 32
	// DefaultBuckets is the bucket count the default policy gives larger
	// limits: it gives up at most 1/(DefaultBuckets+1) of the rate at
	// saturation, and in Redis its counts still fit a small listpack hash.
	DefaultBuckets = 64
)

// Keeping resolves the rule's bookkeeping: Exact, or the number of buckets
// to keep, applying the default policy when the rule leaves it open. The
// count never exceeds the window in nanoseconds, so a bucket is at least
// 1 ns wide.
func (r Rule) Keeping() int {
	k := r.Buckets
	if k == 0 {
		if r.Limit <= ExactUpTo {
			return Exact
		}
		k = DefaultBuckets
	}
	if k > 0 && int64(k) > int64(r.Window) {
		k = int(r.Window)
	}
	return k
}

// BucketWidth is the width of each of k buckets over the rule's window:
// ceil(Window/k) nanoseconds. When k does not divide the window, the
// buckets are a little wider than Window/k and at most k+1 of them still
// cover any window plus the bucket its start falls in.
func (r Rule) BucketWidth(k int) time.Duration {
	w := int64(r.Window)
	return time.Duration((w + int64(k) - 1) / int64(k))
}

// Resolve returns the rules with their bookkeeping resolved by Keeping:
// each one names Exact or its bucket count.
func Resolve(rules []Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = r
		out[i].Buckets = r.Keeping()
	}
	return out
}
