package logcheck

import (
	"slices"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
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
	hold    holdLimits  // how many sends a key may hold without a checker
	// statuses counts the calls a status left unjudged, with a status.
	statuses statusTally
	ceiling  int64 // the memory ceiling in bytes; 0: none
}

// groupState is one key's state. A key's first sends are held in pend,
// without a checker, for as long as they cannot have broken any rule
// (holdLimits); a key whose windows have all passed gives its checker up
// and keeps its verdict in past. So memory follows the keys active within
// the longest window that sent more than a few calls, not every key ever
// seen (docs/benchmarks.md, memory per key).
type groupState struct {
	key   string
	kept  *keptSends       // with Config.KeepTimes
	chk   *checker.Checker // nil while the key holds its sends or has gone quiet
	pend  []int64          // held sends, each its time, ref and a cost per unit
	past  *checker.Report  // the verdict before the key last went quiet
	inf   *checker.InFlight
	idle  bool
	shard *shardGroup // with Config.Shard
}

// keptSends are a group's send times and their costs by unit, for charts.
type keptSends struct {
	times timeLog
	costs []timeLog // per unit of Read.Costs
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
	if t.shard != nil || t.hold.sends == 0 {
		t.checkerOf(g)
	}
	if t.cfg.MaxInFlight > 0 {
		g.inf = checker.NewInFlight(t.cfg.MaxInFlight)
	}
	t.ids[g.key] = id
	t.groups = append(t.groups, g)
	return id
}

// checkerConfig is the config of every key's checker.
func (t *groupTable) checkerConfig() checker.Config {
	ccfg := checker.Config{Rules: t.cfg.Rules, Boundary: t.cfg.Boundary, List: t.cfg.List}
	for _, c := range t.cfg.Read.Costs {
		ccfg.Units = append(ccfg.Units, c.Unit)
	}
	return ccfg
}

