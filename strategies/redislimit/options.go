package redislimit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// TimeSource says whose clock decides which entries are still in a window.
type TimeSource int

const (
	// Server reads Redis TIME inside the script: one clock for the whole
	// fleet, so skewed hosts cannot break a limit. The production default.
	Server TimeSource = iota
	// Client passes the caller's rt.Now() in: each host's clock counts, so
	// hosts whose clocks disagree can overfill a window between them.
	Client
	// Virtual passes a simulated time in, on the same path as Client:
	// Options.Now when set (a simulator's shared, unskewed clock, standing
	// for the server's), else rt.Now(). Redis expiry runs on real time,
	// which a simulation may outrun or lag behind, so keys then outlive
	// their last record by at least VirtualTTL instead of their window.
	Virtual
)

// VirtualTTL is how long a key outlives its last record under Virtual time.
const VirtualTTL = 24 * time.Hour

func (s TimeSource) String() string {
	switch s {
	case Server:
		return "server"
	case Client:
		return "client"
	case Virtual:
		return "virtual"
	}
	return fmt.Sprintf("TimeSource(%d)", int(s))
}

// ParseTimeSource reads "server", "client" or "virtual".
func ParseTimeSource(s string) (TimeSource, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "server", "":
		return Server, nil
	case "client":
		return Client, nil
	case "virtual":
		return Virtual, nil
	}
	return 0, fmt.Errorf("redislimit: time source %q: want server, client or virtual", s)
}

// MaxKeyLen bounds Options.Key; the longest Redis key built from it stays
// well under any sane key size.
const MaxKeyLen = 200

