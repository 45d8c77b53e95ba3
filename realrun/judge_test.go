package realrun

import (
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

func TestJudgeShortfall(t *testing.T) {
	const ms = int64(time.Millisecond)
	rules := []rule.Rule{{Limit: 2, Window: 100 * time.Millisecond}, {Limit: 10, Window: time.Second}}
	// The third send is 3 ms early against the first, the fifth 1 ms early
	// against the third: the worst shortfall is 3 ms.
	sends := []int64{0, 10 * ms, 97 * ms, 150 * ms, 196 * ms}
	got, first, last, err := judge(sends, rules, rule.HalfOpen)
	if err != nil {
		t.Fatal(err)
	}
	if first != 0 || last != 196*ms {
		t.Errorf("first %d, last %d", first, last)
	}
	if got[0].Violations != 2 || got[0].Shortfall != 3*time.Millisecond || got[0].MaxInWindow != 3 {
		t.Errorf("rule 0: %+v", got[0])
	}
	if got[1].Violations != 0 || got[1].Shortfall != 0 || got[1].Rule != rules[1] {
		t.Errorf("rule 1: %+v", got[1])
	}
	// Exactly W apart is no violation under the half-open contract, and a
	// violation under the closed one, short by nothing.
	even := []int64{0, 0, 100 * ms}
	if got, _, _, _ := judge(even, rules[:1], rule.HalfOpen); got[0].Violations != 0 {
		t.Errorf("half-open: %+v", got[0])
	}
	if got, _, _, _ := judge(even, rules[:1], rule.Closed); got[0].Violations != 1 || got[0].Shortfall != 0 {
		t.Errorf("closed: %+v", got[0])
	}
	if got, first, last, err := judge(nil, rules, rule.HalfOpen); err != nil || first != 0 || last != 0 || len(got) != 2 {
		t.Errorf("no sends: %v %d %d %v", got, first, last, err)
	}
}
