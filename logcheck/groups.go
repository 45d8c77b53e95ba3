package logcheck

import (
	"slices"
	"strings"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/sendlog"
)

// groupTable holds one checker (and in-flight checker) per key.
type groupTable struct {
	cfg    Config
	res    *Result
	ids    map[string]int32
	groups []*groupState
	seen   int64
	sweep  int         // next group to try to release
	shard  *shardState // with Config.Shard
}

type groupState struct {
	key   string
	times []int64 // with Config.KeepTimes
	chk   *checker.Checker
	inf   *checker.InFlight
	idle  bool
	shard *shardGroup // with Config.Shard
}

// keyOf returns the group id of send i of a batch.
func (t *groupTable) keyOf(b *sendlog.Batch, i int) int32 { return t.lookup(b.Key(i)) }

// lookup returns the id of key, adding it on first sight.
func (t *groupTable) lookup(key []byte) int32 {
	if id, ok := t.ids[string(key)]; ok {
		return id
	}
	id := int32(len(t.groups))
	g := &groupState{key: string(key)}
	ccfg := checker.Config{Rules: t.cfg.Rules, Boundary: t.cfg.Boundary, List: t.cfg.List}
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
	if t.res.PerKey {
		for i := range n {
			t.observe(run.item(i))
		}
		return
	}
	t.count(run.at[0], run.at[n-1], n)
	g := t.groups[0]
	if t.cfg.KeepTimes {
		g.times = append(g.times, run.at...)
	}
	// Times arrive sorted, so neither checker can refuse them.
	_ = g.chk.ObserveBatch(run.at, run.ref)
	if t.shard != nil {
		t.shard.observed(g, run.at)
	}
	if g.inf != nil {
		for i := range n {
			_ = g.inf.Observe(run.at[i], run.end[i], run.ref[i])
		}
	}
}

func (t *groupTable) observe(it item) {
	t.count(it.at, it.at, 1)
	g := t.groups[it.key]
	g.idle = false
	if t.cfg.KeepTimes {
		g.times = append(g.times, it.at)
	}
	// Times arrive sorted, so neither checker can refuse them.
	_ = g.chk.Observe(it.at, int64(it.ref))
	if t.shard != nil {
		ats := [1]int64{it.at}
		t.shard.observed(g, ats[:])
	}
	if g.inf != nil {
		_ = g.inf.Observe(it.at, it.end, int64(it.ref))
	}
	t.seen++
	if t.seen%sweepEvery == 0 && len(t.groups) > 1 {
		t.release(it.at)
	}
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
		grp := Group{Key: g.key, Report: g.chk.Report(), Times: g.times}
		if g.inf != nil {
			r := g.inf.Report()
			grp.InFlight = &r
		}
		res.Groups = append(res.Groups, grp)
	}
	slices.SortStableFunc(res.Groups, func(a, b Group) int {
		if va, vb := a.Violations(), b.Violations(); va != vb {
			if va > vb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	for i, r := range t.cfg.Rules {
		tot := RuleTotal{Rule: r}
		for _, g := range res.Groups {
			if v := g.Report.Rules[i].Violations; v > 0 {
				tot.Violations += v
				tot.Groups++
			}
		}
		res.Totals = append(res.Totals, tot)
	}
	if t.cfg.MaxInFlight > 0 {
		sum := checker.InFlightReport{Max: t.cfg.MaxInFlight}
		for _, g := range res.Groups {
			f := g.InFlight
			sum.Violations += f.Violations
			if f.Peak > sum.Peak {
				sum.Peak, sum.PeakAt = f.Peak, f.PeakAt
			}
			if f.First != nil && (sum.First == nil || f.First.At < sum.First.At) {
				first := *f.First
				sum.First = &first
			}
		}
		res.InFlight = &sum
	}
}
