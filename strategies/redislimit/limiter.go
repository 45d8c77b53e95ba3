package redislimit

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

//go:embed admit.lua
var admitSource string

// Source returns the Lua text of the admission script without values: it
// raises an error if run. A limiter runs a copy that reads its values from
// ARGV (Script).
func Source() string {
	start, end := strings.Index(admitSource, constantsStart), strings.Index(admitSource, constantsEnd)
	return admitSource[:start+len(constantsStart)] +
		"error('rlcheck admit.lua: no constants; run the copy a Limiter makes (Limiter.Script)')\n" +
		admitSource[end:]
}

// admitScripts holds the limiters' copies of the script by text. A copy
// holds only its time source; the values (key lease, limits, windows,
// widths, bounds, the names of the rules' state fields) travel in ARGV. So
// limiters of any rules share one copy per time source, and a server,
// which keeps every script it is sent (Redis before 7.4 never evicts one),
// holds a few whatever the number of tenants and their rules.
var admitScripts sync.Map // string -> *redis.Script

// constantsStart and constantsEnd enclose the constants of admit.lua;
// writeScript replaces them.
const (
	constantsStart = "-- BEGIN CONSTANTS\n"
	constantsEnd   = "-- END CONSTANTS\n"
)

// writeScript returns admit.lua with the given constants, and its
// *redis.Script, shared by every limiter of the same text.
func writeScript(constants string) (string, *redis.Script) {
	start := strings.Index(admitSource, constantsStart)
	end := strings.Index(admitSource, constantsEnd)
	if start < 0 || end < start {
		panic("redislimit: admit.lua lost its constants block")
	}
	text := admitSource[:start+len(constantsStart)] + constants + admitSource[end:]
	s, _ := admitScripts.LoadOrStore(text, redis.NewScript(text))
	return text, s.(*redis.Script)
}

// Script returns the Lua text this limiter runs: admit.lua with the
// limiter's rules, time source and bounds written in.
func (l *Limiter) Script() string { return l.text }

// Errors a limiter's calls can end with; each is wrapped with the details
// (the key, the skew, the timeout).
var (
	// ErrWrongType reports a limiter key that holds something other than
	// what the limiter keeps there (a hash, or a sorted set), for example a
	// string another program wrote under that name.
	ErrWrongType = errors.New("redislimit: key holds the wrong kind of value")
	// ErrTimeout reports a Redis that did not answer within the call's
	// deadline (Options.CallTimeout, or the client's own read timeout).
	ErrTimeout = errors.New("redislimit: Redis did not answer in time")
	// ErrSkew reports, under Client time, a caller whose clock is further
	// from Redis TIME than Options.MaxSkew allows; the call was refused.
	ErrSkew = errors.New("redislimit: client clock too far from Redis TIME")
	// ErrCorrupt reports state the script never writes: a set holding an
	// entry, or a hash a bucket, implausibly far in the future, which
	// would otherwise hold its rule full; a count, level or bound that is
	// negative, fractional, not a number, above its rule's limit or out of
	// order, which could admit calls past the limit. Nothing was
	// recorded: delete the key (or Reset it).
	ErrCorrupt = errors.New("redislimit: corrupt limiter state")
	// ErrStateLost reports that the limiter's state vanished from Redis
	// while it held recent admissions (FLUSHALL, eviction, a restart
	// without the data, a failover to a replica that lacked it), or came
	// back from an older snapshot: windows may have been emptied, and a
	// call recorded on them could overfill one. Nothing was recorded, and
	// Redis holds every limiter of the key back, the one that found the
	// loss included, for Options.LossHold (by default the longest window)
	// or until Reset (docs/redis.md, Lost state). It is only ever the
	// server's answer: a server that cannot be reached is ErrUnreachable.
	ErrStateLost = errors.New("redislimit: limiter state lost")
	// ErrUnreachable reports a server that took no call: the dial failed
	// (connection refused, no route, no such host) or the server closed the
	// connection (killed, restarted). Nothing is known of the call's
	// record when the connection closed mid-run; the caller must not send.
	ErrUnreachable = errors.New("redislimit: Redis is unreachable")
	// ErrMemberClash reports a member recorded by another call:
	// limiters sharing a key were given the same MemberPrefix.
	ErrMemberClash = errors.New("redislimit: member clash")
	// ErrConfig reports a key whose state was made by limiters of another
	// configuration (Limiter.Config): their windows, margins, limits or
	// bookkeeping differ, so the two would not share one budget. The call
	// was refused, nothing recorded; the message names both
	// configurations. Give a new configuration a new Key, or stop every
	// limiter of the old one and Reset the key.
	ErrConfig = errors.New("redislimit: key kept by limiters of another configuration")
)

