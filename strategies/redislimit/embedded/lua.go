package embedded

import (
	"bufio"
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	luajson "github.com/alicebob/miniredis/v2/gopher-json"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"
	lua "github.com/yuin/gopher-lua"
)

// luaState is a Lua state set up as miniredis sets one up for each run
// (runLuaScript, mkLua in its cmd_scripting.go and lua.go, v2.40.0), kept
// for the next run while it stays as set up.
type luaState struct {
	l *lua.LState
	s *Scripts

	// The run in progress, read by the redis.* functions.
	sha      string
	readOnly bool
	ctx      any // this run's connection state for its commands

	buf bytes.Buffer
	wr  *bufio.Writer
	rd  *bufio.Reader

	setup   []tableState // what run checks after each run
	strMeta lua.LValue   // the metatable of strings
}

// tableState is a table of the state as set up: its entries, their
// number and its metatable.
type tableState struct {
	t          *lua.LTable
	meta       lua.LValue
	keys, vals []lua.LValue
	size       int
}

// tableSize counts the entries of t from the lengths of its three parts
// (gopher-lua keeps them unexported): a key added anywhere raises it,
// while a key removed shows as a changed value.
func tableSize(t *lua.LTable) int {
	v := reflect.ValueOf(t).Elem()
	n := 0
	for _, i := range tableParts {
		n += v.Field(i).Len()
	}
	return n
}

var tableParts = func() []int {
	ty := reflect.TypeFor[lua.LTable]()
	var out []int
	for _, name := range []string{"array", "dict", "strdict"} {
		f, ok := ty.FieldByName(name)
		if !ok {
			panic("embedded: gopher-lua's LTable has no " + name)
		}
		out = append(out, f.Index[0])
	}
	return out
}()

// newLuaState builds the state: the same libraries, in the same order, the
// same globals, and the same protection of globals as miniredis.
func (s *Scripts) newLuaState() *luaState {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	st := &luaState{l: l, s: s}
	st.wr = bufio.NewWriter(&st.buf)
	st.rd = bufio.NewReader(&st.buf)
	for _, pair := range []struct {
		n string
		f lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.CoroutineLibName, lua.OpenCoroutine},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.DebugLibName, lua.OpenDebug},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(pair.f), NRet: 0, Protect: true}, lua.LString(pair.n)); err != nil {
			panic(err) // as miniredis: the libraries always open
		}
	}
	strlib := l.GetGlobal(lua.StringLibName).(*lua.LTable)
	strlib.RawSetString("format", l.NewFunction(fastFormat(strlib.RawGetString("format").(*lua.LFunction).GFunction)))
	luajson.Preload(l)
	if err := l.CallByParam(lua.P{Fn: l.GetGlobal("require"), NRet: 1, Protect: true}, lua.LString("json")); err != nil {
		panic(err)
	}
	l.SetGlobal("cjson", l.Get(-1))
	l.Pop(1)
	l.SetGlobal("KEYS", l.NewTable())
	l.SetGlobal("ARGV", l.NewTable())
	funcs := st.redisFuncs()
	mod := l.CreateTable(0, len(funcs)+4)
	for name, fn := range funcs {
		mod.RawSetString(name, l.NewFunction(fn))
	}
	for level, name := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		mod.RawSetString(name, lua.LNumber(level))
	}
	l.SetGlobal("redis", mod)
	l.SetGlobal("server", mod)
	l.RegisterModule("os", map[string]lua.LGFunction{
		"clock": func(l *lua.LState) int { l.Push(lua.LNumber(42)); return 1 },
	})
	l.Push(l.NewFunctionFromProto(mustCompile(protectGlobals)))
	if err := l.PCall(0, lua.MultRet, nil); err != nil {
		panic(err)
	}
	l.SetTop(0)
	st.setup = snapshot(l)
	st.strMeta = l.GetMetatable(lua.LString(""))
	return st
}

// fastFormat is string.format with a shortcut for format('%d', n), which
// the project's scripts call for every time and count they write:
// gopher-lua formats it through fmt and a method of its own, which took a
// fifth of a simulation's CPU (api-contract, redis-bucketed). The text is
// the same: the number truncated to an integer, as gopher-lua's %d does.
func fastFormat(orig lua.LGFunction) lua.LGFunction {
	return func(l *lua.LState) int {
		if l.GetTop() == 2 {
			if f, ok := l.Get(1).(lua.LString); ok && f == "%d" {
				if n, ok := l.Get(2).(lua.LNumber); ok {
					l.Push(lua.LString(strconv.FormatInt(int64(n), 10)))
					return 1
				}
			}
		}
		return orig(l)
	}
}

