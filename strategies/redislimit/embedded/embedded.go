// Package embedded runs an in-process Redis (miniredis, with its Lua in
// gopher-lua) for simulations and examples that need no server. It lives
// apart from redislimit so that programs using the limiter against a real
// Redis do not link either.
package embedded

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"

	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// Start starts an in-process miniredis and returns a client of it, made by
// redislimit.Dial with its deadlines; Close stops both. It is the default
// store of simulations.
func Start() (redislimit.Conn, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("embedded Redis: %w", err)
	}
	c, err := redislimit.Dial(context.Background(), "redis://"+m.Addr(), nil, 0)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("embedded Redis: %w", err)
	}
	return &server{Conn: c, m: m}, nil
}

type server struct {
	redislimit.Conn
	m *miniredis.Miniredis
}

func (s *server) Close() error {
	err := s.Conn.Close()
	s.m.Close()
	return err
}