// Limiter admits calls under every rule at once, with its state in Redis.
// It is safe for concurrent use, and many processes may share one Key.
type Limiter struct {
	c       redis.Scripter
	rt      clock.Runtime
	source  TimeSource
	now     func() int64 // the clock of Client and Virtual
	name    string       // Options.Key
	base    string       // the start of every key: Options.Prefix and {Key}
	rules   []rule.Rule  // one per distinct window, as recorded
	keys    []string     // one per rule
	binding []int        // for each entry of rules, the rule given to New that binds
	script  []string     // the head, then keys: the script's KEYS
	opts    Options
	lease   time.Duration
	admit   *redis.Script // admit.lua with this limiter's constants
	text    string        // its text
	vals    []any         // the values its text reads from ARGV
	prefix  string
	mine    bool // the prefix is random: any entry of a member is its call's
	counter atomic.Uint64
	queue   clock.Mutex // refused callers, in arrival order

	callTimeout time.Duration // 0: none
	bounded     bool          // c ends its waits by the context's deadline
	maxWait     time.Duration // beyond it a reply is corrupt, see admit.lua
	expectFor   time.Duration // how long after a refresh the head must exist
	holdFor     time.Duration // how long every limiter is held back after a loss; 0: not at all
	refreshed   atomic.Int64  // rt instant of the last expiry refresh; 0: none
	seen        atomic.Int64  // the highest count n of the head seen; 0: none
	expectUntil atomic.Int64  // rt instant until which the head must exist

	runs  atomic.Int64
	stats *strategies.StatsKeeper

	// settledAt, when set (by tests), is told of each settlement that took
	// effect: the member's text and the script's instant, in ns.
	settledAt func(member string, at int64)

	// Costs: the units the rules given to New meter, in the order of
	// AcquireCost's costs; those rules; and, per kept rule, its unit's
	// index from 1 (0 for a call rule). units is empty when every rule
	// counts calls: then the script gets no costs.
	units  []string
	given  []rule.Rule
	unitOf []int
	ones   []int64 // Acquire's costs: 1 in every unit

	// Leases (lease.go): the script's KEYS with the lease set last, the
	// lease values of ARGV[2], and the calls Release gives back.
	leasedKeys []string
	leaseArg   string
	held       sync.Mutex
	leased     []recorded
}

var _ strategies.Limiter = (*Limiter)(nil)
var _ strategies.StatsReporter = (*Limiter)(nil)
var _ strategies.CostLimiter = (*Limiter)(nil)

