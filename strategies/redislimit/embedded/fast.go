package embedded

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Scripts is the fast path of one miniredis: a go-redis hook that runs
// EVAL, EVALSHA, EVAL_RO and EVALSHA_RO of the scripts that server holds
// in one long-lived Lua state, in process, instead of sending them over
// the connection. See the package documentation for what it guarantees.
type Scripts struct {
	m      *miniredis.Miniredis
	srv    *server.Server
	nested reflect.Value // *connCtx of a Lua run of m, see capture

	mu    sync.Mutex
	known map[string]*lua.FunctionProto // by SHA1: scripts m holds

	closed atomic.Bool
	off    atomic.Bool // a MULTI or SELECT went by: forward everything

	served atomic.Int64 // runs served in process, for tests

	st *luaState // only under m's lock
}

var _ redis.Hook = (*Scripts)(nil)

// Install adds the fast path to c, a client of m on database 0 or another,
// and returns it; Close it before closing c and m. Install must run before
// c sends anything: the first Install of a process (for each database)
// runs one script on m, through m's pre-hook, to learn how miniredis runs
// the commands of a script, then flushes m's scripts.
func Install(c *redis.Client, m *miniredis.Miniredis) (*Scripts, error) {
	s := &Scripts{m: m, srv: m.Server(), known: map[string]*lua.FunctionProto{}}
	if s.srv == nil {
		return nil, errors.New("embedded: the server is not running")
	}
	db := c.Options().DB
	if v, ok := nestedCtx.Load(db); ok {
		s.nested = v.(reflect.Value)
	} else {
		if err := s.capture(db); err != nil {
			return nil, err
		}
		nestedCtx.Store(db, s.nested)
	}
	c.AddHook(s)
	return s, nil
}

// nestedCtx keeps, by database, the connection state capture saw: it
// names no server, so one capture serves every server of the process.
var nestedCtx sync.Map

// states keeps the Lua states of closed fast paths for the next server:
// a state holds nothing of its server between runs.
var states sync.Pool

// captureMark is the argument by which capture recognises its own command.
const captureMark = "rlcheck-embedded-capture"

// capture runs a script on m that sends one command, and keeps the
// connection state m gave that command: it is marked as coming from a Lua
// run, which m's command handlers take to mean that m is locked already
// (see miniredis' withTx). A fast run holds m's lock and hands each of its
// commands a copy of that state, as m's own runs do.
func (s *Scripts) capture(db int) error {
	var got any
	s.srv.SetPreHook(func(p *server.Peer, cmd string, args ...string) bool {
		if cmd == "ECHO" && len(args) == 1 && args[0] == captureMark {
			got = p.Ctx
		}
		return false
	})
	defer s.srv.SetPreHook(nil)
	steps := [][]string{
		{"SELECT", strconv.Itoa(db)},
		{"EVAL", "return redis.call('ECHO', '" + captureMark + "')", "0"},
		{"SCRIPT", "FLUSH"},
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	p := server.NewPeer(w) // one peer: the EVAL runs on the SELECTed database
	for _, st := range steps {
		buf.Reset()
		s.srv.Dispatch(p, st)
		w.Flush()
		if _, err := server.ParseReply(bufio.NewReader(&buf)); err != nil {
			return fmt.Errorf("embedded: preparing the script fast path: %s: %w", st[0], err)
		}
	}
	v := reflect.ValueOf(got)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("embedded: preparing the script fast path: no connection state seen (%T)", got)
	}
	s.nested = v
	return nil
}

// Close turns the fast path off: every later command goes to the server
// (which answers as a closed client does), and the Lua state goes to the
// next server's fast path.
func (s *Scripts) Close() {
	if s.closed.Swap(true) {
		return
	}
	s.m.Lock()
	if st := s.st; st != nil {
		s.st, st.s = nil, nil
		states.Put(st)
	}
	s.m.Unlock()
}

// Served returns how many script runs the fast path has served.
func (s *Scripts) Served() int64 { return s.served.Load() }

// DialHook implements redis.Hook.
func (s *Scripts) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook implements redis.Hook: pipelines and transactions go
// to the server, which runs their scripts itself; the hook follows their
// SCRIPT commands, and steps aside for good after a SELECT.
func (s *Scripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			switch cmd.Name() {
			case "script":
				s.scriptCommand(cmd)
			case "select":
				s.off.Store(true)
			}
		}
		return err
	}
}

