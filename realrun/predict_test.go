package realrun

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// edge is a scenario whose prediction depends on the margin: worker 1's
// requests take up to 20 ms to arrive and worker 0's none, so combined,
// exact on its admissions, overfills windows at the provider unless every
// window it enforces is wider by the spread.
func edge() *workload.Scenario {
	return &workload.Scenario{
		Name: "edge", Rules: []rule.Rule{{Limit: 2, Window: 50 * time.Millisecond}}, Strategies: []string{"combined"},
		Callers: 8, Workers: 2, MaxInFlight: 2, Arrivals: workload.Arrivals{Kind: workload.AllAtOnce}, Seed: 1,
		SendDelay: []workload.Dist{{}, {Kind: workload.Uniform, B: 20 * time.Millisecond}},
	}
}

// TestRepeatPredictsWithTheMargin: run --margin M once set runs of
// limiters widened by M beside a prediction for limiters without it (0
// violations measured beside a forecast of 5-11). The prediction is now
// the simulator's on the widened limiters, and the report says so.
func TestRepeatPredictsWithTheMargin(t *testing.T) {
	const margin, seeds = 30 * time.Millisecond, 40
	s := edge()
	widened := *s
	widened.Margin = margin
	want, err := Predict(simulator, &widened, seeds, nil)
	require.NoError(t, err)
	without, err := Predict(simulator, s, seeds, nil)
	require.NoError(t, err)
	require.NotEqual(t, without, want, "the margin must change this scenario's prediction for the test to mean anything")

	rep, err := Repeat(context.Background(), simulator, s, 1, seeds, 1, Options{Margin: margin}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, want, rep.Prediction, "the prediction is not the simulator's for the widened limiters")
	var text bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	assert.Contains(t, text.String(), "margin: the limiters enforce every window 30ms wider, in the prediction too")
}

// realOnly are the options of a real run that the prediction cannot take,
// each with the reason. Any other field must reach the prediction.
var realOnly = map[string]string{
	"Run":       "numbers repeats to keep their Redis keys apart; the prediction keys its runs by seed",
	"WallEpoch": "hands strategies Unix time; the virtual clock starts every run at 0, as a real run does without it",
}

// sample sets v to a value other than its zero, or fails for a type it
// does not know: a new field of Options must get a sample here, and so a
// look at whether the prediction takes it.
func sample(t *testing.T, name string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(53 * time.Millisecond))
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			t.Fatalf("Options.%s: no sample for %s", name, v.Type())
		}
		v.Set(reflect.ValueOf([]string{"combined"}))
	case reflect.Interface:
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
		t.Cleanup(func() { c.Close() })
		require.True(t, reflect.TypeOf(c).AssignableTo(v.Type()), "Options.%s: no sample for %s", name, v.Type())
		v.Set(reflect.ValueOf(c))
	default:
		t.Fatalf("Options.%s: no sample for %s", name, v.Type())
	}
}

// TestPredictionTakesEveryOption goes through Options field by field: each
// reaches the prediction, as the simulator's option of the same name or
// through the scenario both start from, unless realOnly says why it
// cannot. A new field that neither forwards nor explains fails here.
func TestPredictionTakesEveryOption(t *testing.T) {
	base := edge()
	typ := reflect.TypeFor[Options]()
	simType := reflect.TypeFor[PredictOptions]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var opt Options
		v := reflect.ValueOf(&opt).Elem().Field(i)
		sample(t, f.Name, v)
		sc, po := opt.Scenario(base), opt.Prediction()
		if why, ok := realOnly[f.Name]; ok {
			assert.Equal(t, base, sc, "Options.%s (real runs only: %s) changed the scenario", f.Name, why)
			assert.True(t, reflect.ValueOf(po).IsZero(), "Options.%s (real runs only: %s) changed the prediction's options", f.Name, why)
			continue
		}
		if sf, ok := simType.FieldByName(f.Name); ok && sf.Type == f.Type {
			assert.Equal(t, v.Interface(), reflect.ValueOf(po).FieldByName(f.Name).Interface(), "Options.%s is not forwarded to the prediction", f.Name)
			continue
		}
		assert.NotEqual(t, base, sc, "Options.%s reaches neither the prediction's options nor the scenario: forward it, or say in realOnly why it cannot", f.Name)
	}
}

// recorder is a strategy that keeps the Env of every limiter it builds.
func recorder(into *[]catalog.Env) catalog.Strategy {
	return catalog.Strategy{Name: "recorder", PerWorker: true, New: func(e catalog.Env) (strategies.Limiter, error) {
		*into = append(*into, e)
		return strategies.NewCombined(e.Runtime, e.Rules...), nil
	}}
}

// TestPredictionBuildsTheRunsLimiters: the prediction and a real run with
// the same options hand every limiter the same Env, field by field, apart
// from the driver's own: its clock (Runtime) and its run state (Shared).
func TestPredictionBuildsTheRunsLimiters(t *testing.T) {
	driver := map[string]bool{"Runtime": true, "Shared": true}
	opt := Options{Margin: 30 * time.Millisecond}
	s := edge()
	s.Callers = 2
	var sim, real []catalog.Env
	ps := opt.Scenario(s)
	_, err := simulate.RunStrategy(ps, recorder(&sim), ps.Seed, simOptions(opt.Prediction()))
	require.NoError(t, err)
	rs := opt.Scenario(s)
	times := rs.ArrivalTimes(rs.Seed)
	_, err = runStrategy(context.Background(), rs, recorder(&real), times, callDurations(rs, rs.Seed, len(times)), sendDelays(rs, rs.Seed, len(times)), callerDraws{}, opt)
	require.NoError(t, err)
	require.Len(t, real, len(sim), "limiters built")
	require.NotEmpty(t, sim, "limiters built")
	typ := reflect.TypeFor[catalog.Env]()
	for w := range sim {
		for i := range typ.NumField() {
			name := typ.Field(i).Name
			if driver[name] {
				continue
			}
			assert.Equal(t, reflect.ValueOf(sim[w]).Field(i).Interface(), reflect.ValueOf(real[w]).Field(i).Interface(), "worker %d: Env.%s", w, name)
		}
	}
	assert.Equal(t, 80*time.Millisecond, sim[0].Rules[0].Window, "the margin widens the prediction's windows")
}
