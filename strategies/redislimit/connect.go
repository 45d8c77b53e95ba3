package redislimit

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/rule"
)

// Conn is what a limiter and its owner need: scripts, and Close.
type Conn interface {
	redis.Scripter
	Close() error
}

// DefaultTimeout bounds each dial, read and write of a client made by Dial,
// and its wait for a pooled connection: a server that stops answering fails
// a call in about two of them (one retry), not in go-redis' default of
// seconds per read and half a minute in a cluster.
const DefaultTimeout = time.Second

// Dial connects to one server given as a redis:// or rediss:// URL, or,
// when cluster lists seeds, to a Redis Cluster; exactly one of the two must
// be set. A seed is host:port or a redis:// URL, whose user and password
// then serve the whole cluster. timeout (0 means DefaultTimeout) bounds
// every dial, read and write of the client, and the PING that Dial sends
// before returning, so a wrong address fails here rather than on the first
// call; the client ends every wait by its context's deadline too
// (ContextTimeoutEnabled), so a limiter runs its script on the caller's
// goroutine. A lost server fails each later call after one retry: a
// limiter would rather fail fast and closed. Credentials never appear in its
// errors.
func Dial(ctx context.Context, url string, cluster []string, timeout time.Duration) (Conn, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var (
		c     redis.UniversalClient
		where string
	)
	switch {
	case url != "" && len(cluster) > 0:
		return nil, errors.New("redislimit: give a server URL or cluster addresses, not both")
	case url != "":
		where = Redact(url)
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("redislimit: Redis URL %s: %w", where, redacted(err, url))
		}
		opt.DialerRetries, opt.MaxRetries, opt.ContextTimeoutEnabled = 1, 1, true
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = timeout, timeout, timeout, timeout
		c = redis.NewClient(opt)
	case len(cluster) > 0:
		opt := &redis.ClusterOptions{DialerRetries: 1, MaxRetries: 1, MaxRedirects: 1, ContextTimeoutEnabled: true,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolTimeout: timeout}
		shown := make([]string, len(cluster))
		for i, a := range cluster {
			shown[i] = Redact(a)
			addr, user, pass, err := clusterSeed(a)
			if err != nil {
				return nil, fmt.Errorf("redislimit: cluster address %s: %w", shown[i], redacted(err, a))
			}
			opt.Addrs = append(opt.Addrs, addr)
			if pass != "" || user != "" {
				opt.Username, opt.Password = user, pass
			}
		}
		where = strings.Join(shown, ",")
		c = redis.NewClusterClient(opt)
	default:
		return nil, errors.New("redislimit: no server URL and no cluster addresses")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		err = redacted(err, append([]string{url}, cluster...)...)
		if unreachable(err) {
			err = &unreachableError{err}
		}
		return nil, fmt.Errorf("redislimit: cannot reach Redis at %s: %w", where, err)
	}
	return c, nil
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
func Reset(ctx context.Context, c redis.Scripter, key string, rules []rule.Rule) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
	}
	keys := []string{HeadKey(key)}
	for _, r := range rules {
		for _, exact := range []bool{false, true} {
			k := ruleKey(key, r, keeping(r, exact))
			if keeping(r, exact) <= 0 {
				k = KeyFor(key, r.Window) // the set, whatever the unit
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