// Options configure a Limiter.
type Options struct {
	// Key names the limit the fleet shares (an API key's name, say). Every
	// process that uses the same Key shares one budget, and so must keep
	// one configuration (Limiter.Config: the time source, and the rules as
	// kept, with their limits, units, windows, kinds, margins and
	// bookkeeping): limiters whose windows differ by a margin would each
	// admit a full budget, and one without a rule another keeps would
	// admit calls that rule refuses. The key's state records the
	// configuration that made it, and a limiter of another one is refused
	// with ErrConfig naming both. To change the configuration, give it a
	// new Key, or stop every limiter of the old one and Reset the key.
	// The Key must be 1..MaxKeyLen bytes without '{', '}' or control
	// characters.
	Key string
	// Prefix starts the name of every Redis key the limiter and its Reset
	// touch, before the Key in braces (myapp:{acme-api}:1s), so that an
	// ACL key pattern (~myapp:*) can grant exactly them; empty means
	// DefaultPrefix, "rlcheck:". It holds no braces, which would move the
	// keys' Redis Cluster hash tag, nor control characters. Limiters of one
	// Key and Prefix share a budget; another Prefix is another budget.
	Prefix string
	// TimeSource defaults to Server.
	TimeSource TimeSource
	// MemberPrefix starts every member this limiter records; a counter
	// follows it. Limiters sharing a Key must use different prefixes. Empty
	// draws 12 random bytes from crypto/rand; a simulation sets it so that
	// its runs are reproducible byte for byte.
	MemberPrefix string
	// Now is the clock of the Virtual time source, in nanoseconds; nil
	// means rt.Now. Other sources ignore it.
	Now func() int64
	// CallTimeout bounds each run of the script, go-redis' own retries
	// included, whatever the caller's context allows: a Redis that stops
	// answering fails the call with ErrTimeout. 0 means
	// DefaultCallTimeout; negative, no bound beyond the context and the
	// client's own timeouts.
	CallTimeout time.Duration
	// Lazy makes New skip its PING, for a service that may start before
	// its Redis: its calls fail with ErrUnreachable, admitting none, until
	// the server is up. By default New refuses a server that does not
	// answer, so that a wrong address or a dead server fails the start.
	Lazy bool
	// InProcess says c talks to a server in this process (the embedded
	// miniredis that simulations and audits run on), whose calls cannot
	// hang on a network: each runs on the caller's goroutine with no
	// wall-clock bound, and the context is looked at between calls. A run
	// on virtual time would otherwise fail with ErrTimeout whenever the
	// process is paused or starved for CallTimeout (a suspended laptop, a
	// debugger, a loaded machine), and every call would pay a hand-off to
	// another goroutine.
	InProcess bool
	// MaxSkew bounds, under Client time, how far the caller's clock may be
	// from Redis TIME: the script refuses a call beyond it with ErrSkew.
	// 0 means DefaultMaxSkew; negative turns the check off (a simulation
	// that passes virtual instants as client time does). Other sources
	// ignore it.
	MaxSkew time.Duration
	// LossHold is how long every limiter of the key is refused
	// (ErrStateLost) after one finds the key's state lost or restored from
	// an older snapshot: calls admitted before the loss may still be in
	// their windows, and no limiter can see them any more. 0 means the
	// limiter's longest window (a bucket's time to fill from empty), the
	// shortest hold after which no window can hold a call from before the
	// loss beside one from after it, so that the loss cannot overfill any
	// window. A shorter one lets each window hold up to its limit from
	// before the loss and its limit again after it; negative means no hold
	// (the call that found the loss is refused, the next ones start on
	// empty windows). Reset lifts a hold for every limiter of the key,
	// running ones included (docs/redis.md, Lost state).
	LossHold time.Duration
	// Exact keeps the rules that leave their bookkeeping open as exact
	// sliding logs whatever their limits, as Redis sorted sets that grow
	// with the limit (about 129 bytes an entry past 128 entries). Without
	// it such rules follow the default policy (rule.Rule.Keeping): exact
	// for small limits, a bounded hash of bucket counts for large ones, so
	// a limiter's keys stay within a few kilobytes whatever its limits
	// (docs/windows.md). Rules that name theirs (10/s:exact, 500/min:b64)
	// are kept as they say either way. Every limiter sharing a Key must
	// keep its rules alike: an exact log and the bucket counts of one
	// window are kept apart and would not see each other's calls, so a
	// limiter that keeps them otherwise than the key's state records is
	// refused (ErrConfig).
	Exact bool
	// MaxInFlight caps the calls in flight for the whole key, across
	// every process that shares it: each call takes a lease in the same
	// script run that records it, and Release (or a reservation's
	// Settle) gives it back. 0 means no cap. Every limiter of the key
	// should give the same cap: each counts the key's leases against its
	// own.
	MaxInFlight int
	// LeaseTime is how long a lease lasts when neither Release nor Settle
	// frees it (a process that died mid-call): then the call no longer
	// counts in flight, and a reservation's estimates stand for good. 0
	// means DefaultLeaseTime.
	LeaseTime time.Duration
	// LeasePoll is the longest a call refused by MaxInFlight sleeps before
	// it asks again: a lease freed by another process wakes no one. 0
	// means DefaultLeasePoll.
	LeasePoll time.Duration
}

// DefaultCallTimeout is the bound on each script run when
// Options.CallTimeout is 0: room for two attempts of DefaultTimeout.
const DefaultCallTimeout = 3 * time.Second

// DefaultMaxSkew is how far a Client clock may be from Redis TIME when
// Options.MaxSkew is 0. Hosts kept by NTP agree within milliseconds.
const DefaultMaxSkew = time.Second

// FutureTolerance, added to the largest window (at least 1 s), is how far
// ahead of a call's check time an entry may lie before the script reports
// the set as corrupt (ErrCorrupt): twice MaxSkew when that is larger.
const FutureTolerance = time.Minute

// ErrKey reports an unusable Options.Key.
var ErrKey = errors.New("redislimit: bad key name")

// checkKey refuses names that would break the shared hash slot: Redis hashes
// only the text between the first '{' and the next '}', and hashes the whole
// key when that text is empty.
func checkKey(k string) error {
	if k == "" {
		return fmt.Errorf("%w: empty", ErrKey)
	}
	if len(k) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, at most %d allowed", ErrKey, len(k), MaxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '{' || c == '}' {
			return fmt.Errorf("%w: %q contains a brace, which would split its cluster hash tag", ErrKey, k)
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: %q contains a control character", ErrKey, k)
		}
	}
	return nil
}

