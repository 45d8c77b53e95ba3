package redislimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/rule"
)

// Conn is what a limiter and its owner need: scripts, and Close. Dial
// returns one; DialClient and DialCluster return the clients themselves.
type Conn interface {
	redis.Scripter
	Close() error
}

// DefaultTimeout bounds each dial, read and write of a client made by Dial,
// and its wait for a pooled connection: a server that stops answering fails
// a call in about two of them (one retry), not in go-redis' default of
// seconds per read and half a minute in a cluster.
const DefaultTimeout = time.Second

// ClientOptions returns the options of a client of the one server at url
// (redis:// or rediss://) that fails fast and closed, for a service to
// adjust (pool size, TLS) before redis.NewClient: every dial, read, write
// and wait for a pooled connection bounded by timeout (0 means
// DefaultTimeout), one retry, and every wait ended by the context's
// deadline (ContextTimeoutEnabled), so a limiter runs its script on the
// caller's goroutine. Credentials never appear in its errors.
func ClientOptions(url string, timeout time.Duration) (*redis.Options, error) {
	timeout = cmp.Or(max(timeout, 0), DefaultTimeout)
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redislimit: Redis URL %s: %w", Redact(url), redacted(err, url))
	}
	opt.DialerRetries, opt.MaxRetries, opt.ContextTimeoutEnabled = 1, 1, true
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = timeout, timeout, timeout, timeout
	return opt, nil
}

// ClusterOptions is ClientOptions for a Redis Cluster reached through
// seeds, each host:port or a redis:// URL whose user and password then
// serve the whole cluster; a redirect is followed once.
func ClusterOptions(seeds []string, timeout time.Duration) (*redis.ClusterOptions, error) {
	timeout = cmp.Or(max(timeout, 0), DefaultTimeout)
	opt := &redis.ClusterOptions{DialerRetries: 1, MaxRetries: 1, MaxRedirects: 1, ContextTimeoutEnabled: true,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolTimeout: timeout}
	if len(seeds) == 0 {
		return nil, errors.New("redislimit: no cluster addresses")
	}
	for _, a := range seeds {
		addr, user, pass, err := clusterSeed(a)
		if err != nil {
			return nil, fmt.Errorf("redislimit: cluster address %s: %w", Redact(a), redacted(err, a))
		}
		opt.Addrs = append(opt.Addrs, addr)
		if pass != "" || user != "" {
			opt.Username, opt.Password = user, pass
		}
	}
	return opt, nil
}

// DialClient returns a client of the server at url made with
// ClientOptions, once a PING within timeout has answered, so that a wrong
// address fails here (ErrUnreachable) rather than on the first call.
func DialClient(ctx context.Context, url string, timeout time.Duration) (*redis.Client, error) {
	opt, err := ClientOptions(url, timeout)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(opt)
	if err := ping(ctx, c, opt.ReadTimeout, Redact(url), url); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// DialCluster is DialClient for a Redis Cluster reached through seeds
// (see ClusterOptions).
func DialCluster(ctx context.Context, seeds []string, timeout time.Duration) (*redis.ClusterClient, error) {
	opt, err := ClusterOptions(seeds, timeout)
	if err != nil {
		return nil, err
	}
	c := redis.NewClusterClient(opt)
	shown := make([]string, len(seeds))
	for i, a := range seeds {
		shown[i] = Redact(a)
	}
	if err := ping(ctx, c, opt.ReadTimeout, strings.Join(shown, ","), seeds...); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// Dial is DialClient when url is set and DialCluster when cluster lists
// seeds (exactly one of the two), for a caller that takes either as a
// Conn, as rlcheck simulate's --redis-url and --redis-cluster do.
func Dial(ctx context.Context, url string, cluster []string, timeout time.Duration) (Conn, error) {
	switch {
	case url != "" && len(cluster) > 0:
		return nil, errors.New("redislimit: give a server URL or cluster addresses, not both")
	case url != "":
		return DialClient(ctx, url, timeout)
	case len(cluster) > 0:
		return DialCluster(ctx, cluster, timeout)
	}
	return nil, errors.New("redislimit: no server URL and no cluster addresses")
}

// pinger is a client that can PING: every go-redis client.
type pinger interface {
	Ping(ctx context.Context) *redis.StatusCmd
}

// ping asks the server at where (addrs: what its credentials are taken
// from) for a PING within timeout, and names what stopped it: ErrUnreachable
// for no server, ErrTimeout for no answer in time. A refusal by the
// server's ACL (NOPERM) is an answer: the server is there.
func ping(ctx context.Context, c pinger, timeout time.Duration, where string, addrs ...string) error {
	pingCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Ping(pingCtx).Err() }() // a client may not bound its own waits by ctx
	var err error
	select {
	case err = <-done:
	case <-pingCtx.Done():
		err = pingCtx.Err()
	}
	var reply redis.Error
	switch {
	case err == nil, errors.As(err, &reply) && strings.HasPrefix(reply.Error(), "NOPERM"):
		return nil
	case unreachable(err):
		err = &unreachableError{redacted(err, addrs...)}
	case ctx.Err() == nil && pingCtx.Err() != nil:
		return fmt.Errorf("%w: no answer from %s to a PING within %v (%v)", ErrTimeout, where, timeout.Round(time.Millisecond), redacted(err, addrs...))
	default:
		err = redacted(err, addrs...)
	}
	return fmt.Errorf("redislimit: cannot reach Redis at %s: %w", where, err)
}

// clusterSeed reads a cluster seed: host:port, or a redis:// URL with an
// optional user and password.
func clusterSeed(s string) (addr, user, pass string, err error) {
	if !strings.Contains(s, "://") {
		return s, "", "", nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", "", err
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return "", "", "", fmt.Errorf("scheme %q, want redis", u.Scheme)
	}
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	return u.Host, user, pass, nil
}

// Redact returns a Redis address or URL fit for messages: the password of a
// URL becomes "xxxxx", and so does anything before an '@' that a URL parser
// cannot read.
func Redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	if start, at := userinfo(s); at >= 0 {
		return s[:start] + "xxxxx" + s[at:]
	}
	return s
}

