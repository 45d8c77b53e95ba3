package catalog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/workload"
)

// newRedis builds one worker's limiter of the redis strategy: each worker
// stands for a process of its own, and all share the run's key. Server time
// is simulated by the run's unskewed clock; client time is the worker's
// skewed view.
func newRedis(e Env, src redislimit.TimeSource, exact bool) (strategies.Limiter, error) {
	if e.Shared.Redis == nil {
		return nil, errors.New("no Redis to run on")
	}
	if e.Worker == 0 {
		// A real server may still hold this run's keys from an earlier run.
		if err := redislimit.Reset(context.Background(), e.Shared.Redis, e.Shared.Key, e.Rules); err != nil {
			return nil, err
		}
	}
	opts := redislimit.Options{Key: e.Shared.Key, TimeSource: src, MemberPrefix: fmt.Sprintf("w%d:", e.Worker), Exact: exact}
	if src == redislimit.Virtual {
		opts.Now = e.Shared.Now
	}
	opts.MaxSkew = -1 // client time here is a simulated clock, not the host's
	// A run on virtual time must not fail because the wall clock moved on.
	opts.InProcess = e.Shared.InProcess
	var c redis.Scripter = e.Shared.Redis
	if p := e.Shared.rtt; p != nil {
		c = rttScripter{c, p}
		if src == redislimit.Virtual {
			opts.Now = p.serverNow
		}
	}
	return redislimit.New(c, e.Runtime, e.Rules, opts)
}

// rttPath puts a Redis round trip on the virtual clock: each script call
// spends half of a drawn round trip on the way (the request leg), runs at
// that instant, the server's clock reading it, and the caller resumes after
// the other half (the reply leg). It marks the caller with the instant its
// script ran: the admission, when the script admitted.
type rttPath struct {
	sch *virtual.Sched
	rtt workload.Dist
	rng *rand.Rand
	// pending is a round trip drawn by serverNow for the script call that
	// follows it in the same step; carry is a leg already spent by an
	// EvalSha that came back NOSCRIPT, for the Eval that follows at once.
	pending, carry *leg
}

type leg struct {
	at  int64 // when the script runs at the server
	rtt time.Duration
}

// serverNow is the server's clock as the script will read it: at the end
// of the request leg of the call about to be made.
func (p *rttPath) serverNow() int64 {
	rtt := p.rtt.Draw(p.rng)
	p.pending = &leg{at: p.sch.Now() + int64(rtt/2), rtt: rtt}
	return p.pending.at
}

// request spends the request leg and returns it.
func (p *rttPath) request() leg {
	if l := p.carry; l != nil {
		p.carry = nil
		return *l
	}
	l := p.pending
	p.pending = nil
	if l == nil {
		rtt := p.rtt.Draw(p.rng)
		l = &leg{at: p.sch.Now() + int64(rtt/2), rtt: rtt}
	}
	if d := l.at - p.sch.Now(); d > 0 {
		_ = p.sch.Sleep(context.Background(), time.Duration(d)) // no deadline: cannot fail
	}
	return *l
}

// reply marks the caller with the script's instant and spends the reply
// leg.
func (p *rttPath) reply(l leg) {
	p.sch.Mark(l.at)
	if d := l.at - int64(l.rtt/2) + int64(l.rtt) - p.sch.Now(); d > 0 {
		_ = p.sch.Sleep(context.Background(), time.Duration(d))
	}
}

// rttScripter runs the admission script through an rttPath.
type rttScripter struct {
	redis.Scripter
	p *rttPath
}

func (s rttScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	l := s.p.request()
	cmd := s.Scripter.EvalSha(ctx, sha1, keys, args...)
	if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		s.p.carry = &l // go-redis sends the source at once, on the same leg
		return cmd
	}
	s.p.reply(l)
	return cmd
}

func (s rttScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	l := s.p.request()
	cmd := s.Scripter.Eval(ctx, script, keys, args...)
	s.p.reply(l)
	return cmd
}