// New returns a limiter for rules over c (a *redis.Client, a
// *redis.ClusterClient, or a client of miniredis), once c's server has
// answered a PING within Options.CallTimeout: a dead server is
// ErrUnreachable here, at a service's start, rather than on every call
// (Options.Lazy skips the PING). rt supplies Sleep, and Now
// for the Client and Virtual time sources. Windows are rounded up to whole
// microseconds; rules with the same window and bookkeeping merge into the
// strictest one. Each rule is kept as it says (exact, or in buckets), and
// rules that leave it open follow the default policy (rule.Rule.Keeping:
// exact up to rule.ExactUpTo, else bucketed) unless Options.Exact is set.
func New(c redis.Scripter, rt clock.Runtime, rules []rule.Rule, opts Options) (*Limiter, error) {
	if c == nil || rt == nil {
		return nil, errors.New("redislimit: New needs a Redis client and a runtime")
	}
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, errors.New("redislimit: no rules")
	}
	l := &Limiter{c: c, rt: rt, name: opts.Key, base: tagged(opts.Prefix, opts.Key), source: opts.TimeSource,
		prefix: opts.MemberPrefix, now: rt.Now, queue: rt.NewMutex()}
	if opts.TimeSource == Virtual && opts.Now != nil {
		l.now = opts.Now
	}
	if l.prefix == "" {
		p, err := randomPrefix()
		if err != nil {
			return nil, err
		}
		l.prefix, l.mine = p, true
	}
	l.callTimeout = opts.CallTimeout
	if l.callTimeout == 0 {
		l.callTimeout = DefaultCallTimeout
	}
	l.callTimeout = max(l.callTimeout, 0)
	l.bounded = boundsWaits(c)
	if err := l.keep(rules, opts.Exact); err != nil {
		return nil, err
	}
	l.given, l.units = append([]rule.Rule(nil), rules...), rule.Units(rules)
	for _, r := range l.rules {
		l.unitOf = append(l.unitOf, indexOf(l.units, r.Unit)+1)
	}
	for range l.units {
		l.ones = append(l.ones, 1)
	}
	l.opts = opts
	l.setLease(leaseFor(rules))
	l.stats = strategies.NewStatsKeeper(len(rules))
	if p, ok := c.(pinger); ok && !opts.Lazy && !opts.InProcess {
		if err := check(p, cmp.Or(l.callTimeout, DefaultCallTimeout)); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// keep refuses the rules the script cannot keep and lays out the rest: a
// key per window and bookkeeping, rules that share one merged into the
// strictest, and every exact rule in the one sorted set.
func (l *Limiter) keep(rules []rule.Rule, exact bool) error {
	for i, r := range rules {
		if r.Limit <= 0 || r.Window <= 0 {
			return fmt.Errorf("redislimit: rule %v: limit and window must be positive", r)
		}
		if r.Window > 100*365*24*time.Hour {
			return fmt.Errorf("redislimit: rule %v: window longer than a century", r)
		}
		if err := checkKind(r); err != nil {
			return err
		}
		r.Buckets = keeping(r, exact)
		key := ruleKey(l.base, r, r.Buckets)
		if r.Kind != rule.Sliding {
			r.Buckets, key = 0, setKey(l.base, r.Window)+":"+kindTag(r)+unitName(r)
		}
		if k := indexOf(l.keys, key); k >= 0 {
			if r.Limit < l.rules[k].Limit {
				l.rules[k].Limit = r.Limit
				l.binding[k] = i
			}
			continue
		}
		l.binding = append(l.binding, i)
		l.keys = append(l.keys, key)
		l.rules = append(l.rules, r)
	}
	// Every exact rule reads the one sorted set, named by the longest of
	// their windows.
	var exactW time.Duration
	for _, r := range l.rules {
		if r.Kind == rule.Sliding && r.Buckets <= 0 {
			exactW = max(exactW, r.Window)
		}
	}
	for i, r := range l.rules {
		if r.Kind == rule.Sliding && r.Buckets <= 0 {
			l.keys[i] = setKey(l.base, exactW)
		}
	}
	return nil
}

// check asks c's server for a PING within timeout. A client of go-redis
// tries first one connection with its own dialer, without the retries and
// backoff by which its PING would take 1.7 s to find a closed port.
func check(c pinger, timeout time.Duration) error {
	where, network, dial := "the client's server", "tcp", (&net.Dialer{Timeout: timeout}).DialContext
	var addrs []string
	var own func(context.Context, string, string) (net.Conn, error)
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		addrs, network, own = []string{o.Addr}, cmp.Or(o.Network, network), o.Dialer
	case *redis.ClusterClient:
		addrs, own = c.Options().Addrs, c.Options().Dialer
	}
	if own != nil {
		dial = own
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for _, a := range addrs {
		conn, err := dial(ctx, network, a)
		if last = err; err == nil {
			_ = conn.Close()
			break
		}
	}
	if len(addrs) > 0 {
		where = strings.Join(addrs, ",")
	}
	if last != nil && unreachable(last) {
		return fmt.Errorf("redislimit: cannot reach Redis at %s: %w", where, &unreachableError{last})
	}
	dl, _ := ctx.Deadline()
	return ping(context.Background(), c, time.Until(dl), where) // what the dial left of timeout
}

// checkOptions refuses options New cannot use: a bad key name, an unknown
// time source, a hold after a loss beyond the script's exact integers.
func checkOptions(opts Options) error {
	if err := checkKey(opts.Key); err != nil {
		return err
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return err
	}
	switch opts.TimeSource {
	case Server, Client, Virtual:
	default:
		return fmt.Errorf("redislimit: unknown time source %v", opts.TimeSource)
	}
	if opts.LossHold > 100*365*24*time.Hour {
		return fmt.Errorf("redislimit: LossHold %v longer than a century", opts.LossHold)
	}
	return checkLeaseOptions(opts)
}

// expiryLease is how often a limiter refreshes its keys' expiries when
// its longest window is short: each refresh makes them outlive their
// windows by two leases.
const expiryLease = time.Second

// maxLease bounds the lease of a limiter with long windows.
const maxLease = 1024 * time.Second

// leaseFor is the lease of a limiter of rules: a 64th of its longest
// window, within expiryLease and maxLease, in whole milliseconds. A key of
// a day's window then outlives its last call by 2 × 1024 s rather than
// 2 s, and a key called once a second has its expiries refreshed once in
// 1024 calls rather than on every call (five commands more: docs/redis.md,
// Expiry). The lease travels in ARGV, so
// limiters of any lease share the script.
func leaseFor(rules []rule.Rule) time.Duration {
	var longest time.Duration
	for _, r := range rules {
		longest = max(longest, r.Window)
	}
	return min(max(longest/64, expiryLease), maxLease).Truncate(time.Millisecond)
}

// setLease derives the script's values (ARGV after the call's own, see
// admit.lua) and its keys from the lease g; tests shorten it to see keys
// expire.
func (l *Limiter) setLease(g time.Duration) {
	opts := l.opts
	l.lease = g
	var perRule, names []any
	var longest time.Duration // of the keys' lives
	var widest time.Duration  // of the windows
	for _, r := range l.rules {
		longest, widest = max(longest, l.keyLife(stateLife(r))+2*g), max(widest, stateLife(r))
		wµs := ceilMicros(r.Window)
		if r.Kind != rule.Sliding {
			perRule = append(perRule, strconv.Itoa(r.Limit), strconv.FormatInt(wµs, 10), kindSpec(r))
			names = append(names, windowName(r.Window)+":"+kindTag(r)+unitName(r))
			continue
		}
		if r.Buckets <= 0 {
			perRule = append(perRule, "-"+strconv.Itoa(r.Limit), strconv.FormatInt(wµs, 10), "0")
			continue
		}
		width := (wµs + int64(r.Buckets) - 1) / int64(r.Buckets)
		perRule = append(perRule, strconv.Itoa(r.Limit), strconv.FormatInt(wµs, 10), strconv.FormatInt(width, 10))
		names = append(names, stateField(r))
	}
	l.script = append([]string{l.base}, l.keys...)
	l.leasedKeys = append(append([]string(nil), l.script...), l.base+":leases")
	l.leaseArg = leaseArg(opts)
	// The count n lives as long as the longest-lived key after a refresh,
	// and the caller counts on it for one lease less. After a loss every
	// limiter of the key is held back for holdFor (Options.LossHold).
	l.expectFor = longest - g
	l.holdFor = cmp.Or(opts.LossHold, widest)
	l.holdFor = max(l.holdFor, 0)

	skew := ""
	ahead := FutureTolerance
	if l.source == Client && opts.MaxSkew >= 0 {
		s := cmp.Or(opts.MaxSkew, DefaultMaxSkew)
		skew = strconv.FormatInt(ceilMicros(s), 10)
		ahead = max(ahead, 2*s)
	}
	ahead += max(widest, time.Second)
	l.maxWait = widest + ahead
	retry := ""
	if !l.mine {
		retry = strconv.FormatInt(ceilMicros(cmp.Or(l.callTimeout, time.Minute)), 10)
	}
	l.vals = append([]any{msText(g), strconv.FormatInt(ceilMicros(ahead), 10), retry, skew, l.Config(),
		strconv.FormatInt(ceilMicros(l.holdFor), 10)}, perRule...)
	l.vals = append(l.vals, names...)
	l.text, l.admit = writeScript(fmt.Sprintf("local serverTime, virtual = %t, %t\n",
		l.source == Server, l.source == Virtual))
}

// keyLife is how long a key of a rule with window w outlives the record
// its expiry was last refreshed for, lease aside.
func (l *Limiter) keyLife(w time.Duration) time.Duration {
	if l.source == Virtual {
		return max(w, VirtualTTL)
	}
	return w
}

// msText spells d in whole milliseconds, rounded up.
func msText(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Millisecond-1)/time.Millisecond), 10)
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// Rules returns the rules as the limiter keeps them: one per window and
// bookkeeping, in the order of first appearance, each with its bookkeeping
// resolved (Buckets is rule.Exact or a bucket count).
func (l *Limiter) Rules() []rule.Rule { return append([]rule.Rule(nil), l.rules...) }

