package difftest

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// awaiting is a send taken by ObservePending, its settlement still to
// give.
type awaiting struct {
	p      *checker.Pending
	at     int64
	actual []int64
}

// checkPending judges the case per key as a server does: each send with
// ObservePending at its instant, each settlement given with Settle only
// once every send it must not count for has been taken.
func checkPending(t *testing.T, c Case) map[string][]Verdict {
	t.Helper()
	units := c.Units()
	chks := map[string]*checker.Checker{}
	waiting := map[string][]awaiting{}
	var keys []string
	settle := func(key string, due func(u int64) bool) {
		w := waiting[key]
		slices.SortStableFunc(w, func(a, b awaiting) int { return cmp.Compare(a.at, b.at) })
		k := 0
		for _, a := range w {
			if !due(a.at) {
				w[k] = a
				k++
				continue
			}
			require.NoError(t, chks[key].Settle(a.p, checker.Settlement{At: a.at, Actual: a.actual}), c.String())
		}
		waiting[key] = w[:k]
	}
	for i, s := range c.Sends {
		chk := keyChecker(c, chks, &keys, s.Key)
		settle(s.Key, func(u int64) bool { return u < s.At || u == s.At && c.Boundary != rule.Closed })
		est := make([]int64, len(units))
		for k, u := range units {
			est[k] = s.Costs[u]
		}
		p, err := chk.ObservePending(s.At, int64(i)+2, est)
		require.NoError(t, err, c.String())
		if s.Settled != nil {
			a := awaiting{p: p, at: *s.Settled, actual: make([]int64, len(units))}
			for k, u := range units {
				a.actual[k] = s.Actual[u]
			}
			waiting[s.Key] = append(waiting[s.Key], a)
		}
	}
	for _, key := range keys {
		settle(key, func(int64) bool { return true })
	}
	return verdictsOf(chks, keys)
}

// TestCheckerPendingMatchesOracle: settlements given after later sends
// (ObservePending, then Settle as a server learns each answer's usage)
// judge every kind under both boundaries as the oracle does.
func TestCheckerPendingMatchesOracle(t *testing.T) {
	reservedAgree(t, 37, checkPending)
}

// TestCheckerSettleRefusesTooLate: a settlement that a send taken after
// it should have counted is refused, as is a second one; under the closed
// boundary a settlement at a later send's instant is taken.
func TestCheckerSettleRefusesTooLate(t *testing.T) {
	for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
		chk := checker.New(checker.Config{Rules: []rule.Rule{{Limit: 10, Window: 100, Unit: "tokens"}}, Boundary: b, Units: []string{"tokens"}})
		p, err := chk.ObservePending(0, 1, []int64{5})
		require.NoError(t, err)
		_, err = chk.ObservePending(50, 2, []int64{5})
		require.NoError(t, err)
		require.Error(t, chk.Settle(p, checker.Settlement{At: 40, Actual: []int64{1}}), "%s: before the later send", b)
		err = chk.Settle(p, checker.Settlement{At: 50, Actual: []int64{1}})
		if b == rule.Closed {
			require.NoError(t, err, "closed: at the later send's instant")
		} else {
			require.Error(t, err, "half-open: at the later send's instant")
			require.NoError(t, chk.Settle(p, checker.Settlement{At: 51, Actual: []int64{1}}))
		}
		require.Error(t, chk.Settle(p, checker.Settlement{At: 60, Actual: []int64{1}}), "%s: settled twice", b)
		_, err = chk.ObservePending(60, 3, []int64{4})
		require.NoError(t, err)
		rep := chk.Report()
		assert.Zero(t, rep.Violations(), "%s: 1+5+4 fits 10 once the first is settled", b)
	}
}
