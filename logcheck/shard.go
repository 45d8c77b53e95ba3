package logcheck

import (
	"fmt"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// shardState is a Run's progress through its shard.
type shardState struct {
	report.Shard
	rules   []rule.Rule
	closed  bool
	started bool // the first send has been seen and the context checked
	pastTo  bool // a send at or after To has been seen
}

// ShardContextError reports an input that starts too late for its shard:
// the windows of its first judged sends would miss earlier sends. Either
// the input should start earlier, or, when it is the log from its first
// line, report.Shard.LogStart says so.
type ShardContextError struct {
	From, First int64
	Need        time.Duration // how far before From the input must start
	Missing     time.Duration
	// Fixed names the fixed rule whose window holding From needs the
	// context, which starts 1 ns after From-Need: an input must start
	// before the window, lest it lose sends tied at its start; "" when
	// the longest sliding window does.
	Fixed string
}

func (e *ShardContextError) Error() string {
	at := report.InstantFormatter(e.From)
	rel := fmt.Sprintf("%v before it", time.Duration(e.From-e.First))
	switch {
	case e.First == e.From:
		rel = "at it"
	case e.First > e.From:
		rel = fmt.Sprintf("%v after it", time.Duration(e.First-e.From))
	}
	needs := fmt.Sprintf("the longest window needs it to start %v before (or earlier)", e.Need)
	if e.Fixed != "" {
		needs = fmt.Sprintf("the window of %s that holds it starts at %s, and the input must start before that instant, lest it miss sends tied there", e.Fixed, at(e.From-int64(e.Need)+1))
	}
	return fmt.Sprintf("shard from %s: the input starts at %s, %s; %s: %v of context is missing. "+
		"Give the shard an input that starts earlier, or, if the input is the log from its first line (nothing before it is missing), state that the input starts the log",
		at(e.From), at(e.First), rel, needs, e.Missing)
}

// ShardHistoryError refuses a shard of a bucket or first-call rule whose
// input may not start the log: the bucket's level, or where the open
// window started, at From is a recursion over every earlier send, so no
// context short of the whole log is enough.
type ShardHistoryError struct {
	Rule string
}

func (e *ShardHistoryError) Error() string {
	return fmt.Sprintf("shard: rule %s: its state at the shard's start (a bucket's level, the start of a first-call window) depends on every earlier send of the log, "+
		"so no context of fixed length is enough. Give the shard an input that starts the log and state that it does, or check the whole log at once", e.Rule)
}

func newShardState(cfg Config) (*shardState, error) {
	if cfg.Shard == nil {
		return nil, nil
	}
	s := &shardState{Shard: *cfg.Shard, rules: cfg.Rules, closed: cfg.Boundary == rule.Closed}
	if s.HasFrom && !s.LogStart {
		for _, r := range cfg.Rules {
			if r.Kind == rule.Bucket || r.Kind == rule.FirstCall {
				return nil, &ShardHistoryError{Rule: r.String()}
			}
		}
	}
	return s, nil
}

// first checks the context before the first send, at: the input must hold
// every send in the windows of sends at From on, so it must start at
// From-W at the latest (before it, for closed windows), and, for a fixed
// rule, before the start of its window that holds From. An input that
// starts at an instant a window holds may have lost the sends tied at it,
// earlier in the log; sends at From-W lie in no half-open window of a
// judged send, but a fixed window holds its start, as a closed sliding
// window holds From-W.
func (s *shardState) first(at int64) error {
	s.started = true
	if !s.HasFrom || s.LogStart {
		return nil
	}
	var need time.Duration
	fixed := ""
	for _, r := range s.rules {
		n := r.Window
		if r.Kind == rule.Fixed {
			start, err := r.FixedStart(s.From)
			if err != nil {
				return err
			}
			n = time.Duration(s.From-start) + 1
		} else if s.closed {
			n++
		}
		if n > need {
			need, fixed = n, ""
			if r.Kind == rule.Fixed {
				fixed = r.String()
			}
		}
	}
	if missing := at - (s.From - int64(need)); missing > 0 {
		return &ShardContextError{From: s.From, First: at, Need: need, Missing: time.Duration(missing), Fixed: fixed}
	}
	return nil
}

// clip checks the context on the first run and cuts a run at To; stop
// says that no later send can be judged. A released send at or after To
// means every earlier one has been released: a later line earlier than
// it would lie beyond the reorder horizon.
func (s *shardState) clip(run held) (held, bool, error) {
	if s == nil || run.len() == 0 {
		return run, false, nil
	}
	if !s.started {
		if err := s.first(run.at[0]); err != nil {
			return held{}, true, err
		}
	}
	if !s.HasTo || run.at[run.len()-1] < s.To {
		return run, false, nil
	}
	n, _ := slices.BinarySearch(run.at, s.To)
	s.pastTo = true
	return run.sub(0, n), true, nil
}

// shardGroup keeps what one key's checker reports only for judged sends.
type shardGroup struct {
	context int64 // sends before From
	judged  int64 // sends from From on
	first   int64 // the first judged send
	viol    []int64
	firstV  []*checker.Violation
	// With an in-flight cap: whether the judged calls have begun (and the
	// in-flight report been restarted), and the calls across the bounds.
	calls   bool
	overlap report.Overlap
}

// watch makes the checker of g report its violations to the shard.
func (s *shardState) watch(cfg *checker.Config, g *groupState) {
	if s == nil {
		return
	}
	if s.HasFrom {
		cfg.ListFrom = &s.From
	}
	g.shard = &shardGroup{viol: make([]int64, len(cfg.Rules)), firstV: make([]*checker.Violation, len(cfg.Rules))}
	sg := g.shard
	cfg.OnViolation = func(r int, v checker.Violation) {
		if s.HasFrom && v.Send.At < s.From {
			return
		}
		sg.viol[r]++
		if sg.firstV[r] == nil {
			sg.firstV[r] = &v
		}
	}
}

// observed notes sends ats of g, in time order: those before From, a
// prefix, are context.
func (s *shardState) observed(g *groupState, ats []int64) {
	sg := g.shard
	if s.HasFrom && sg.judged == 0 {
		n, _ := slices.BinarySearch(ats, s.From)
		sg.context += int64(n)
		ats = ats[n:]
	}
	if len(ats) > 0 {
		if sg.judged == 0 {
			sg.first = ats[0]
		}
		sg.judged += int64(len(ats))
	}
}

// call notes a call of g, [at, end), before the in-flight checker sees
// it: a call of the context in flight at From, or a judged one in flight
// at To; the first judged call restarts the in-flight report.
func (s *shardState) call(g *groupState, at, end int64) {
	sg := g.shard
	if s.HasFrom && at < s.From {
		if end > s.From {
			sg.overlap.AtFrom++
		}
		return
	}
	if !sg.calls {
		sg.calls = true
		g.inf.Restart()
	}
	if s.HasTo && end > s.To {
		sg.overlap.AfterTo = append(sg.overlap.AfterTo, report.Call{Start: at, End: end})
	}
}

// finishShard makes the result speak of the judged sends only: their
// count, times and violations, indices counted from the first of them and
// lines shifted by LineOffset. Keys with no judged send are left out. The
// largest count in one window may come from a window that ends in the
// context, which the shard before judges too: the maximum over shards is
// the whole log's.
func (t *groupTable) finishShard() {
	s := t.shard
	if s == nil {
		return
	}
	res := t.res
	res.Shard, res.ShardPastTo = &s.Shard, s.pastTo
	line := func(ref int64) int64 {
		return int64(report.MakeRef(report.Ref(ref).File(), report.Ref(ref).Line()+s.LineOffset))
	}
	kept := res.Groups[:0]
	for _, grp := range res.Groups {
		g := t.groups[t.ids[grp.Key]]
		sg := g.shard
		res.ShardContext += sg.context
		if sg.judged == 0 {
			continue
		}
		rep := &grp.Report
		rep.Sends, rep.First = sg.judged, sg.first
		if f := grp.InFlight; f != nil {
			overlap := sg.overlap
			grp.Overlap = &overlap
			f.PeakAt.Ref = line(f.PeakAt.Ref)
			if f.First != nil {
				first := *f.First
				first.Ref = line(first.Ref)
				f.First = &first
			}
		}
		for i := range rep.Rules {
			rr := &rep.Rules[i]
			rr.Violations, rr.First = sg.viol[i], nil
			rr.MaxWindowStart.Ref = line(rr.MaxWindowStart.Ref)
			if v := sg.firstV[i]; v != nil {
				first := *v
				first.Index -= sg.context
				first.Send.Ref, first.WindowStart.Ref = line(first.Send.Ref), line(first.WindowStart.Ref)
				rr.First = &first
			}
			listed := rr.Listed[:0]
			for _, v := range rr.Listed {
				if !s.HasFrom || v.Send.At >= s.From {
					v.Index -= sg.context
					v.Send.Ref, v.WindowStart.Ref = line(v.Send.Ref), line(v.WindowStart.Ref)
					for k := range v.Window {
						v.Window[k].Ref = line(v.Window[k].Ref)
					}
					listed = append(listed, v)
				}
			}
			rr.Listed = listed
		}
		kept = append(kept, grp)
	}
	res.Groups = kept
	if !res.PerKey && len(res.Groups) == 0 {
		g := report.Group{Report: checker.Report{Boundary: res.Boundary}}
		for _, r := range res.Rules {
			g.Report.Rules = append(g.Report.Rules, checker.RuleReport{Rule: r})
		}
		res.Groups = append(res.Groups, g)
	}
	t.res = report.New(*res, res.Groups)
}