// Keys returns the Redis keys of the rules, in the order of Rules: the
// exact rules all name the one sorted set. The head, which every call
// reads, is Head.
func (l *Limiter) Keys() []string { return append([]string(nil), l.keys...) }

// Head returns the key of the hash every limiter of the key counts its
// calls in: Options.Prefix and the Key in braces, myapp:{acme-api}.
func (l *Limiter) Head() string { return l.base }

// Acquire waits until every rule admits the call and the script has recorded
// it. It never admits without the script's consent: any Redis error ends it
// with that error, and nothing is recorded when ctx ends first.
func (l *Limiter) Acquire(ctx context.Context) error {
	_, err := l.AcquireAt(ctx)
	return err
}

// AcquireAt is Acquire that also returns the instant, in nanoseconds of the
// limiter's time source (a whole microsecond), at which the call was
// recorded. With the Server source it is Redis TIME.
//
// A refused call whose wait would outlast ctx's deadline fails at once,
// recording nothing, with a *strategies.DeadlineError naming the wait
// (context.DeadlineExceeded for errors.Is), as the in-memory limiters do.
//
// A call first tries the script at once. When refused, it queues behind
// this limiter's other refused callers, first come, first served, so that
// one caller per limiter polls Redis: otherwise every waiter of every
// process would wake and run the script for each freed slot.
func (l *Limiter) AcquireAt(ctx context.Context) (int64, error) {
	return l.acquireAt(ctx, l.ones)
}

