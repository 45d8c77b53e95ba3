package plots

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
)

// timeAxis turns send instants into axis values: units since the first send,
// in a unit that suits the span so tick labels stay short.
type timeAxis struct {
	origin int64
	unit   time.Duration
	name   string
}

func newTimeAxis(origin, span int64) timeAxis {
	switch {
	case span <= int64(2*time.Minute):
		return timeAxis{origin, time.Second, "seconds"}
	case span <= int64(2*time.Hour):
		return timeAxis{origin, time.Minute, "minutes"}
	case span <= int64(72*time.Hour):
		return timeAxis{origin, time.Hour, "hours"}
	}
	return timeAxis{origin, 24 * time.Hour, "days"}
}

// x converts an instant to an axis value; floats appear only here, at the edge.
func (a timeAxis) x(t int64) float64 {
	return float64(t-a.origin) / float64(a.unit)
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

var wallSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour,
}

// Ticks implements plot.Ticker.
func (w wallTicks) Ticks(min, max float64) []plot.Tick {
	from := w.axis.origin + int64(math.Floor(min*float64(w.axis.unit)))
	to := w.axis.origin + int64(math.Ceil(max*float64(w.axis.unit)))
	step := wallSteps[len(wallSteps)-1]
	for _, s := range wallSteps {
		if (to-from)/int64(s) <= 8 {
			step = s
			break
		}
	}
	layout := "15:04:05"
	switch {
	case step < time.Second:
		layout = "15:04:05.000"
	case step >= 24*time.Hour:
		layout = "Jan 2"
	case step >= time.Minute:
		layout = "15:04"
	}
	_, off := time.Unix(0, from).In(w.loc).Zone()
	shift := int64(off) * int64(time.Second)
	first := floorDiv(from+shift, int64(step))*int64(step) - shift
	if first < from {
		first += int64(step)
	}
	var ticks []plot.Tick
	for t := first; t <= to; t += int64(step) {
		ticks = append(ticks, plot.Tick{Value: w.axis.x(t), Label: time.Unix(0, t).In(w.loc).Format(layout)})
	}
	return ticks
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
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
	var ticks []plot.Tick
	for k := math.Ceil(min / step); k*step <= max+step*1e-9; k++ {
		v := k * step
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
