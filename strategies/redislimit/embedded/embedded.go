// Package embedded runs an in-process Redis (miniredis, with its Lua in
// gopher-lua) for simulations and examples that need no server. It lives
// apart from redislimit so that programs using the limiter against a real
// Redis do not link either.
//
// # The script fast path
//
// miniredis builds a fresh Lua state for every EVAL and EVALSHA (seven
// libraries, cjson, the redis module, the guard on globals): about
// 150 µs a run, four times a GET, most of a simulation's time. Scripts,
// a go-redis hook that Start and internal/specimens/libs/clockredis install on
// their client, runs the scripts the server holds in one Lua state kept
// for the next run (and handed to the next server when this one closes),
// in process, without the round trip; docs/benchmarks.md has the figures. The state is set up as miniredis sets one up, and each
// run gets fresh KEYS and ARGV and the same redis.* functions; each
// redis.call goes to miniredis' own dispatcher with the connection state
// miniredis gives a script's commands, and its reply is converted as
// miniredis converts it. A run that changes the state (assigns a library
// function, a global that exists, a metatable) is the state's last: the
// next run gets a new one, so every run starts as a miniredis run does.
//
// What it guarantees:
//   - Atomicity as in miniredis: a fast run holds the server's own lock
//     from its first command to its reply, so no command of any
//     connection to the server, this client's or another's, runs in
//     between; and nothing else changes, since its commands are
//     miniredis' own handlers run as for a script.
//   - The same replies: the same values, errors and error texts as the
//     server's EVALSHA (the differential test drives the project's
//     scripts through both). A NOSCRIPT stays a NOSCRIPT: the hook serves
//     only a script the server holds (seen in an EVAL that the server ran
//     and kept, or a SCRIPT LOAD through this client); any other command
//     and any other script go to the server unchanged, and so do
//     pipelines and transactions. A SCRIPT FLUSH through this client
//     empties the hook's list; one sent over another connection does not,
//     and the hook then goes on serving scripts the server has forgotten.
//   - TIME in a script is the server's clock (miniredis' SetTime), as
//     before.
//
// How: miniredis marks the commands of a script's run so that they skip
// its lock (withTx), which the run holds. The first Install of a process
// runs one script through the server's pre-hook to get that marked
// connection state, and each fast run's commands get a copy of it. That
// leans on miniredis internals (v2.40.0): a new version must pass the
// differential tests (TestFastPathMatchesMiniredis, TestFastPathOddScripts,
// TestFastPathIsAtomic) before it is taken.
//
// What differs: a script that returns a
// function or a coroutine gets an error reply where miniredis panics; a
// run ignores the context's deadline once started (as a server does);
// after a MULTI or SELECT sent through the client by hand, the hook steps
// aside for good, since it cannot follow a connection's state.
package embedded

import (
	"context"
	"fmt"
	"net"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// Start starts an in-process miniredis and returns a client of it, with
// the script fast path installed; Close stops all three. It is the default
// store of simulations. The client's connections are in-process pipes
// (net.Pipe, served by miniredis's ServeConn): no sockets, and no read or
// write deadlines, which are made for a server across a network and which
// a heavily loaded machine missed here (load average 30 on 2 cores: a first
// ping over loopback took over a second). The server's address is not
// exposed, so the client is its only connection.
func Start() (redislimit.Conn, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("embedded Redis: %w", err)
	}
	rc := PipeClient(m)
	if err := rc.Ping(context.Background()).Err(); err != nil {
		_ = rc.Close()
		m.Close()
		return nil, fmt.Errorf("embedded Redis: %w", err)
	}
	fast, err := Install(rc, m)
	if err != nil {
		_ = rc.Close()
		m.Close()
		return nil, fmt.Errorf("embedded Redis: %w", err)
	}
	return &embedded{Conn: rc, m: m, fast: fast}, nil
}

type embedded struct {
	redislimit.Conn
	m    *miniredis.Miniredis
	fast *Scripts
}

func (s *embedded) Close() error {
	s.fast.Close()
	err := s.Conn.Close()
	s.m.Close()
	return err
}

// PipeClient returns a client of m whose connections are in-process pipes
// with no deadlines (see Start); clockredis uses it too.
func PipeClient(m *miniredis.Miniredis) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: m.Addr(), MaxRetries: -1, ReadTimeout: -2, WriteTimeout: -2,
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			c, srv := net.Pipe()
			m.Server().ServeConn(srv)
			return c, nil
		},
	})
}