// AcquireCost is Acquire for a call costing costs[u] in the u-th unit of
// rule.Units of the rules given to New. A call rule charges it 1,
// a cost rule its cost in the rule's unit (0 takes no room). A call that
// no wait could admit (a cost above a rule's limit), and malformed costs,
// fail at once with a *strategies.CostError, recording nothing.
func (l *Limiter) AcquireCost(ctx context.Context, costs []int64) error {
	_, err := l.AcquireCostAt(ctx, costs)
	return err
}

// AcquireCostAt is AcquireCost that also returns the instant the call was
// recorded, as AcquireAt.
func (l *Limiter) AcquireCostAt(ctx context.Context, costs []int64) (int64, error) {
	if err := l.checkCosts(costs); err != nil {
		return 0, err
	}
	return l.acquireAt(ctx, costs)
}

// checkCosts refuses costs no wait admits.
func (l *Limiter) checkCosts(costs []int64) error {
	if len(costs) != len(l.units) {
		return &strategies.CostError{Msg: fmt.Sprintf("%d costs for %d units", len(costs), len(l.units))}
	}
	for _, c := range costs {
		if c < 0 {
			return &strategies.CostError{Cost: c, Msg: fmt.Sprintf("a negative cost (%d)", c)}
		}
	}
	for _, r := range l.given {
		if u := indexOf(l.units, r.Unit); u >= 0 && costs[u] > kindCap(r) {
			return &strategies.CostError{Rule: r, Cost: costs[u]}
		}
	}
	return nil
}

// acquireAt is AcquireAt for a call of costs (l.ones for Acquire). Under
// an in-flight cap the call takes a lease, which Release gives back.
func (l *Limiter) acquireAt(ctx context.Context, costs []int64) (int64, error) {
	capped := l.opts.MaxInFlight > 0
	call, err := l.acquire(ctx, costs, capped)
	if err == nil && capped {
		l.held.Lock()
		l.leased = append(l.leased, call)
		l.held.Unlock()
	}
	return call.at, err
}

// recorded is a call the script recorded: its member, the instant it was
// recorded (ns), and the check time of the run that recorded it (µs).
type recorded struct {
	id     string // the member without its costs
	member string
	at     int64
	check  int64
	costs  []int64
}

// acquire waits until the script records a call of costs, which takes a
// lease when leased. A limiter with cost rules writes the costs into the
// call's member, after a '|', so that its entry in the sorted set carries
// them (admit.lua).
func (l *Limiter) acquire(ctx context.Context, costs []int64, leased bool) (recorded, error) {
	if err := ctx.Err(); err != nil {
		return recorded{}, err
	}
	n := l.counter.Add(1)
	a := recorded{id: l.prefix + strconv.FormatUint(n, 10), costs: costs}
	a.member = a.id
	var tail []any
	if len(l.units) > 0 {
		a.member, tail = l.costArgs(a.id, costs)
	}
	sweep := n%sweepEvery == 0 // by counter, so simulations stay reproducible
	o, err := l.tryLeased(ctx, a.member, sweep, tail, leased)
	if err != nil || o.wait == 0 {
		a.at, a.check = o.at, o.check
		return a, err
	}
	if err := strategies.Within(ctx, l.rt, o.wait); err != nil {
		return recorded{}, fmt.Errorf("redislimit: %w", err)
	}
	asked := l.rt.Now()
	if err := l.queue.Lock(ctx); err != nil {
		return recorded{}, err
	}
	defer l.queue.Unlock()
	o.wait -= time.Duration(l.rt.Now() - asked) // time spent in the queue
	for {
		if err := l.sleepFor(ctx, o); err != nil {
			return recorded{}, err
		}
		if o, err = l.tryLeased(ctx, a.member, sweep, tail, leased); err != nil || o.wait == 0 {
			a.at, a.check = o.at, o.check
			return a, err
		}
	}
}

