package adapter

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

func skipWithoutSh(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake adapter is started through /bin/sh")
	}
}

// smallScenario is 4 callers 100 ms apart under 2/1s.
func smallScenario(t *testing.T) *workload.Scenario {
	r, err := rule.Parse("2/1s")
	require.NoError(t, err)
	return &workload.Scenario{Name: "small", Rules: []rule.Rule{r}, Strategies: []string{"fake"}, Callers: 4,
		Workers: 1, Arrivals: workload.Arrivals{Kind: workload.Interval, Start: time.Second, Every: 100 * time.Millisecond}}
}

func TestProgramServesManySeedsFromFewProcesses(t *testing.T) {
	skipWithoutSh(t)
	p, err := Open(Config{Command: fakeCommand("ok"), MaxProcs: 1})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, []string{"fake"}, p.Strategies())
	s := smallScenario(t)
	for seed := uint64(1); seed <= 5; seed++ {
		run := NewRun(s, "fake", seed)
		ans, err := p.Run(run)
		require.NoError(t, err)
		assert.Equal(t, int64(seed), run.Run, "one process numbers its runs")
		for i, c := range ans.Calls {
			assert.Equal(t, Sent, c.Outcome)
			assert.Equal(t, int64(time.Second)+int64(i)*int64(100*time.Millisecond), c.SendNS)
		}
	}
	assert.Len(t, p.live, 1)
	require.NoError(t, p.Close())
}

// TestProgramRefusesLies: every spoilt answer is an *ExchangeError that
// names the output line and quotes it.
func TestProgramRefusesLies(t *testing.T) {
	skipWithoutSh(t)
	cases := map[string]string{
		"early":      `adapter "%s": output line 2 (run 1, seed 1): call 0 sends at 999999999 ns, before its arrival at 1000000000 ns (1ns early): "{\"run\":1,\"call\":0,\"send_ns\":999999999}"`,
		"twice":      `output line 4 (run 1, seed 1): call 1 answered twice (first on output line 2): "{\"run\":1,\"call\":1,\"send_ns\":1100000000}"`,
		"missing":    `output line 5 (run 1, seed 1): the run is closed with 1 of 4 calls unanswered, the first call 3: "{\"run\":1,\"done\":true}"`,
		"unknown":    `output line 2 (run 1, seed 1): unknown call 4 (the run has calls 0 to 3)`,
		"wrong-run":  `output line 2 (run 1, seed 1): answers run 99; the run under way is 1`,
		"truncate":   `output line 2 (run 1, seed 1): not a protocol line: want a JSON object (unexpected EOF): "{\"run\":1,\""`,
		"error":      `output line 2 (run 1, seed 1): the program reports an error: ZeroDivisionError: division by zero`,
		"version":    `output line 1: protocol version 2; this rlcheck speaks version 1`,
		"hang-hello": `before its first output line: timed out`,
	}
	for mode, want := range cases {
		t.Run(mode, func(t *testing.T) {
			timeout := 10 * time.Second // a slow start (-race, a busy machine) is no lie
			if mode == "hang-hello" {
				timeout = 300 * time.Millisecond
			}
			p, err := Open(Config{Command: fakeCommand(mode), Timeout: timeout})
			if err == nil {
				defer p.Close()
				_, err = p.Run(NewRun(smallScenario(t), "fake", 1))
			}
			var ee *ExchangeError
			require.True(t, errors.As(err, &ee), "%v", err)
			if mode == "early" {
				want = fmt.Sprintf(want, fakeCommand(mode))
			}
			assert.Contains(t, err.Error(), want)
		})
	}
}

// TestProgramThatHangsIsCut: a run that gets no answer ends at the timeout
// with the process killed, not later.
func TestProgramThatHangsIsCut(t *testing.T) {
	skipWithoutSh(t)
	p, err := Open(Config{Command: fakeCommand("hang"), Timeout: 2 * time.Second})
	require.NoError(t, err)
	start := time.Now()
	_, err = p.Run(NewRun(smallScenario(t), "fake", 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "after output line 1 (run 1, seed 1): no complete answer within 2s: killed it")
	assert.Less(t, time.Since(start), 10*time.Second)
	require.NoError(t, p.Close(), "the killed process is reaped")
}

func TestUnknownStrategyAndBadCommand(t *testing.T) {
	skipWithoutSh(t)
	p, err := Open(Config{Command: fakeCommand("ok")})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Run(NewRun(smallScenario(t), "other", 1))
	assert.ErrorContains(t, err, `no strategy "other" (it offers ["fake"])`)
	_, err = Open(Config{Command: "exit 3", Timeout: 10 * time.Second})
	assert.ErrorContains(t, err, `adapter "exit 3": before its first output line: the output ended (exit status 3)`)
}
