package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DistKind names a distribution of durations.
type DistKind int

// The distributions a scenario may draw durations from.
const (
	Fixed       DistKind = iota // always A
	Uniform                     // uniform on [A, B]
	Exponential                 // exponential with mean A
	LogNormal                   // log-normal with median A and shape Sigma
	Empirical                   // one of Samples, each as likely
)

// Dist is a distribution of non-negative durations. The zero value is the
// constant zero. Its text form, read by ParseDist and written by String, is
// one of "2ms" (fixed), "uniform(100us, 3ms)", "exponential(5ms)",
// "lognormal(120ms, 0.5)" or "empirical(FILE)".
type Dist struct {
	Kind  DistKind
	A, B  time.Duration
	Sigma float64
	// Samples are the recorded durations an Empirical distribution draws
	// from; shared and never changed, so Dist stays comparable.
	Samples *Samples
}

// Samples are recorded durations read from File, one a line.
type Samples struct {
	File string
	D    []time.Duration // at least one, sorted
}

// Draw returns one duration from r; floats are used only inside the draw
// and the result is rounded to whole nanoseconds.
func (d Dist) Draw(r *rand.Rand) time.Duration {
	switch d.Kind {
	case Uniform:
		if d.B <= d.A {
			return d.A
		}
		return d.A + time.Duration(r.Int64N(int64(d.B-d.A)+1))
	case Exponential:
		return toDur(r.ExpFloat64() * float64(d.A))
	case LogNormal:
		return toDur(float64(d.A) * math.Exp(d.Sigma*r.NormFloat64()))
	case Empirical:
		return d.Samples.D[r.IntN(len(d.Samples.D))]
	default:
		return d.A
	}
}

// Scaled returns d with every duration passed through f (a speed-up).
func (d Dist) Scaled(f func(time.Duration) time.Duration) Dist {
	d.A, d.B = f(d.A), f(d.B)
	if d.Samples != nil {
		sc := &Samples{File: d.Samples.File, D: make([]time.Duration, len(d.Samples.D))}
		for i, x := range d.Samples.D {
			sc.D[i] = f(x)
		}
		d.Samples = sc
	}
	return d
}

func toDur(f float64) time.Duration {
	if f >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return time.Duration(math.Round(f))
}

// IsZero reports whether every draw is zero.
func (d Dist) IsZero() bool {
	if d.Kind == Empirical {
		return d.Samples.D[len(d.Samples.D)-1] == 0
	}
	return d.A == 0 && (d.Kind != Uniform || d.B == 0)
}

// Bounds returns the least and the greatest value a draw can take; ok is
// false for the unbounded kinds (exponential, log-normal with sigma > 0).
func (d Dist) Bounds() (lo, hi time.Duration, ok bool) {
	switch d.Kind {
	case Uniform:
		return d.A, max(d.A, d.B), true
	case Exponential:
		return 0, 0, d.A == 0
	case LogNormal:
		return d.A, d.A, d.Sigma == 0 || d.A == 0
	case Empirical:
		return d.Samples.D[0], d.Samples.D[len(d.Samples.D)-1], true
	default:
		return d.A, d.A, true
	}
}

// Mean returns the distribution's mean, for sizing and reports.
func (d Dist) Mean() time.Duration {
	switch d.Kind {
	case Uniform:
		return (d.A + d.B) / 2
	case LogNormal:
		return toDur(float64(d.A) * math.Exp(d.Sigma*d.Sigma/2))
	case Empirical:
		var sum float64
		for _, x := range d.Samples.D {
			sum += float64(x)
		}
		return toDur(sum / float64(len(d.Samples.D)))
	default:
		return d.A
	}
}

func (d Dist) String() string {
	switch d.Kind {
	case Uniform:
		return fmt.Sprintf("uniform(%v, %v)", d.A, d.B)
	case Exponential:
		return fmt.Sprintf("exponential(%v)", d.A)
	case LogNormal:
		return fmt.Sprintf("lognormal(%v, %s)", d.A, strconv.FormatFloat(d.Sigma, 'g', -1, 64))
	case Empirical:
		return "empirical(" + d.Samples.File + ")"
	default:
		return d.A.String()
	}
}