// DefaultPrefix starts every Redis key of a limiter whose Options.Prefix
// is empty.
const DefaultPrefix = "rlcheck:"

// checkPrefix refuses a prefix that would move the keys' cluster hash tag
// (a brace: Redis hashes the first {...} of a key) or that holds control
// characters.
func checkPrefix(p string) error {
	if len(p) > MaxKeyLen {
		return fmt.Errorf("%w: prefix of %d bytes, at most %d allowed", ErrKey, len(p), MaxKeyLen)
	}
	if i := strings.IndexFunc(p, func(c rune) bool { return c == '{' || c == '}' || c < 0x20 || c == 0x7f }); i >= 0 {
		return fmt.Errorf("%w: prefix %q holds %q: no braces (the key name is the keys' cluster hash tag) nor control characters", ErrKey, p, p[i])
	}
	return nil
}

// tagged is the start of every key of key name k under prefix p (empty:
// DefaultPrefix): the prefix, then the name as the Redis Cluster hash tag
// that puts all the keys in one slot, such as rlcheck:{acme-api}.
func tagged(p, k string) string {
	if p == "" {
		p = DefaultPrefix
	}
	return p + "{" + k + "}"
}

// setKey is the sorted set of the exact rules under base (see tagged), w
// the longest of their windows.
func setKey(base string, w time.Duration) string { return base + ":" + windowName(w) }

// bucketKey is the hash of the older bucket counts of a rule of window w
// kept in k buckets under base.
func bucketKey(base string, w time.Duration, k int) string {
	return setKey(base, w) + ":b" + strconv.Itoa(k)
}

// KeyFor returns the Redis key of the sorted set of a limiter's exact
// rules under key name k and DefaultPrefix, w the longest of their
// windows. Every limiter of a key keeps one configuration (Options.Key),
// so one set serves them all.
func KeyFor(k string, w time.Duration) string { return setKey(tagged("", k), w) }

// BucketKeyFor returns the Redis key of the older bucket counts of a rule
// with window w kept in k buckets under key name k and DefaultPrefix: a
// hash, for example rlcheck:{acme-api}:24h:b64.
func BucketKeyFor(name string, w time.Duration, k int) string {
	return bucketKey(tagged("", name), w, k)
}

// HeadKey returns the key of the hash every limiter of key name k (under
// DefaultPrefix) counts its calls in, with the running totals of its
// bucketed rules: rlcheck:{acme-api}. Limiter.Head names it under any
// prefix.
func HeadKey(k string) string { return tagged("", k) }

// stateField names the field of the head that holds the bucketed rule r's
// state: for example 24h:b64 (admit.lua, "State fields").
func stateField(r rule.Rule) string {
	return windowName(r.Window) + ":b" + strconv.Itoa(r.Buckets) + unitName(r)
}

// unitName tells a cost rule's names from a call rule's: ":" and its
// unit, or nothing for a call rule.
func unitName(r rule.Rule) string {
	if r.Unit == "" {
		return ""
	}
	return ":" + r.Unit
}

// keeping resolves how the script keeps r: Exact or a bucket count, at
// most one bucket per microsecond of the window.
func keeping(r rule.Rule, exact bool) int {
	if r.Buckets == 0 && exact {
		return rule.Exact
	}
	k := r.Keeping()
	if k > 0 {
		k = int(min(int64(k), ceilMicros(r.Window)))
	}
	return k
}

// ruleKey is the key under base of r kept as keeping says, when it is
// the only exact rule.
func ruleKey(base string, r rule.Rule, keep int) string {
	if keep > 0 {
		return bucketKey(base, r.Window, keep) + unitName(r)
	}
	return setKey(base, r.Window) + unitName(r)
}

// windowName spells a window rounded up to whole microseconds, so two
// windows that the script cannot tell apart share one name.
func windowName(w time.Duration) string {
	return rule.FormatWindow(time.Duration(ceilMicros(w)) * time.Microsecond)
}

func ceilMicros(d time.Duration) int64 {
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}

func randomPrefix() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("redislimit: member prefix: %w", err)
	}
	return hex.EncodeToString(b[:]) + ":", nil
}
