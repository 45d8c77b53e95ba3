// Package clockredis runs an in-process Redis (miniredis) whose clock is a
// virtual one: before every command it reads the clock, sets the server's
// time to it (what TIME and scripts see) and moves expiries forward by the
// time elapsed. Limiters that read the server's clock (redis_rate,
// throttled's Redis store, ulule's PEXPIRE windows) then run on virtual
// instants. Like redislimit/embedded, it is for simulations and tests:
// programs that use the limiters against a real Redis never link it. Its
// client has embedded's script fast path (embedded.Scripts), after the
// clock hook: a script reads the clock set for it, as before.
package clockredis

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
)

// Epoch is where virtual instant 0 lands on the server's clock: a date
// after 2017, since redis_rate measures time from 1 January 2017.
var Epoch = libs.Epoch

// Server is a miniredis and one client of it; every command the client
// sends first brings the server's clock to now().
type Server struct {
	*redis.Client
	m    *miniredis.Miniredis
	fast *embedded.Scripts

	mu   sync.Mutex
	now  func() int64
	last int64
	set  bool
}

// Start starts a server on loopback whose clock reads now, in virtual
// nanoseconds from Epoch.
func Start(now func() int64) (*Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("clockredis: %w", err)
	}
	s := &Server{m: m, now: now}
	s.sync()
	// Connections are in-process pipes: no sockets, and no deadlines, which
	// a loaded machine would miss.
	s.Client = embedded.PipeClient(m)
	s.Client.AddHook(hook{s})
	fast, err := embedded.Install(s.Client, m)
	if err != nil {
		_ = s.Client.Close()
		m.Close()
		return nil, fmt.Errorf("clockredis: %w", err)
	}
	s.fast = fast
	return s, nil
}

// sync sets the server's time to now and fast-forwards its expiries by
// the time elapsed since the last command; time never runs backwards.
func (s *Server) sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.set && now <= s.last {
		return
	}
	if s.set {
		s.m.FastForward(time.Duration(now - s.last))
	}
	s.m.SetTime(Epoch.Add(time.Duration(now)))
	s.last, s.set = now, true
}

// Close stops the client and the server.
func (s *Server) Close() error {
	s.fast.Close()
	err := s.Client.Close()
	s.m.Close()
	return err
}

type hook struct{ s *Server }

func (h hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.s.sync()
		return next(ctx, cmd)
	}
}

func (h hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.s.sync()
		return next(ctx, cmds)
	}
}
