package difftest

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
)

// checkReserved judges the case per key with the checker's
// ObserveReserved, each send's ref its line, every violation listed.
func checkReserved(t *testing.T, c Case) map[string][]Verdict {
	t.Helper()
	units := c.Units()
	chks := map[string]*checker.Checker{}
	var keys []string
	for i, s := range c.Sends {
		chk := keyChecker(c, chks, &keys, s.Key)
		est := make([]int64, len(units))
		var settle *checker.Settlement
		if s.Settled != nil {
			settle = &checker.Settlement{At: *s.Settled, Actual: make([]int64, len(units))}
		}
		for k, u := range units {
			est[k] = s.Costs[u]
			if settle != nil {
				settle.Actual[k] = s.Actual[u]
			}
		}
		require.NoError(t, chk.ObserveReserved(s.At, int64(i)+2, est, settle), c.String())
	}
	return verdictsOf(chks, keys)
}

// keyChecker returns key's checker of the case's rules in chks, adding
// it, and key to keys, on first sight.
func keyChecker(c Case, chks map[string]*checker.Checker, keys *[]string, key string) *checker.Checker {
	chk := chks[key]
	if chk == nil {
		chk = checker.New(checker.Config{Rules: c.Rules, Boundary: c.Boundary, List: len(c.Sends) + 1, Units: c.Units()})
		chks[key] = chk
		*keys = append(*keys, key)
	}
	return chk
}

// verdictsOf are the checkers' verdicts, by key, as Expect gives them.
func verdictsOf(chks map[string]*checker.Checker, keys []string) map[string][]Verdict {
	out := map[string][]Verdict{}
	for _, key := range keys {
		rep := chks[key].Report()
		for _, rr := range rep.Rules {
			v := Verdict{Max: rr.MaxInWindow}
			if rr.Rule.Kind == rule.Bucket {
				v.Max = -1
			}
			for _, l := range rr.Listed {
				v.Lines = append(v.Lines, l.Send.Ref)
				if rr.Rule.Kind == rule.Bucket {
					v.Levels = append(v.Levels, l.Level)
				}
			}
			out[key] = append(out[key], v)
		}
	}
	return out
}

// TestCheckerReservedMatchesOracle: on logs of reserved sends (settled at
// their own instant, at a later send's, W on, never; actual costs 0,
// below, at and above the estimate), the checker judges every kind under
// both boundaries, and so both readings of a settlement at a send's
// instant, as the oracle does.
func TestCheckerReservedMatchesOracle(t *testing.T) {
	reservedAgree(t, 31, checkReserved)
}

// reservedAgree holds judge to the oracle on the reserved cases of every
// family, drawn with salt, under both boundaries.
func reservedAgree(t *testing.T, salt uint64, judge func(*testing.T, Case) map[string][]Verdict) {
	for _, f := range Families {
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			t.Run(f.String()+"/"+b.String(), func(t *testing.T) {
				for i, c := range drawReserved(f, testrun.Seeds(40, 1000), salt) {
					c.Boundary = b
					want, got := Expect(c), judge(t, c)
					if !assert.Equal(t, want, got, "seed %d: %s", i, c) {
						t.Log(describe(c, want, got))
						return
					}
				}
			})
		}
	}
}

// drawReserved yields the reserved cases a comparison runs for family f,
// as draws does.
func drawReserved(f Family, seeds int, salt uint64) []Case {
	out := draws(f, seeds, salt)
	for i := range out {
		Reserve(rand.New(rand.NewPCG(uint64(i), salt+100)), &out[i])
	}
	return out
}

// TestCheckReservedMatchesOracle: check reads estimates, actuals and
// settlement instants from their columns and judges every kind, under
// both boundaries, as the oracle does; with statuses, under both readings
// of refused calls (a counted refusal takes its estimate, never settled).
func TestCheckReservedMatchesOracle(t *testing.T) {
	for _, f := range Families {
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			t.Run(f.String()+"/"+b.String(), func(t *testing.T) {
				for i, c := range drawReserved(f, testrun.Seeds(10, 200), 37) {
					c.Boundary = b
					res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(c.ReservedCSV())}},
						logcheck.Config{Rules: c.Rules, Boundary: c.Boundary, List: len(c.Sends) + 1, Read: c.ReservedReadOptions()})
					require.NoError(t, err, c.String())
					want, got := Expect(c), FromResult(res)
					if !assert.Equal(t, want, got, "seed %d: %s", i, c) {
						t.Log(describe(c, want, got))
						return
					}
				}
			})
		}
	}
}

// TestCheckReservedStatusesMatchOracle: reserved sends with statuses.
func TestCheckReservedStatusesMatchOracle(t *testing.T) {
	for _, reading := range []rule.Refusals{rule.RefusedCount, rule.RefusedFree} {
		for _, f := range Families {
			t.Run(reading.Word()+"/"+f.String(), func(t *testing.T) {
				for i, c := range drawReserved(f, testrun.Seeds(6, 100), 41) {
					status := statuses(rand.New(rand.NewPCG(uint64(i), 13)), len(c.Sends))
					read := c.ReservedReadOptions()
					read.StatusCol = "status"
					res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(withStatus(c.ReservedCSV(), status))}},
						logcheck.Config{Rules: c.Rules, Boundary: c.Boundary, List: len(c.Sends) + 1, Read: read, Refusals: reading})
					require.NoError(t, err, c.String())
					want, _ := expectStatuses(c, status, reading)
					if !assert.Equal(t, want, FromResult(res), "seed %d: %s", i, c) {
						return
					}
				}
			})
		}
	}
}