func mustCompile(text string) *lua.FunctionProto {
	p, err := compile(text)
	if err != nil {
		panic(err)
	}
	return p
}

// protectGlobals is miniredis' own (cmd_scripting.go): a script may not
// create globals nor read undefined ones.
const protectGlobals = `
local dbg=debug
local mt = {}
setmetatable(_G, mt)
mt.__newindex = function (t, n, v)
  if dbg.getinfo(2) then
    local w = dbg.getinfo(2, "S").what
    if w ~= "C" then
      error("Script attempted to create global variable '"..tostring(n).."'", 2)
    end
  end
  rawset(t, n, v)
end
mt.__index = function (t, n)
  if dbg.getinfo(2) and dbg.getinfo(2, "S").what ~= "C" then
    error("Script attempted to access nonexistent global variable '"..tostring(n).."'", 2)
  end
  return rawget(t, n)
end
debug = nil

`

// snapshot records every table reachable from the globals (the libraries,
// package.loaded, redis, the metatable of _G and of strings), but not
// KEYS and ARGV, which each run replaces.
func snapshot(l *lua.LState) []tableState {
	var out []tableState
	seen := map[*lua.LTable]bool{}
	var walk func(t *lua.LTable)
	walk = func(t *lua.LTable) {
		if seen[t] {
			return
		}
		seen[t] = true
		ts := tableState{t: t, meta: t.Metatable, size: tableSize(t)}
		var next []*lua.LTable
		t.ForEach(func(k, v lua.LValue) {
			if t == l.G.Global && (k == lua.LString("KEYS") || k == lua.LString("ARGV")) {
				return
			}
			ts.keys, ts.vals = append(ts.keys, k), append(ts.vals, v)
			if sub, ok := v.(*lua.LTable); ok {
				next = append(next, sub)
			}
		})
		out = append(out, ts)
		if m, ok := t.Metatable.(*lua.LTable); ok {
			next = append(next, m)
		}
		for _, sub := range next {
			walk(sub)
		}
	}
	walk(l.G.Global)
	if m, ok := l.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		walk(m)
	}
	return out
}

// intact says whether every table recorded at setup still holds what it
// held then. A script that changed one (string.format = nil, redis =
// {}, ...) leaves a state unlike miniredis' fresh one, which is then
// dropped.
func (st *luaState) intact() bool {
	for _, ts := range st.setup {
		if ts.t.Metatable != ts.meta || tableSize(ts.t) != ts.size {
			return false
		}
		for i, k := range ts.keys {
			if ts.t.RawGet(k) != ts.vals[i] {
				return false
			}
		}
	}
	return st.l.GetMetatable(lua.LString("")) == st.strMeta
}

// run runs a script under m's lock: the reply as go-redis would return it,
// or the error reply.
func (s *Scripts) run(proto *lua.FunctionProto, sha string, readOnly bool, keys, argv []string) (any, error) {
	if s.st == nil {
		if st, ok := states.Get().(*luaState); ok {
			st.s, s.st = s, st
		} else {
			s.st = s.newLuaState()
		}
	}
	st := s.st
	l := st.l
	kt := l.CreateTable(len(keys), 0)
	for i, k := range keys {
		l.RawSet(kt, lua.LNumber(i+1), lua.LString(k))
	}
	at := l.CreateTable(len(argv), 0)
	for i, a := range argv {
		l.RawSet(at, lua.LNumber(i+1), lua.LString(a))
	}
	l.G.Global.RawSetString("KEYS", kt)
	l.G.Global.RawSetString("ARGV", at)
	// Like miniredis' per-run context: a copy, so that a SELECT in one
	// run does not carry into the next.
	c := reflect.New(s.nested.Elem().Type())
	c.Elem().Set(s.nested.Elem())
	st.sha, st.readOnly, st.ctx = sha, readOnly, c.Interface()

	l.SetTop(0)
	l.Push(l.NewFunctionFromProto(proto))
	var (
		val any
		err error
	)
	if perr := l.PCall(0, lua.MultRet, nil); perr != nil {
		err = newReplyError(sprintf("ERR Error compiling script (new function): " + perr.Error()))
	} else {
		val, err = toReply(l, l.Get(1))
	}
	l.SetTop(0)
	if !st.intact() {
		l.Close()
		s.st = nil
	}
	return val, err
}