// userinfo locates the credentials of an address: s[start:at], between
// its scheme and its last '@'; at is -1 when there are none.
func userinfo(s string) (start, at int) {
	at = strings.LastIndex(s, "@")
	if i := strings.Index(s, "://"); i >= 0 && i < at {
		start = i + 3
	}
	return start, at
}

// unreachableError is err, also matching ErrUnreachable, its text kept.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string        { return e.err.Error() }
func (e *unreachableError) Unwrap() error        { return e.err }
func (e *unreachableError) Is(target error) bool { return target == ErrUnreachable }

// redactedError hides the credentials of the addresses it was made from in
// its text, and still unwraps to the error it carries.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redacted returns err with every password and user:password found in
// addrs replaced by "xxxxx" in its text.
func redacted(err error, addrs ...string) error {
	text := err.Error()
	for _, a := range addrs {
		for _, secret := range secrets(a) {
			text = strings.ReplaceAll(text, secret, "xxxxx")
		}
	}
	if text == err.Error() {
		return err
	}
	return &redactedError{err: err, text: text}
}

// secrets lists the credential text of an address: what lies between its
// scheme and its last '@', and the password alone, longest first.
func secrets(a string) []string {
	start, at := userinfo(a)
	if at < 0 {
		return nil
	}
	info := a[start:at]
	var out []string
	if info != "" {
		out = append(out, info)
	}
	if _, pass, ok := strings.Cut(info, ":"); ok && pass != "" {
		out = append(out, pass)
		if p, err := url.PathUnescape(pass); err == nil && p != pass {
			out = append(out, p)
		}
	}
	return out
}

// resetScript deletes the rule keys (KEYS[2] on) and makes the head
// (KEYS[1]) anew: no state, no configuration yet (c empty: the first
// limiter to record claims it), no hold, and a count n at an epoch above
// any a limiter saw, Redis TIME in µs or the old count plus one, so that a
// running limiter takes the reset for its state going on, not for a loss.
// The head lives at least ARGV[1] ms, and as long as it would have.
var resetScript = redis.NewScript(`
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
local t = redis.call('TIME')
local epoch = t[1] * 1000000 + t[2]
local old = redis.pcall('HGET', KEYS[1], 'n')
if type(old) == 'string' then
  old = tonumber(old)
  if old and old >= epoch and old < 9007199254740991 then epoch = old + 1 end
end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'n', string.format('%d', epoch), 'c', '')
redis.call('PEXPIRE', KEYS[1], string.format('%d', math.max(ttl, tonumber(ARGV[1]))))
return #KEYS`)

// Reset deletes the keys a limiter for key and rules would use, and the
// state in the key's head, so a run can start from empty windows (a
// simulation replayed on a real server, a test) or limiters of a new
// configuration can take the key (the first to record claims it). It
// lifts a hold after a loss for every limiter of the key, running ones
// included: the head is made anew at a count above any they saw, so they
// go on as if nothing was lost (their calls before the reset no longer
// count: the caller resets knowing that). Without a deadline on ctx it
// gives Redis DefaultCallTimeout.
//
// Reset touches the keys under DefaultPrefix; Limiter.Reset those of a
// limiter's own Options.Prefix.
func Reset(ctx context.Context, c redis.Scripter, key string, rules []rule.Rule) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return reset(ctx, c, tagged("", key), key, rules)
}

// Reset is the package's Reset for this limiter's key, prefix and rules,
// for a limiter whose Options.Prefix is not the default.
func (l *Limiter) Reset(ctx context.Context) error {
	return reset(ctx, l.c, l.base, l.name, l.given)
}

// reset deletes the keys under base of limiters of key and rules, and
// makes the head anew (see Reset).
func reset(ctx context.Context, c redis.Scripter, base, key string, rules []rule.Rule) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
	}
	keys := []string{base}
	for _, r := range rules {
		for _, exact := range []bool{false, true} {
			k := ruleKey(base, r, keeping(r, exact))
			if keeping(r, exact) <= 0 {
				k = setKey(base, r.Window) // the set, whatever the unit
			}
			if indexOf(keys, k) < 0 {
				keys = append(keys, k)
			}
		}
	}
	var life time.Duration
	for _, r := range rules {
		life = max(life, stateLife(r))
	}
	life += 2 * leaseFor(rules)
	if err := resetScript.Run(ctx, c, keys, msText(life)).Err(); err != nil {
		if unreachable(err) {
			return fmt.Errorf("%w: reset %s: %w", ErrUnreachable, key, err)
		}
		return fmt.Errorf("redislimit: reset %s: %w", key, err)
	}
	return nil
}
