package logcheck

import (
	"slices"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/sendlog"
)

// groupTable holds one checker (and in-flight checker) per key.
type groupTable struct {
	cfg    Config
	res    *report.Result
	ids    map[string]int32
	groups []*groupState
	seen   int64
	sweep  int // next group to try to release

	local []int32 // keyIDs: a batch's distinct keys' group ids
	// byKey: a released run regrouped by key, each key's sends together
	// in time order, and the keys the run touched.
	byKey   held
	touched []int32
	pos     []int32     // per group, during observeByKey
	shard   *shardState // with Config.Shard
	costs   *costTable  // with costs
	err     error       // the first send a checker refused (costs only)
}

type groupState struct {
	key   string
	times timeLog   // with Config.KeepTimes
	costs []timeLog // per unit of Read.Costs, with Config.KeepTimes
	chk   *checker.Checker
	inf   *checker.InFlight
	idle  bool
	shard *shardGroup // with Config.Shard
}

// keyIDs appends the group id of each send of a batch to dst. Each of the
// batch's distinct keys is looked up once.
func (t *groupTable) keyIDs(b *sendlog.Batch, dst []int32) []int32 {
	local := t.local[:0]
	for j := range b.NumKeys() {
		local = append(local, t.lookup(b.DistinctKey(j)))
	}
	t.local = local
	for _, k := range b.KeyIndexes() {
		dst = append(dst, local[k])
	}
	return dst
}

// lookup returns the id of key, adding it on first sight.
func (t *groupTable) lookup(key []byte) int32 {
	if id, ok := t.ids[string(key)]; ok {
		return id
	}
	id := int32(len(t.groups))
	g := &groupState{key: string(key)}
	ccfg := checker.Config{Rules: t.cfg.Rules, Boundary: t.cfg.Boundary, List: t.cfg.List}
	for _, c := range t.cfg.Read.Costs {
		ccfg.Units = append(ccfg.Units, c.Unit)
	}
	t.shard.watch(&ccfg, g)
	g.chk = checker.New(ccfg)
	if t.cfg.MaxInFlight > 0 {
		g.inf = checker.NewInFlight(t.cfg.MaxInFlight)
	}
	t.ids[g.key] = id
	t.groups = append(t.groups, g)
	return id
}

// sweepEvery and sweepBatch pace the release of idle keys' memory.
const (
	sweepEvery = 4096
	sweepBatch = sweepEvery // one check per send, amortized
)

// count notes sends in time order for the result's totals.
func (t *groupTable) count(first, last int64, n int) {
	if t.res.Sends == 0 {
		t.res.First = first
	}
	t.res.Sends += int64(n)
	t.res.Last = last
}

// observeRun takes a released run of sends in time order. Without keys the
// whole run goes to the checker in one call.
func (t *groupTable) observeRun(run held) {
	n := run.len()
	if n == 0 {
		return
	}
	t.count(run.at[0], run.at[n-1], n)
	if !t.res.PerKey {
		t.observeGroup(t.groups[0], run)
		return
	}
	if len(t.groups) == 1 {
		t.observeGroup(t.groups[0], run)
	} else {
		t.observeByKey(run)
	}
	before := t.seen
	t.seen += int64(n)
	if t.seen/sweepEvery != before/sweepEvery && len(t.groups) > 1 {
		t.release(run.at[n-1])
	}
}

// observeByKey regroups a run by key, a counting sort that keeps each key's
// sends in time order, and hands each key's sends to its checker at once.
func (t *groupTable) observeByKey(run held) {
	n := run.len()
	if len(t.pos) < len(t.groups) {
		t.pos = append(t.pos, make([]int32, len(t.groups)-len(t.pos))...)
	}
	pos := t.pos // per group: its sends in the run, then where the next goes
	touched := t.touched[:0]
	for _, k := range run.key {
		if pos[k] == 0 {
			touched = append(touched, k)
		}
		pos[k]++
	}
	off := int32(0)
	for _, k := range touched {
		pos[k], off = off, off+pos[k]
	}
	by := &t.byKey
	by.at, by.ref = grow(by.at, n), grow(by.ref, n)
	withEnd := run.end != nil
	if withEnd {
		by.end = grow(by.end, n)
	}
	at, ref := by.at[:n], by.ref[:n]
	for i, k := range run.key {
		j := pos[k]
		pos[k]++
		at[j], ref[j] = run.at[i], run.ref[i]
		if withEnd {
			by.end[j] = run.end[i]
		}
	}
	start := int32(0)
	for _, k := range touched {
		end := pos[k]
		part := held{at: at[start:end], ref: ref[start:end]}
		if withEnd {
			part.end = by.end[start:end]
		}
		start, pos[k] = end, 0
		t.observeGroup(t.groups[k], part)
	}
	t.touched = touched
}

