// Package serveprobe is ground truth for contract inference: it runs a
// hidden contract through a real serve.Server over loopback HTTP, on a
// virtual clock, with a client that probes it (bursts, idle spells,
// steady paces that adapt to the 429s) for a stated budget of requests.
// Each request reaches the server after a seeded random delay; the
// client's log (its send instants) and the server's own log (its arrival
// instants) are both kept, so that inference can be scored on either.
//
// It lives apart from package infertest because serve's own tests import
// infertest, and this package imports serve.
package serveprobe

import (
	"bytes"
	"container/heap"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"time"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
)

// Case is what a hidden contract is made of: rules of one kind, metering
// calls or a cost.
type Case struct {
	Kind rule.Kind
	Cost bool // the rules meter CostUnit, which each request carries
}

func (c Case) String() string {
	if c.Cost {
		return c.Kind.String() + " cost rules"
	}
	return c.Kind.String() + " call rules"
}

// CostUnit is the unit cost rules meter, and CostHeader the request
// header that carries it.
const (
	CostUnit   = "tokens"
	CostHeader = "X-Tokens"
	maxCost    = 10 // a request costs 1 to maxCost units
)

// maxLimit bounds a drawn rule's N (in calls; maxCost times more in
// units), so that a budget of a few thousand requests can pin it.
const maxLimit = 100

// Contract draws 1 to 3 rules of case c on distinct windows of
// infertest.HiddenWindows, each binding: a longer window allows at least
// twice the shorter one's N, and at most 70% of what the shorter's pace
// would fill it with, so that some steady pace meets it alone.
func Contract(rng *rand.Rand, c Case) []rule.Rule {
	n := 1 + rng.IntN(3)
	ws := make([]time.Duration, 0, n)
	for _, i := range rng.Perm(len(infertest.HiddenWindows))[:n] {
		ws = append(ws, infertest.HiddenWindows[i])
	}
	slices.Sort(ws)
	scale := 1
	if c.Cost {
		scale = maxCost
	}
	var rules []rule.Rule
	for k, w := range ws {
		r := rule.Rule{Window: w, Kind: c.Kind, Limit: (2 + rng.IntN(19)) * scale}
		if k > 0 {
			prev := rules[k-1]
			lo := 2 * prev.Limit
			hi := min(int(7*int64(prev.Limit)*int64(w)/int64(prev.Window)/10), maxLimit*scale)
			if hi < lo {
				break
			}
			r.Limit = lo + rng.IntN(hi-lo+1)
		}
		if c.Kind == rule.Bucket {
			r.Burst = r.Limit + rng.IntN(r.Limit+1)
		}
		if c.Cost {
			r.Unit = CostUnit
		}
		rules = append(rules, r)
	}
	return rules
}

// Options say how a probe runs.
type Options struct {
	Seed uint64
	// Budget is how many requests the client sends.
	Budget int
	// MaxDelay bounds the client→server delay, uniform in [0, MaxDelay].
	MaxDelay time.Duration
	// Loopback sends the requests over a loopback TCP connection; without
	// it they go to the same handler in process, which is many times
	// cheaper and answers alike.
	Loopback bool
	// Refusals is the server's reading of the requests it refuses.
	Refusals rule.Refusals
}

// Call is one request: when the client sent it and when it reached the
// server (epoch ns), its cost (0 without cost rules) and the status.
type Call struct {
	Send, Arrival int64
	Cost          int64
	Status        int
}

// Run is one probe's record.
type Run struct {
	Hidden []rule.Rule
	Calls  []Call // in send order
	// ServeLog is the server's request log (serve's --log CSV).
	ServeLog []byte
}

// Units are the cost units the hidden rules meter (infer.Options.Units):
// CostUnit, or none.
func (r *Run) Units() []string {
	for _, h := range r.Hidden {
		if h.Unit != "" {
			return []string{CostUnit}
		}
	}
	return nil
}

// ClientLog is the client's log for inference: each call at its send
// instant, with its cost in Units, on lines 1 on.
func (r *Run) ClientLog() []infer.Send {
	out := make([]infer.Send, len(r.Calls))
	costs := r.Units() != nil
	for i, c := range r.Calls {
		out[i] = infer.Send{At: c.Send, Refused: c.Status == http.StatusTooManyRequests, Line: int64(i + 1)}
		if costs {
			out[i].Cost = []int64{c.Cost}
		}
	}
	return out
}

// ServedLog reads the server's log back with infer's reader, as `rlcheck
// infer` would read serve's --log file, with the cost column of the unit
// the rules meter.
func (r *Run) ServedLog() ([]infer.Send, error) {
	open := func() (io.Reader, error) { return bytes.NewReader(r.ServeLog), nil }
	log, err := infer.Read("serve.log", open, infer.ReadOptions{Log: serve.LogReadOptionsFor(r.Hidden, false)})
	if err != nil {
		return nil, err
	}
	if log.Other > 0 {
		return nil, fmt.Errorf("serveprobe: %d answers were neither 2xx nor 429", log.Other)
	}
	return log.Sends[""], nil
}

