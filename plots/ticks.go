package plots

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"

	"github.com/rlcheck/rlcheck/rule"
)

// timeAxis turns send instants into axis values: units since the first send,
// in a unit that suits the span so tick labels stay short.
type timeAxis struct {
	origin int64
	unit   time.Duration
	name   string
}

func newTimeAxis(origin, span int64) timeAxis {
	return timeAxisOf(origin, uint64(max(span, 0)))
}

// timeAxisOf takes the span unsigned: sends from the earliest int64 instant
// to the latest span more than an int64 holds.
func timeAxisOf(origin int64, span uint64) timeAxis {
	switch {
	case span <= uint64(2*time.Minute):
		return timeAxis{origin, time.Second, "seconds"}
	case span <= uint64(2*time.Hour):
		return timeAxis{origin, time.Minute, "minutes"}
	case span <= uint64(72*time.Hour):
		return timeAxis{origin, time.Hour, "hours"}
	}
	return timeAxis{origin, 24 * time.Hour, "days"}
}

// x converts an instant to an axis value; floats appear only here, at the
// edge. The difference is taken unsigned, so no span overflows it.
func (a timeAxis) x(t int64) float64 {
	if t >= a.origin {
		return float64(uint64(t-a.origin)) / float64(a.unit)
	}
	return -float64(uint64(a.origin-t)) / float64(a.unit)
}

// at converts an axis value back to an instant, clamped to the int64 range.
func (a timeAxis) at(v float64) int64 {
	return addClamped(a.origin, v*float64(a.unit))
}

// addClamped returns a+f rounded down, clamped to the int64 range; NaN
// adds nothing.
func addClamped(a int64, f float64) int64 {
	switch {
	case f != f:
		return a
	case math.Abs(f) < 1<<62:
		d := int64(math.Floor(f))
		if s := a + d; (d > 0 && s < a) || (d < 0 && s > a) {
			if d > 0 {
				return math.MaxInt64
			}
			return math.MinInt64
		}
		return a + d
	}
	// Beyond 2^62 ns (146 years) the nanoseconds no longer matter.
	r := float64(a) + f
	switch {
	case r >= math.MaxInt64:
		return math.MaxInt64
	case r <= math.MinInt64:
		return math.MinInt64
	}
	return int64(r)
}

func (a timeAxis) label() string {
	return a.name + " since the first send"
}

// wallTicks labels an axis of timeAxis values with the time of day, placing
// ticks on round wall-clock instants rather than round offsets.
type wallTicks struct {
	axis timeAxis
	loc  *time.Location
}

const day = 24 * time.Hour

var wallSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	day, 2 * day, 7 * day, 14 * day, 28 * day, 91 * day, 182 * day,
	365 * day, 2 * 365 * day, 5 * 365 * day, 10 * 365 * day, 20 * 365 * day, 50 * 365 * day,
	100 * 365 * day, 200 * 365 * day, // the int64 range spans 584 years
}

// maxTicks bounds the ticks of any axis, whatever range it is asked for.
const maxTicks = 50

// Ticks implements plot.Ticker. Every instant is clamped to the int64
// range and the loop to maxTicks, so no range, however extreme, makes it
// run on.
func (w wallTicks) Ticks(min, max float64) []plot.Tick {
	from, to := w.axis.at(min), w.axis.at(max)
	if to < from {
		from, to = to, from
	}
	span := uint64(to - from)
	step := wallSteps[len(wallSteps)-1]
	for _, s := range wallSteps {
		if span/uint64(s) <= 8 {
			step = s
			break
		}
	}
	layout := "15:04:05"
	switch {
	case step < time.Second:
		layout = "15:04:05.000"
	case step >= 365*day:
		layout = "2006"
	case step >= 28*day:
		layout = "2006-01-02"
	case step >= day:
		layout = "Jan 2"
	case step >= time.Minute:
		layout = "15:04"
	}
	_, off := time.Unix(0, from).In(w.loc).Zone()
	first, ok := alignUp(from, int64(off)*int64(time.Second), int64(step))
	var ticks []plot.Tick
	for t := first; ok && t <= to && len(ticks) < maxTicks; t += int64(step) {
		ticks = append(ticks, plot.Tick{Value: w.axis.x(t), Label: time.Unix(0, t).In(w.loc).Format(layout)})
		if t > math.MaxInt64-int64(step) {
			break // the next tick is past the int64 range
		}
	}
	return ticks
}

// alignUp returns the first instant at or after from that is a multiple of
// step in a zone shift ahead of UTC, or false when there is none in the
// int64 range.
func alignUp(from, shift, step int64) (int64, bool) {
	local := addClamped(from, float64(shift))
	q := rule.FloorDiv(local, step)
	if q < math.MinInt64/step+1 || q > math.MaxInt64/step-1 {
		return 0, false
	}
	qs := q * step
	if (shift > 0 && qs < math.MinInt64+shift) || (shift < 0 && qs > math.MaxInt64+shift) {
		return 0, false
	}
	t := qs - shift
	if t < from {
		// Differences are taken unsigned (true values below 2^64).
		n := (uint64(from-t) + uint64(step) - 1) / uint64(step)
		if n > uint64(math.MaxInt64-t)/uint64(step) {
			return 0, false
		}
		t += int64(n) * step
	}
	return t, true
}

// wallLabel names a wall-clock axis by its zone and first day.
func wallLabel(origin int64, loc *time.Location) string {
	t := time.Unix(0, origin).In(loc)
	zone, _ := t.Zone()
	return fmt.Sprintf("time of day (%s), from %s", zone, t.Format("2006-01-02 15:04:05.000"))
}

// niceTicks places about n major ticks on round values (1, 2 or 5 times a
// power of ten); integer ticks never step below 1.
type niceTicks struct {
	n       int
	integer bool
}

// Ticks implements plot.Ticker.
func (nt niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', -1, 64)}}
	}
	raw := (max - min) / float64(nt.n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if nt.integer && step < 1 {
		step = 1
	}
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if math.IsInf(step, 0) || math.IsNaN(step) || step <= 0 {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', -1, 64)}}
	}
	var ticks []plot.Tick
	// Counted, not stepped: past 2^53, k+1 == k.
	k0 := math.Ceil(min / step)
	for i := 0; i < maxTicks; i++ {
		v := (k0 + float64(i)) * step
		if v > max+step*1e-9 {
			break
		}
		if v == 0 {
			v = 0 // not -0
		}
		label := strconv.FormatFloat(v, 'f', decimals, 64)
		if nt.integer && math.Abs(v) >= 1000 {
			label = thousands(int64(v))
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// seconds formats a duration for a label: "7.005 s", "850 ms", "2.5 min".
func seconds(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.String()
	case d < time.Second:
		return strconv.FormatFloat(float64(d.Round(10*time.Microsecond))/float64(time.Millisecond), 'f', -1, 64) + " ms"
	case d < 10*time.Minute:
		return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64) + " s"
	case d < 10*time.Hour:
		return strconv.FormatFloat(math.Round(d.Minutes()*10)/10, 'f', -1, 64) + " min"
	}
	return strconv.FormatFloat(math.Round(d.Hours()*10)/10, 'f', -1, 64) + " h"
}