// grow returns s resliced to length n, reallocated if it is too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, max(n, 2*cap(s)))
	}
	return s[:n]
}

// observeGroup hands one group's sends, in time order, to its checkers.
func (t *groupTable) observeGroup(g *groupState, run held) {
	g.idle = false
	if t.cfg.KeepTimes {
		g.times.add(run.at)
	}
	// Times arrive sorted, so neither checker can refuse them for their
	// order; a cost the checker cannot take (a window's sum past int64) is
	// kept as the run's error.
	if t.costs != nil {
		t.observeCosts(g, run)
	} else {
		_ = g.chk.ObserveBatch(run.at, run.ref)
	}
	if t.shard != nil {
		t.shard.observed(g, run.at)
	}
	if g.inf != nil {
		for i := range run.at {
			if t.shard != nil {
				t.shard.call(g, run.at[i], run.end[i])
			}
			_ = g.inf.Observe(run.at[i], run.end[i], run.ref[i])
		}
	}
}

// observeCosts hands a group's sends to its checker with their costs.
func (t *groupTable) observeCosts(g *groupState, run held) {
	cols := t.costs.takeRun(run.ref)
	if t.cfg.KeepTimes {
		if g.costs == nil {
			g.costs = make([]timeLog, len(cols))
		}
		for u, col := range cols {
			g.costs[u].add(col)
		}
	}
	err := g.chk.ObserveCostBatch(run.at, run.ref, cols)
	if err != nil && t.err == nil {
		t.err = err
	}
}

// timeLog keeps a group's send times (or costs) in blocks, each twice as long as the
// one before up to timeBlock, joined once at the end: nothing is copied as
// the log grows, as it would be in one slice grown to ten million times.
type timeLog struct {
	full [][]int64
	cur  []int64
}

// timeBlock is the longest block (8 MB); the first holds 1024 times.
const timeBlock = 1 << 20

func (l *timeLog) add(ts []int64) {
	for len(ts) > 0 {
		if len(l.cur) == cap(l.cur) {
			if l.cur != nil {
				l.full = append(l.full, l.cur)
			}
			l.cur = make([]int64, 0, min(max(2*cap(l.cur), 1024), timeBlock))
		}
		n := min(len(ts), cap(l.cur)-len(l.cur))
		l.cur = append(l.cur, ts[:n]...)
		ts = ts[n:]
	}
}

// all returns the times kept, in one slice, and empties l.
func (l *timeLog) all() []int64 {
	out := l.cur
	if len(l.full) > 0 {
		out = slices.Concat(append(l.full, l.cur)...)
	}
	*l = timeLog{}
	return out
}

// release frees the window memory of a few keys that have gone quiet, so
// memory follows the active keys rather than every key ever seen.
func (t *groupTable) release(now int64) {
	for range min(sweepBatch, len(t.groups)) {
		t.sweep = (t.sweep + 1) % len(t.groups)
		g := t.groups[t.sweep]
		if g.idle {
			continue
		}
		g.idle = g.chk.Idle(now) && (g.inf == nil || g.inf.Idle(now))
	}
}

// finish fills the result's groups, worst first, and the totals.
func (t *groupTable) finish() {
	res := t.res
	for _, g := range t.groups {
		grp := report.Group{Key: g.key, Report: g.chk.Report(), Times: g.times.all()}
		for u := range g.costs {
			if grp.Costs == nil {
				grp.Costs = map[string][]int64{}
			}
			grp.Costs[t.cfg.Read.Costs[u].Unit] = g.costs[u].all()
		}
		if g.inf != nil {
			r := g.inf.Report()
			grp.InFlight = &r
		}
		res.Groups = append(res.Groups, grp)
	}
	t.res = report.New(*res, res.Groups)
}
