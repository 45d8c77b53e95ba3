package rlchecktest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
)

// fakeTB collects what an assertion reports instead of failing the test.
type fakeTB struct {
	errors []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

var guideRules = []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}}

func TestAssertCompliantFailsOnKnownBadLog(t *testing.T) {
	sends := fixtures.MustTimes(t, "asyncio-sequential.txt")
	var ft fakeTB
	require.False(t, rlchecktest.AssertCompliantNs(&ft, sends, guideRules...), "the sequential fixture passed; it breaks 5/1s twice")
	require.Len(t, ft.errors, 1, "failures reported (only 5/1s is broken)")
	msg := ft.errors[0]
	for _, want := range []string{"rule 5/1s broken by 2 of 30 sends", "most in one window: 7", "first offending window [+", "holds 6 sends, limit 5", "sends in it: +"} {
		assert.Contains(t, msg, want)
	}
}

func TestAssertCompliantPassesKnownGoodLog(t *testing.T) {
	sends := fixtures.MustTimes(t, "asyncio-combined.txt")
	var ft fakeTB
	assert.True(t, rlchecktest.AssertCompliantNs(&ft, sends, guideRules...), "the combined fixture failed")
	assert.Empty(t, ft.errors, "the combined fixture failed")
}

func TestAssertCompliantBoundaries(t *testing.T) {
	const s = int64(time.Second)
	two := rule.Rule{Limit: 2, Window: time.Second}
	for _, tc := range []struct {
		name  string
		sends []int64
		ok    bool
	}{
		{"empty", nil, true},
		{"exactly W apart", []int64{0, 0, s, s}, true},
		{"one ns short of W", []int64{0, 0, s - 1}, false},
		{"unsorted", []int64{s - 1, 0, 5}, false},
		{"equal instants", []int64{5, 5, 5}, false},
		{"negative instants", []int64{-s, -s, 0, 0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ft fakeTB
			got := rlchecktest.AssertCompliantNs(&ft, tc.sends, two)
			assert.Equal(t, tc.ok, got, "verdict on %v under %v", tc.sends, two)
			assert.Equal(t, tc.ok, len(ft.errors) == 0, "whether %v under %v passes without a failure reported; reported: %q", tc.sends, two, ft.errors)
		})
	}
}

func TestAssertCompliantMessage(t *testing.T) {
	const ms = int64(time.Millisecond)
	var ft fakeTB
	rlchecktest.AssertCompliantNs(&ft, []int64{1000 * ms, 1100 * ms, 1700 * ms, 2100 * ms, 2500 * ms},
		rule.Rule{Limit: 2, Window: time.Second}, rule.Rule{Limit: 10, Window: time.Minute})
	want := "rlchecktest: rule 2/1s broken by 2 of 5 sends (most in one window: 3)\n" +
		"  first offending window [+0s, +1s) holds 3 sends, limit 2; send 3 at +700ms is one too many\n" +
		"  sends in it: +0s, +100ms, +700ms\n" +
		"  (offsets from the first send at 1000000000 ns)"
	assert.Equal(t, []string{want}, ft.errors)
}

func TestAssertCompliantTimes(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sends := []time.Time{base.Add(999 * time.Millisecond), base, base.Add(500 * time.Millisecond)}
	var ft fakeTB
	require.False(t, rlchecktest.AssertCompliant(&ft, sends, rule.Rule{Limit: 2, Window: time.Second}), "three sends within one second passed 2/1s")
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "first send at 2026-01-02T03:04:05Z")
}

func TestAssertCompliantNoRules(t *testing.T) {
	var ft fakeTB
	assert.False(t, rlchecktest.AssertCompliantNs(&ft, []int64{0}), "no rules passed")
	assert.Len(t, ft.errors, 1, "no rules passed")
}