// checkerOf returns g's checker, making it on first need; the sends g held
// are handed to it first.
func (t *groupTable) checkerOf(g *groupState) *checker.Checker {
	if g.chk != nil {
		return g.chk
	}
	ccfg := t.checkerConfig()
	if g.shard == nil {
		t.shard.watch(&ccfg, g)
	}
	g.chk = checker.New(ccfg)
	if len(g.pend) > 0 {
		t.replay(g.chk, g.pend)
		g.pend = nil
	}
	return g.chk
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
// whole run goes to the checker in one call. With keys, every few thousand
// sends the keys gone quiet are released and the memory ceiling checked.
func (t *groupTable) observeRun(run held) error {
	n := run.len()
	if n == 0 {
		return nil
	}
	t.count(run.at[0], run.at[n-1], n)
	if !t.res.PerKey {
		t.observeGroup(t.groups[0], run)
		return nil
	}
	if len(t.groups) == 1 {
		t.observeGroup(t.groups[0], run)
	} else if err := t.observeByKey(run); err != nil {
		return err
	}
	before := t.seen
	t.seen += int64(n)
	if t.seen/sweepEvery != before/sweepEvery && len(t.groups) > 1 {
		t.release(run.at[n-1])
		return t.checkMemory()
	}
	return nil
}

// observeByKey regroups a run by key, a counting sort that keeps each key's
// sends in time order, and hands each key's sends to its checker at once.
// A run may hold every send of a log within the reorder horizon, so the
// memory ceiling is checked every few thousand keys.
func (t *groupTable) observeByKey(run held) error {
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
	for i, k := range touched {
		end := pos[k]
		part := held{at: at[start:end], ref: ref[start:end]}
		if withEnd {
			part.end = by.end[start:end]
		}
		start, pos[k] = end, 0
		t.observeGroup(t.groups[k], part)
		if i%sweepEvery == sweepEvery-1 {
			if err := t.checkMemory(); err != nil {
				return err
			}
		}
	}
	t.touched = touched
	return nil
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
	var cols [][]int64
	if t.costs != nil {
		cols = t.costs.takeRun(run.ref)
	}
	var status []int64
	if t.costs != nil && t.costs.status {
		status, cols = cols[len(cols)-1], cols[:len(cols)-1]
		if len(cols) == 0 {
			cols = nil
		}
	}
	var rv *reservedCols
	if t.costs != nil && t.costs.settled {
		n := t.costs.costUnits()
		rv = &reservedCols{actual: cols[n : 2*n], settled: cols[2*n]}
		cols = cols[:n]
	}
	if t.cfg.KeepTimes {
		g.keep(t.counted(run.at, cols, status))
	}
	// Times arrive sorted, so neither checker can refuse them for their
	// order; a cost the checker cannot take (a window's sum past int64) is
	// kept as the run's error.
	var err error
	switch {
	case status != nil:
		err = t.observeStatuses(t.checkerOf(g), run.at, run.ref, cols, status, rv)
	case rv != nil:
		err = observeReserved(t.checkerOf(g), run.at, run.ref, cols, rv)
	case !t.held(g, run, cols):
		err = observeRun(t.checkerOf(g), run.at, run.ref, cols)
	}
	if err != nil && t.err == nil && cols != nil {
		t.err = err
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

// keep adds sends to the times (and costs) g keeps for charts.
func (g *groupState) keep(ats []int64, cols [][]int64) {
	if g.kept == nil {
		g.kept = &keptSends{costs: make([]timeLog, len(cols))}
	}
	g.kept.times.add(ats)
	for u, col := range cols {
		g.kept.costs[u].add(col)
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
// memory follows the active keys rather than every key ever seen. Outside
// a shard, a quiet key gives its checker up and keeps only its verdict.
func (t *groupTable) release(now int64) {
	for range min(sweepBatch, len(t.groups)) {
		t.sweep = (t.sweep + 1) % len(t.groups)
		g := t.groups[t.sweep]
		if g.idle || g.chk == nil {
			continue
		}
		g.idle = g.chk.Idle(now) && (g.inf == nil || g.inf.Idle(now))
		if g.idle && t.shard == nil {
			rep := g.chk.Report()
			g.past, g.chk = joinReports(g.past, rep, t.cfg.List), nil
		}
	}
}

// verdict returns g's report: its past verdict joined to that of the sends
// since it last went quiet, held ones replayed through a checker of their
// own.
func (t *groupTable) verdict(g *groupState) checker.Report {
	chk := g.chk
	if chk == nil && len(g.pend) > 0 {
		chk = checker.New(t.checkerConfig())
		t.replay(chk, g.pend)
	}
	if chk == nil {
		if g.past != nil {
			return *g.past
		}
		return checker.New(t.checkerConfig()).Report()
	}
	rep := chk.Report()
	if g.past == nil {
		return rep
	}
	return *joinReports(g.past, rep, t.cfg.List)
}

// finish fills the result's groups, worst first, and the totals. Past
// Config.ListKeys keys (outside a shard, whose merge needs every key), the
// least bad are summed up in the result's Unlisted instead of kept.
func (t *groupTable) finish() {
	res := t.res
	keep := t.cfg.ListKeys
	if t.shard != nil || !res.PerKey {
		keep = 0
	}
	top := worstGroups{max: keep}
	for i, g := range t.groups {
		grp := report.Group{Key: g.key, Report: t.verdict(g)}
		t.statuses.explained += grp.Report.Explained
		if k := g.kept; k != nil {
			grp.Times = k.times.all()
			for u := range k.costs {
				if grp.Costs == nil {
					grp.Costs = map[string][]int64{}
				}
				grp.Costs[t.cfg.Read.Costs[u].Unit] = k.costs[u].all()
			}
		}
		if g.inf != nil {
			r := g.inf.Report()
			grp.InFlight = &r
		}
		if t.shard == nil {
			t.groups[i] = nil // its verdict is all that is left of it
		}
		if out := top.add(grp); out != nil {
			if res.Unlisted == nil {
				res.Unlisted = &report.Unlisted{}
			}
			res.Unlisted.Add(out)
		}
	}
	if t.cfg.Read.HasStatus() {
		res.Statuses = &report.Statuses{Refusals: t.cfg.Refusals, Refused: t.statuses.refused, LeftOut: t.statuses.leftOut}
		if t.cfg.Refusals == rule.RefusedCount {
			res.Statuses.Unexplained = t.statuses.refused - t.statuses.explained
		}
	}
	t.res = report.New(*res, top.groups)
}