// Probe runs the hidden contract through a server on a virtual clock.
func Probe(hidden []rule.Rule, opt Options) (*Run, error) {
	var clock int64
	var log bytes.Buffer
	so := serve.Options{Rules: hidden, Log: &log, Now: func() int64 { return clock }, Refusals: opt.Refusals}
	cost := len(hidden) > 0 && hidden[0].Unit != ""
	if cost {
		so.Costs = []serve.CostSource{{Unit: CostUnit, Header: CostHeader}}
	}
	s, err := serve.New(so)
	if err != nil {
		return nil, err
	}
	c := &client{
		rng:  rand.New(rand.NewPCG(opt.Seed, 0x5e7e)),
		opt:  opt,
		url:  "http://serve.invalid/",
		http: &http.Client{Transport: inProcess{s}},
		cost: cost,
		now:  1_700_000_000_000_000_000,
	}
	if opt.Loopback {
		front := httptest.NewServer(s)
		defer front.Close()
		c.url, c.http = front.URL, front.Client()
	}
	c.at = func(t int64) { clock = t }
	err = c.probe()
	c.http.CloseIdleConnections()
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &Run{Hidden: hidden, Calls: c.calls, ServeLog: log.Bytes()}, nil
}

// inProcess hands each request to the handler directly.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// client is the probing client: its clock, the requests on their way, and
// the answers it has seen.
type client struct {
	rng     *rand.Rand
	opt     Options
	url     string
	http    *http.Client
	cost    bool
	at      func(int64) // sets the server's clock
	now     int64       // the client's clock, ns
	calls   []Call
	flight  flight // sent, not yet arrived
	refused int    // 429s seen so far
}

// send sends a request at the client's clock, after delivering every
// request that arrived before it, so that the client has seen their answers.
func (c *client) send() error {
	if err := c.deliver(c.now); err != nil {
		return err
	}
	call := Call{Send: c.now, Arrival: c.now + c.rng.Int64N(int64(c.opt.MaxDelay)+1)}
	if c.cost {
		call.Cost = 1 + c.rng.Int64N(maxCost)
	}
	c.calls = append(c.calls, call)
	heap.Push(&c.flight, inFlight{at: call.Arrival, i: len(c.calls) - 1})
	return nil
}

// deliver hands the server, in arrival order, every request arrived by t.
func (c *client) deliver(t int64) error {
	for len(c.flight) > 0 && c.flight[0].at <= t {
		f := heap.Pop(&c.flight).(inFlight)
		call := &c.calls[f.i]
		c.at(call.Arrival)
		req, err := http.NewRequest("POST", c.url, nil)
		if err != nil {
			return err
		}
		if c.cost {
			req.Header.Set(CostHeader, strconv.FormatInt(call.Cost, 10))
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		call.Status = resp.StatusCode
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			c.refused++
		default:
			return fmt.Errorf("serveprobe: the server answered %d", resp.StatusCode)
		}
	}
	return nil
}

// probe spends the budget on spells: idle, a burst, a steady pace.
func (c *client) probe() error {
	for len(c.calls) < c.opt.Budget {
		var err error
		switch c.rng.IntN(3) {
		case 0:
			c.now += logUniform(c.rng, 300*time.Millisecond, 90*time.Second)
		case 1:
			err = c.burst()
		default:
			err = c.pace()
		}
		if err != nil {
			return err
		}
	}
	return c.deliver(math.MaxInt64)
}

// burst sends calls close together until it has seen a few refusals: most
// bursts space them wider than the delay, some much tighter.
func (c *client) burst() error {
	lo, hi := 6*time.Millisecond, 25*time.Millisecond
	if c.rng.IntN(4) == 0 {
		lo, hi = 50*time.Microsecond, 3*time.Millisecond
	}
	start := c.refused
	for n := 0; n < 150 && c.refused-start < 3 && len(c.calls) < c.opt.Budget; n++ {
		c.now += int64(lo) + c.rng.Int64N(int64(hi-lo))
		if err := c.send(); err != nil {
			return err
		}
	}
	return nil
}

// pace sends at a steady pace that quickens while calls are accepted and
// backs off at each refusal, as a client finding its rate does; it ends
// after a few refusals.
func (c *client) pace() error {
	gap := float64(logUniform(c.rng, 20*time.Millisecond, 3*time.Second))
	seen, start := c.refused, c.refused
	for n := 0; n < 400 && c.refused-start < 4 && len(c.calls) < c.opt.Budget; n++ {
		c.now += int64(gap)
		if err := c.send(); err != nil {
			return err
		}
		if c.refused > seen {
			gap *= 1.5
		} else {
			gap *= 0.97
		}
		seen = c.refused
	}
	return nil
}

// logUniform draws a duration whose logarithm is uniform in [lo, hi).
func logUniform(rng *rand.Rand, lo, hi time.Duration) int64 {
	return int64(float64(lo) * math.Exp(rng.Float64()*math.Log(float64(hi)/float64(lo))))
}

// inFlight is a request on its way: when it arrives, and its index.
type inFlight struct {
	at int64
	i  int
}

// flight is a min-heap of requests by arrival, then send order.
type flight []inFlight

func (f flight) Len() int { return len(f) }
func (f flight) Less(a, b int) bool {
	return f[a].at < f[b].at || f[a].at == f[b].at && f[a].i < f[b].i
}
func (f flight) Swap(a, b int) { f[a], f[b] = f[b], f[a] }
func (f *flight) Push(x any)   { *f = append(*f, x.(inFlight)) }
func (f *flight) Pop() any {
	old := *f
	x := old[len(old)-1]
	*f = old[:len(old)-1]
	return x
}