// ProcessHook implements redis.Hook: it serves a script run of a script
// the server holds, and sends every other command on.
func (s *Scripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if s.closed.Load() || s.off.Load() || ctx.Err() != nil {
			return next(ctx, cmd)
		}
		name := cmd.Name()
		switch name {
		case "eval", "evalsha", "eval_ro", "evalsha_ro":
		case "script":
			err := next(ctx, cmd)
			s.scriptCommand(cmd)
			return err
		case "multi", "select":
			// The connection's state changes in ways a hook cannot follow.
			s.off.Store(true)
			return next(ctx, cmd)
		default:
			return next(ctx, cmd)
		}
		c, ok := cmd.(*redis.Cmd)
		args, ok2 := stringArgs(cmd.Args())
		if !ok || !ok2 || len(args) < 3 {
			return next(ctx, cmd)
		}
		sha, byText := args[1], name == "eval" || name == "eval_ro"
		if byText {
			sha = sha1Hex(args[1])
		}
		s.mu.Lock()
		proto := s.known[sha]
		s.mu.Unlock()
		if proto == nil {
			err := next(ctx, cmd)
			if byText {
				s.learn(sha, args[1])
			}
			return err
		}
		nkeys, err := strconv.Atoi(args[2])
		if err != nil || nkeys < 0 || nkeys > len(args)-3 {
			return next(ctx, cmd) // the server words the error
		}
		s.m.Lock()
		if s.closed.Load() {
			s.m.Unlock()
			return next(ctx, cmd)
		}
		val, rerr := s.run(proto, sha, strings.HasSuffix(name, "_ro"), args[3:3+nkeys], args[3+nkeys:])
		s.m.Unlock()
		s.served.Add(1)
		if rerr != nil {
			c.SetErr(rerr)
			return rerr
		}
		c.SetVal(val)
		return nil
	}
}

// scriptCommand follows SCRIPT LOAD and SCRIPT FLUSH sent through the
// client.
func (s *Scripts) scriptCommand(cmd redis.Cmder) {
	args, ok := stringArgs(cmd.Args())
	if !ok || len(args) < 2 {
		return
	}
	switch strings.ToLower(args[1]) {
	case "load":
		if len(args) == 3 && cmd.Err() == nil {
			s.learn(sha1Hex(args[2]), args[2])
		}
	case "flush":
		s.mu.Lock()
		clear(s.known)
		s.mu.Unlock()
	}
}

// learn keeps the compiled script text when the server now holds it under
// sha: the fast path serves only what the server would.
func (s *Scripts) learn(sha, text string) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	s.srv.Dispatch(server.NewPeer(w), []string{"SCRIPT", "EXISTS", sha})
	w.Flush()
	r, err := server.ParseReply(bufio.NewReader(&buf))
	if a, ok := r.([]any); err != nil || !ok || len(a) != 1 || a[0] != 1 {
		return
	}
	proto, err := compile(text)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.known[sha] = proto
	s.mu.Unlock()
}

// protos caches compiled scripts by their text, for every server.
var protos sync.Map

// compile compiles as miniredis does.
func compile(text string) (*lua.FunctionProto, error) {
	if p, ok := protos.Load(text); ok {
		return p.(*lua.FunctionProto), nil
	}
	chunk, err := parse.Parse(strings.NewReader(text), "<string>")
	if err != nil {
		return nil, err
	}
	p, err := lua.Compile(chunk, "")
	if err != nil {
		return nil, err
	}
	protos.Store(text, p)
	return p, nil
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// stringArgs writes a command's arguments as go-redis sends them; ok is
// false for a kind it would marshal otherwise.
func stringArgs(in []any) ([]string, bool) {
	out := make([]string, len(in))
	for i, a := range in {
		switch v := a.(type) {
		case nil:
			out[i] = ""
		case string:
			out[i] = v
		case []byte:
			out[i] = string(v)
		case int, int8, int16, int32, int64:
			out[i] = strconv.FormatInt(reflect.ValueOf(v).Int(), 10)
		case uint, uint8, uint16, uint32, uint64:
			out[i] = strconv.FormatUint(reflect.ValueOf(v).Uint(), 10)
		case float32:
			out[i] = strconv.FormatFloat(float64(v), 'f', -1, 64)
		case float64:
			out[i] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			out[i] = "0"
			if v {
				out[i] = "1"
			}
		default:
			return nil, false
		}
	}
	return out, true
}