// sprintf formats text as miniredis does (fmt.Errorf with the text as the
// format): a '%' in it comes out as fmt prints a verb without argument.
func sprintf(format string) string {
	var none []any
	return fmt.Sprintf(format, none...)
}

// replyType is the type go-redis gives an error reply (its internal
// proto.RedisError, a string), learnt from one of its exported values.
var replyType = reflect.TypeOf(redis.ErrCrossSlot)

// replyError is an error reply, as go-redis returns one.
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError marks the error as a reply of the server.
func (replyError) RedisError() {}

// newReplyError is the error reply miniredis writes for text, of go-redis'
// own type when it is still a string.
func newReplyError(text string) error {
	text = inline(text)
	if replyType.Kind() == reflect.String {
		if err, ok := reflect.ValueOf(text).Convert(replyType).Interface().(error); ok {
			return err
		}
	}
	return replyError(text)
}

// inline is what miniredis makes of an error or status text to put it on
// one line (server.toInline): every space character becomes ' '.
func inline(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, s)
}

// toReply converts what a script returned as miniredis' luaToRedis writes
// it and go-redis reads that back: nil and false are redis.Nil, true 1,
// numbers truncated to integers, a table with err an error reply, one
// with ok a status, other tables arrays up to their first nil.
func toReply(l *lua.LState, v lua.LValue) (any, error) {
	if v == nil {
		return nil, redis.Nil
	}
	switch t := v.(type) {
	case *lua.LNilType:
		return nil, redis.Nil
	case lua.LBool:
		if lua.LVAsBool(v) {
			return int64(1), nil
		}
		return nil, redis.Nil
	case lua.LNumber:
		return int64(int(lua.LVAsNumber(v))), nil
	case lua.LString:
		return lua.LVAsString(v), nil
	case *lua.LTable:
		if e := t.RawGetString("err"); e.Type() != lua.LTNil {
			return nil, newReplyError(e.String())
		}
		if ok := t.RawGetString("ok"); ok.Type() != lua.LTNil {
			return inline(ok.String()), nil
		}
		out := []any{}
		for j := 1; ; j++ {
			e := l.GetTable(v, lua.LNumber(j))
			if e == nil {
				out = append(out, nil)
				continue
			}
			if e.Type() == lua.LTNil {
				break
			}
			r, err := toReply(l, e)
			switch {
			case err == redis.Nil:
				out = append(out, nil)
			case err != nil:
				out = append(out, err)
			default:
				out = append(out, r)
			}
		}
		return out, nil
	default:
		// miniredis panics here; a reply of an error is kinder.
		return nil, replyError(fmt.Sprintf("ERR rlcheck embedded: a script returned a %s", v.Type()))
	}
}

// the redis.* functions of a run, as mkLua makes them.
func (st *luaState) redisFuncs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"call":  st.call(true),
		"pcall": st.call(false),
		"error_reply": func(l *lua.LState) int {
			msg, ok := l.Get(1).(lua.LString)
			if !ok {
				l.Error(lua.LString("wrong number or type of arguments"), 1)
				return 0
			}
			res := &lua.LTable{}
			parts := strings.SplitN(msg.String(), " ", 2)
			if parts[0] != "" && parts[0][0] == '-' {
				parts[0] = parts[0][1:]
			}
			final := "ERR " + parts[0]
			if len(parts) == 2 {
				final = parts[0] + " " + parts[1]
			}
			res.RawSetString("err", lua.LString(final))
			l.Push(res)
			return 1
		},
		"log": func(l *lua.LState) int {
			l.CheckInt(1)
			l.CheckString(2)
			return 0
		},
		"status_reply": func(l *lua.LState) int {
			msg, ok := l.Get(1).(lua.LString)
			if !ok {
				l.Error(lua.LString("wrong number or type of arguments"), 1)
				return 0
			}
			l.Push(statusReply(string(msg)))
			return 1
		},
		"sha1hex": func(l *lua.LState) int {
			if l.GetTop() != 1 {
				l.Error(lua.LString("wrong number of arguments"), 1)
				return 0
			}
			l.Push(lua.LString(sha1Hex(lua.LVAsString(l.Get(1)))))
			return 1
		},
		"replicate_commands": func(l *lua.LState) int {
			l.Push(lua.LTrue)
			return 1
		},
		"set_repl": func(l *lua.LState) int {
			if l.GetTop() != 1 {
				l.Error(lua.LString("wrong number of arguments"), 1)
				return 0
			}
			return 1
		},
		"setresp": func(l *lua.LState) int {
			// miniredis switches the protocol of the caller's connection
			// and restores it when the run ends: nothing a run sees.
			switch l.CheckInt(1) {
			case 2, 3:
			default:
				l.Error(lua.LString("RESP version must be 2 or 3"), 1)
			}
			return 0
		},
	}
}