// MarshalText writes the text form.
func (d Dist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads the text form; see ParseDist.
func (d *Dist) UnmarshalText(b []byte) error {
	p, err := ParseDist(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// ParseDist reads a distribution: a duration alone ("0", "2ms") is fixed;
// otherwise "uniform(MIN, MAX)", "exponential(MEAN)", "fixed(D)",
// "lognormal(MEDIAN, SIGMA)" or "empirical(FILE)", FILE opened from the
// working directory.
func ParseDist(s string) (Dist, error) {
	return ParseDistFiles(s, func(name string) (io.ReadCloser, error) { return os.Open(name) })
}

// ParseDistFiles is ParseDist with the samples of empirical(FILE) read
// through open (a scenario's, relative to its file).
func ParseDistFiles(s string, open func(string) (io.ReadCloser, error)) (Dist, error) {
	s = strings.TrimSpace(s)
	name, args, ok := strings.Cut(s, "(")
	if !ok {
		d, err := parseDur(s)
		if err != nil {
			return Dist{}, fmt.Errorf("distribution %q: %v", s, err)
		}
		return Dist{Kind: Fixed, A: d}, nil
	}
	if !strings.HasSuffix(args, ")") {
		return Dist{}, fmt.Errorf("distribution %q: missing closing parenthesis", s)
	}
	parts := strings.Split(strings.TrimSuffix(args, ")"), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	d, err := parseKind(name, parts, open, parseDur)
	if err != nil {
		return Dist{}, fmt.Errorf("distribution %q: %v", s, err)
	}
	return d, nil
}

// ParseCostDistFiles reads a distribution of costs, whole numbers of a
// unit (tokens, points, bytes), as ParseDistFiles reads one of durations:
// "800", "uniform(100, 4000)", "exponential(900)", "lognormal(800, 0.7)"
// or "empirical(FILE)" (one cost a line). The Dist holds each cost as that
// many nanoseconds; its draws are the costs.
func ParseCostDistFiles(s string, open func(string) (io.ReadCloser, error)) (Dist, error) {
	s = strings.TrimSpace(s)
	name, args, ok := strings.Cut(s, "(")
	if !ok {
		d, err := parseCost(s)
		if err != nil {
			return Dist{}, fmt.Errorf("cost %q: %v", s, err)
		}
		return Dist{Kind: Fixed, A: d}, nil
	}
	if !strings.HasSuffix(args, ")") {
		return Dist{}, fmt.Errorf("cost %q: missing closing parenthesis", s)
	}
	parts := strings.Split(strings.TrimSuffix(args, ")"), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	d, err := parseKind(name, parts, open, parseCost)
	if err != nil {
		return Dist{}, fmt.Errorf("cost %q: %v", s, err)
	}
	return d, nil
}

// parseCost reads a whole number of a unit, at least 0.
func parseCost(s string) (time.Duration, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a whole number of at least 0", s)
	}
	return time.Duration(n), nil
}

// parseKind reads the distribution name(parts...).
func parseKind(name string, parts []string, open func(string) (io.ReadCloser, error), num func(string) (time.Duration, error)) (Dist, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "empirical":
		if len(parts) != 1 || parts[0] == "" {
			return Dist{}, errors.New("takes a file of durations, one a line")
		}
		smp, err := readSamples(parts[0], open, num)
		if err != nil {
			return Dist{}, err
		}
		return Dist{Kind: Empirical, Samples: smp}, nil
	case "fixed":
		ds, err := durations(parts, 1, num)
		if err != nil {
			return Dist{}, err
		}
		return Dist{Kind: Fixed, A: ds[0]}, nil
	case "uniform":
		ds, err := durations(parts, 2, num)
		if err != nil {
			return Dist{}, err
		}
		if ds[1] < ds[0] {
			return Dist{}, errors.New("maximum is below minimum")
		}
		return Dist{Kind: Uniform, A: ds[0], B: ds[1]}, nil
	case "exponential", "exp":
		ds, err := durations(parts, 1, num)
		if err != nil {
			return Dist{}, err
		}
		return Dist{Kind: Exponential, A: ds[0]}, nil
	case "lognormal":
		if len(parts) != 2 {
			return Dist{}, errors.New("takes a median and a sigma")
		}
		med, err := num(parts[0])
		if err != nil {
			return Dist{}, err
		}
		sigma, err := strconv.ParseFloat(parts[1], 64)
		if err != nil || sigma < 0 || sigma > 10 {
			return Dist{}, fmt.Errorf("sigma %q must be a number from 0 to 10", parts[1])
		}
		return Dist{Kind: LogNormal, A: med, Sigma: sigma}, nil
	}
	return Dist{}, fmt.Errorf("unknown kind %q (want fixed, uniform, exponential, lognormal or empirical)", name)
}

// durations reads parts as exactly n durations.
func durations(parts []string, n int, num func(string) (time.Duration, error)) ([]time.Duration, error) {
	if len(parts) != n {
		return nil, fmt.Errorf("takes %d argument(s)", n)
	}
	out := make([]time.Duration, n)
	for i := range n {
		d, err := num(parts[i])
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func parseDur(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 250us, 3ms or 1s", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// MaxSamples bounds an empirical distribution's file.
const MaxSamples = 1_000_000

// ReadSamples reads durations, one a line ("1.5ms"; blank lines and lines
// starting with # are skipped), from the file open gives for name.
func ReadSamples(name string, open func(string) (io.ReadCloser, error)) (*Samples, error) {
	return readSamples(name, open, parseDur)
}

// readSamples is ReadSamples reading each line with num.
func readSamples(name string, open func(string) (io.ReadCloser, error), num func(string) (time.Duration, error)) (*Samples, error) {
	rc, err := open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	out := &Samples{File: name}
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		d, err := num(text)
		if err != nil {
			if len(text) > 80 {
				err = fmt.Errorf("%q... is not a duration", text[:80])
			}
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if len(out.D) == MaxSamples {
			return nil, fmt.Errorf("%s: more than %d samples", name, MaxSamples)
		}
		out.D = append(out.D, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(out.D) == 0 {
		return nil, fmt.Errorf("%s: no durations", name)
	}
	slices.Sort(out.D)
	return out, nil
}