// sleepFor sleeps the wait o asks for, within ctx's deadline, and counts
// it against the binding rule (none for the in-flight cap).
func (l *Limiter) sleepFor(ctx context.Context, o outcome) error {
	if err := strategies.Within(ctx, l.rt, o.wait); err != nil {
		return fmt.Errorf("redislimit: %w", err)
	}
	if o.wait > 0 {
		slept := l.rt.Now()
		if o.rule >= 0 {
			l.stats.Bound(l.binding[o.rule], o.at)
		}
		err := l.rt.Sleep(ctx, o.wait)
		if o.rule >= 0 {
			l.stats.Wait(l.binding[o.rule], time.Duration(l.rt.Now()-slept))
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// costArgs returns the member of a call of costs and the script's
// values that follow the rules': per kept rule, what the call costs in it
// and its unit's index from 1 (0 for a call rule).
func (l *Limiter) costArgs(member string, costs []int64) (string, []any) {
	b := []byte(member)
	for u, c := range costs {
		if u == 0 {
			b = append(b, '|')
		} else {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, c, 10)
	}
	tail := make([]any, 0, 2*len(l.rules))
	for i := range l.rules {
		c := int64(1)
		if u := l.unitOf[i]; u > 0 {
			c = costs[u-1]
		}
		tail = append(tail, strconv.FormatInt(c, 10), strconv.Itoa(l.unitOf[i]))
	}
	return string(b), tail
}

// scriptArgs builds the script's ARGV for one run at rt instant now, and
// says whether a recorded call refreshes the keys' expiries.
func (l *Limiter) scriptArgs(member string, sweep bool, now int64) ([]any, string) {
	// The keys' expiries are extended once a lease by a recorded call,
	// and the head's count last seen is sent while the head must exist.
	last := l.refreshed.Load()
	expect, refresh := "0", "0"
	if seen := l.seen.Load(); seen > 0 && now < l.expectUntil.Load() {
		expect = strconv.FormatInt(seen, 10)
	}
	if last == 0 || now-last >= int64(l.lease) {
		refresh = "1"
	}
	args := make([]any, 4, 6+len(l.vals))
	args[0], args[1], args[2], args[3] = member, boolArg(sweep), expect, refresh
	if l.source != Server {
		// Floor for the check and ceiling for the record keep the decision
		// on the safe side of every nanosecond boundary.
		at := l.now()
		args = append(args, strconv.FormatInt(rule.FloorDiv(at, 1000), 10), strconv.FormatInt(-rule.FloorDiv(-at, 1000), 10))
	}
	return append(args, l.vals...), refresh
}

// try runs the script once at the time source's instant and returns the
// longest wait (0 when recorded), the instant it used in nanoseconds, and the
// index of the rule that asked for the wait.
func (l *Limiter) try(ctx context.Context, member string, sweep bool) (time.Duration, int64, int, error) {
	return l.tryCost(ctx, member, sweep, nil)
}

// tryCost is try for a call whose costs give the script's last values
// (tail, see costArgs).
func (l *Limiter) tryCost(ctx context.Context, member string, sweep bool, tail []any) (time.Duration, int64, int, error) {
	o, err := l.tryLeased(ctx, member, sweep, tail, false)
	return o.wait, o.at, o.rule, err
}

// outcome is one run's answer: the wait (0 when recorded), the instant
// used (ns), the rule that asked for the wait (-1: the in-flight cap),
// and the check time (µs).
type outcome struct {
	wait  time.Duration
	at    int64
	rule  int
	check int64
}

// tryLeased is tryCost for a call that takes a lease when leased.
func (l *Limiter) tryLeased(ctx context.Context, member string, sweep bool, tail []any, leased bool) (outcome, error) {
	now := l.rt.Now()
	args, refresh := l.scriptArgs(member, sweep, now)
	keys := l.script
	if leased {
		args[1], keys = "L"+boolArg(sweep)+l.leaseArg, l.leasedKeys
	}
	args = append(args, tail...)
	expected := args[2] != "0"
	l.runs.Add(1)
	res, err := l.run(ctx, keys, args)
	if err != nil {
		return outcome{}, l.scriptError(ctx, err)
	}
	ints := replyInts(res)
	switch {
	case len(ints) == 2: // recorded at ints[0] µs, by this run or an earlier one
		if refresh == "1" {
			l.refreshed.Store(now)
			storeMax(&l.expectUntil, now+int64(l.expectFor))
		}
		l.saw(expected, ints[1])
		l.stats.RecordAll()
		return outcome{at: ints[0] * 1000, check: l.checkOf(args, ints[0])}, nil
	case len(ints) == 4: // refused: {wait µs, check µs, rule, n}
		wait, check, bind := ints[0], ints[1], ints[2]
		// The script bounds the wait; a larger one would overflow
		// nanoseconds, so it is refused here too. Rule n+1 is the cap.
		if wait > 0 && wait <= l.maxWait.Microseconds() && bind >= 1 && int(bind) <= len(l.rules)+boolInt(leased) {
			if ints[3] > 0 {
				l.saw(expected, ints[3])
				storeMax(&l.expectUntil, now+int64(l.lease/2))
			}
			rule := int(bind) - 1
			if rule == len(l.rules) {
				rule = -1
			}
			return outcome{wait: time.Duration(wait) * time.Microsecond, at: check * 1000, rule: rule, check: check}, nil
		}
	}
	return outcome{}, fmt.Errorf("redislimit: unexpected script reply %v", res)
}

// replyInts returns the script's reply as integers, or nil.
func replyInts(res any) []int64 {
	v, ok := res.([]any)
	if !ok {
		return nil
	}
	ints := make([]int64, len(v))
	for i, x := range v {
		n, ok := x.(int64)
		if !ok {
			return nil
		}
		ints[i] = n
	}
	return ints
}

// checkOf returns the check time (µs) of a run whose args are given and
// whose call was recorded at record µs: the caller's, under its clock;
// the record itself, under Server time (the script reads TIME once).
func (l *Limiter) checkOf(args []any, record int64) int64 {
	if l.source != Server {
		if s, ok := args[4].(string); ok {
			if c, err := strconv.ParseInt(s, 10, 64); err == nil && c <= record {
				return c
			}
		}
	}
	return record
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// saw notes the head's count n of a reply. A call sent without a count
// (the limiter no longer counted on the head) may find it made anew,
// counting from 1: its count replaces the one seen before.
//
// A refused call means a recorded call in a window, whose limiter keeps
// the head alive at least a lease past it: so try counts on the head for
// half a lease after a refusal.
func (l *Limiter) saw(expected bool, count int64) {
	if expected {
		storeMax(&l.seen, count)
		return
	}
	l.seen.Store(count)
}

// storeMax raises v to x unless it is already higher.
func storeMax(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if old >= x || v.CompareAndSwap(old, x) {
			return
		}
	}
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// scriptCodes map the codes that start the script's error replies.
var scriptCodes = []struct {
	code string
	err  error
}{
	{"WRONGTYPE", ErrWrongType},
	{"SKEW", ErrSkew},
	{"CORRUPT", ErrCorrupt},
	{"LOST", ErrStateLost},
	{"HELD", ErrStateLost},
	{"CLASH", ErrMemberClash},
	{"CONFIG", ErrConfig},
}

// lostCount reads the count the script gave the head it made anew after
// finding a loss, at the end of its message.
var lostCount = regexp.MustCompile(`\(count (\d+)\)$`)

// lost notes that this limiter found its state lost: the script made the
// head anew at a count above any seen before (msg ends with it) and holds
// every limiter of the key back. This one counts on that head for the
// hold, so that a second loss during it (the new head flushed too) is
// found and held again, and a Reset (a higher count, no hold) is not.
func (l *Limiter) lost(msg string) {
	l.refreshed.Store(0)
	l.seen.Store(0)
	l.expectUntil.Store(0)
	m := lostCount.FindStringSubmatch(msg)
	if m == nil {
		return
	}
	if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && l.holdFor > 0 {
		l.seen.Store(n)
		l.expectUntil.Store(l.rt.Now() + int64(l.holdFor))
	}
}

// scriptError names a failed run: a refusal of the script, a timeout, or
// the end of ctx.
func (l *Limiter) scriptError(ctx context.Context, err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, c := range scriptCodes {
			if rest, ok := strings.CutPrefix(msg, c.code+" "); ok {
				if c.code == "LOST" {
					l.lost(rest)
				}
				return fmt.Errorf("%w: %s", c.err, rest)
			}
		}
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("redislimit: %w (%v)", ctxErr, err)
	}
	if errors.Is(err, ErrTimeout) {
		return err
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return fmt.Errorf("redislimit: %w", err)
}

// unreachable says whether err means no server took the call: a dial that
// failed (refused, no route, no such host), or a connection the server
// closed or reset (killed mid-run). A dial or read that timed out is
// ErrTimeout instead: the server may be there, and slow.
func unreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && !op.Timeout() {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && !dns.Timeout() {
		return true
	}
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// run runs the script and returns by the call timeout or ctx's end, even
// when the client does not: go-redis can spend its own dial timeout on a
// peer that accepts but never answers, and waits without end when its
// read timeout is off. A run abandoned that way may still record the call,
// which spends capacity without a send, never the reverse. A client that
// bounds every wait by the context's deadline (see boundsWaits) runs the
// script on the caller's goroutine; any other hands it to a runner and
// waits for the reply or the deadline, whichever comes first.
func (l *Limiter) run(ctx context.Context, keys []string, args []any) (any, error) {
	if l.opts.InProcess || (ctx.Done() == nil && l.callTimeout == 0) {
		return l.admit.Run(ctx, l.c, keys, args...).Result()
	}
	callCtx, cancel := ctx, context.CancelFunc(nil)
	if l.callTimeout > 0 {
		callCtx, cancel = context.WithTimeout(ctx, l.callTimeout)
	}
	if l.bounded {
		res, err := l.admit.Run(callCtx, l.c, keys, args...).Result()
		if cancel != nil {
			cancel()
		}
		switch {
		case err == nil:
			return res, nil
		case ctx.Err() != nil:
			return nil, fmt.Errorf("no reply from Redis before the deadline: %w", ctx.Err())
		case callCtx.Err() != nil:
			return nil, fmt.Errorf("%w: no reply within the call timeout of %v (%v)", ErrTimeout, l.callTimeout, err)
		}
		return res, err
	}
	j := jobs.Get().(*job)
	j.ctx, j.l, j.keys, j.args = callCtx, l, keys, args
	scriptRunners.do(j)
	select {
	case <-j.done:
		res, err := j.res, j.err
		*j = job{done: j.done}
		jobs.Put(j)
		timedOut := err != nil && ctx.Err() == nil && callCtx.Err() != nil
		if cancel != nil {
			cancel()
		}
		if timedOut {
			return nil, fmt.Errorf("%w: no reply within the call timeout of %v (%v)", ErrTimeout, l.callTimeout, err)
		}
		return res, err
	case <-callCtx.Done():
		// j stays with its runner, which may still write to it.
		if cancel != nil {
			cancel()
		}
		if ctx.Err() == nil {
			return nil, fmt.Errorf("%w: no reply within the call timeout of %v", ErrTimeout, l.callTimeout)
		}
		return nil, fmt.Errorf("no reply from Redis before the deadline: %w", ctx.Err())
	}
}

// boundsWaits says whether c ends every wait of a command (dial, pool,
// read, write, retries) by the context's deadline: a go-redis client or
// cluster client with ContextTimeoutEnabled (Dial sets it) and its read
// and write timeouts on. Without ContextTimeoutEnabled go-redis sets its
// socket deadlines from its own timeouts alone.
func boundsWaits(c redis.Scripter) bool {
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		return o.ContextTimeoutEnabled && o.ReadTimeout >= 0 && o.WriteTimeout >= 0
	case *redis.ClusterClient:
		o := c.Options()
		return o.ContextTimeoutEnabled && o.ReadTimeout >= 0 && o.WriteTimeout >= 0
	}
	return false
}

// job is one script run handed to a runner. The caller takes the reply
// from it and puts it back in jobs; a job whose caller left at its
// deadline stays with its runner and is dropped.
type job struct {
	ctx  context.Context
	l    *Limiter
	keys []string
	args []any
	res  any
	err  error
	done chan struct{} // buffered: the runner never waits for the caller
}

var jobs = sync.Pool{New: func() any { return &job{done: make(chan struct{}, 1)} }}

func (j *job) run() {
	j.res, j.err = j.l.admit.Run(j.ctx, j.l.c, j.keys, j.args...).Result()
	j.done <- struct{}{}
}

// runners runs script calls on goroutines kept between calls: a goroutine
// made per call grows its stack through go-redis every time, copying it a
// few times, which cost about a sixth of the client's CPU per admission. A
// call that hangs keeps its goroutine; the next ones start others. Idle
// ones end after runnerIdle. One set serves every limiter of the process,
// so that the many short-lived limiters of a simulation leave no idle
// goroutine each.
type runners struct {
	work chan *job
}

var scriptRunners = runners{work: make(chan *job)}

const runnerIdle = 10 * time.Second

func (r *runners) do(j *job) {
	select {
	case r.work <- j:
	default:
		go r.loop(j)
	}
}

// loop runs j and the jobs that follow until none came for runnerIdle. It
// notes when each job ended rather than resetting its timer after each:
// a timer's reset costs more than reading the clock.
func (r *runners) loop(j *job) {
	idle := time.NewTimer(runnerIdle)
	defer idle.Stop()
	for {
		j.run()
		ended := time.Now()
		for j = nil; j == nil; {
			select {
			case j = <-r.work:
			case <-idle.C:
				d := time.Since(ended)
				if d >= runnerIdle {
					return
				}
				idle.Reset(runnerIdle - d)
			}
		}
	}
}

// sweepEvery is how often, in calls of one limiter, the script sweeps
// expired entries from sets that do not fill up by themselves; a set whose
// limit-th latest entry has expired is swept on every admission anyway.
const sweepEvery = 16

// Runs returns how many times this limiter has run the script, denied runs
// included: the load it puts on Redis.
func (l *Limiter) Runs() int64 { return l.runs.Load() }

// Stats returns this limiter's own records and waits, indexed like the
// rules given to New; of rules that share a window, the strictest binds.
func (l *Limiter) Stats() strategies.Stats { return l.stats.Stats() }