func statusReply(msg string) *lua.LTable {
	t := &lua.LTable{}
	t.RawSetString("ok", lua.LString(msg))
	return t
}

// call is redis.call (failFast) or redis.pcall: the command goes to the
// server's dispatcher, with the run's connection state, as in miniredis.
func (st *luaState) call(failFast bool) lua.LGFunction {
	return func(l *lua.LState) int {
		top := l.GetTop()
		if top == 0 {
			l.Error(lua.LString(fmt.Sprintf("Please specify at least one argument for this redis lib call script: %s, &c.", st.sha)), 1)
			return 0
		}
		args := make([]string, 0, top)
		for i := 1; i <= top; i++ {
			switch a := l.Get(i).(type) {
			case lua.LNumber:
				args = append(args, a.String())
			case lua.LString:
				args = append(args, string(a))
			default:
				l.Error(lua.LString(fmt.Sprintf("Lua redis lib command arguments must be strings or integers script: %s, &c.", st.sha)), 1)
				return 0
			}
		}
		srv := st.s.srv
		if st.readOnly && srv.IsRegisteredCommand(args[0]) && !srv.IsReadOnlyCommand(args[0]) {
			if failFast {
				l.Error(lua.LString("Write commands are not allowed in read-only scripts"), 1)
				return 0
			}
			res := &lua.LTable{}
			res.RawSetString("err", lua.LString("Write commands are not allowed in read-only scripts"))
			l.Push(res)
			return 1
		}
		st.buf.Reset()
		st.wr.Reset(&st.buf)
		peer := server.NewPeer(st.wr)
		peer.Ctx = st.ctx
		srv.Dispatch(peer, args)
		st.wr.Flush()
		st.rd.Reset(&st.buf)
		res, err := server.ParseReply(st.rd)
		if err != nil {
			unknown := strings.Contains(err.Error(), "ERR unknown command")
			if failFast {
				if unknown {
					l.Error(lua.LString(fmt.Sprintf("Unknown Redis command called from script script: %s, &c.", st.sha)), 1)
				} else {
					l.Error(lua.LString(err.Error()), 1)
				}
				return 0
			}
			res := &lua.LTable{}
			if unknown {
				res.RawSetString("err", lua.LString("ERR Unknown Redis command called from script"))
			} else {
				res.RawSetString("err", lua.LString(err.Error()))
			}
			l.Push(res)
			return 1
		}
		if res == nil {
			l.Push(lua.LFalse)
			return 1
		}
		switch r := res.(type) {
		case int64:
			l.Push(lua.LNumber(r))
		case int:
			l.Push(lua.LNumber(r))
		case []uint8:
			l.Push(lua.LString(string(r)))
		case []any:
			l.Push(redisToLua(l, r))
		case server.Simple:
			l.Push(statusReply(string(r)))
		case string:
			l.Push(lua.LString(r))
		case error:
			l.Error(lua.LString(r.Error()), 1)
			return 0
		default:
			l.Error(lua.LString(fmt.Sprintf("rlcheck embedded: reply of type %T", r)), 1)
			return 0
		}
		return 1
	}
}

// redisToLua is miniredis' conversion of an array reply.
func redisToLua(l *lua.LState, res []any) *lua.LTable {
	t := l.NewTable()
	for _, e := range res {
		var v lua.LValue
		switch et := e.(type) {
		case nil:
			v = lua.LFalse
		case int:
			v = lua.LNumber(et)
		case int64:
			v = lua.LNumber(et)
		case []uint8:
			v = lua.LString(string(et))
		case []any:
			v = redisToLua(l, et)
		case string:
			v = lua.LString(et)
		default:
			v = lua.LString(fmt.Sprint(e))
		}
		l.RawSet(t, lua.LNumber(t.Len()+1), v)
	}
	return t
}
