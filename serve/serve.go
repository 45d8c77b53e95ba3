package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rlheader"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// Options say what a Server promises and how it answers.
type Options struct {
	// Rules, Boundary and MaxInFlight (0: no cap) are the contract every
	// request is judged against.
	Rules       []rule.Rule
	Boundary    rule.Boundary
	MaxInFlight int
	// KeyHeader names the request header that splits the contract per key
	// (X-API-Key, say); "" judges every request as one stream.
	KeyHeader string
	// Costs says where a request carries its cost in each unit the rules
	// meter, one source per unit (see CostSource).
	Costs []CostSource
	// Latency is how long a request within the contract waits for its
	// answer, drawn in arrival order from a generator seeded with Seed.
	Latency workload.Dist
	Seed    uint64
	// Status (0: 200) and Body answer a request within the contract.
	Status int
	Body   string
	// Record answers (or, with Upstream, forwards) every request as though
	// it kept the contract, so that an unmodified client runs to its end;
	// the verdict still counts every violation.
	Record bool
	// Upstream, when set, makes the server a recording reverse proxy: the
	// requests the contract allows are forwarded there, with their real
	// latency.
	Upstream *url.URL
	// UpstreamTimeout bounds the wait for the upstream's response headers
	// (0: DefaultUpstreamTimeout); past it the request is answered, and
	// logged, 504.
	UpstreamTimeout time.Duration
	// MetricsPath serves Prometheus metrics, outside the judging; "" none.
	MetricsPath string
	// MetricsKeys is how many keys get metric series of their own (0:
	// metrics.DefaultMaxKeys, negative: none); later keys are summed up
	// under key="(other keys)".
	MetricsKeys int
	// Log receives the CSV record of every request, header first, in
	// arrival order (see LogReadOptions); nil keeps none.
	Log io.Writer
	// Provider, when set, speaks that provider's dialect (docs/providers.md):
	// each request's costs are the estimate read from its body (the prompt,
	// CharsPerToken characters a token, and max_tokens), a request within
	// the contract is answered with a completion of the provider's shape
	// instead of Status and Body, a 429 with the provider's error body, and
	// every judged answer carries the provider's rate-limit headers. Costs
	// must then be empty.
	Provider Provider
	// Refusals is the reading of the requests refused 429: under
	// rule.RefusedCount (the zero value, what OpenAI documents) each fills
	// every later window as any request does; under rule.RefusedFree it
	// takes nothing from any window: it is judged against the requests
	// admitted before it, then forgotten. The verdict is check's on the
	// log read by its status column under the same reading: under
	// RefusedFree a 429 is a refusal, not a violation.
	Refusals rule.Refusals
	// CompletionPermille is the size of a preset's completion, in
	// thousandths of the request's max_tokens (0: all of it), so that the
	// usage it reports can differ from the estimate it was charged.
	CompletionPermille int
	// Now, when set, is the clock arrivals and answers are stamped with,
	// in epoch ns, instead of the real one: a harness that drives the
	// server on a virtual clock gets a deterministic verdict. Stamps stay
	// strictly increasing: an instant not after the last stamp is moved to
	// 1 ns past it. Latency waits still take real time.
	Now func() int64
}

// Server judges and answers requests; it is an http.Handler. Call Close
// once no handler runs any more, to flush the log.
type Server struct {
	opt   Options
	start time.Time
	base  int64 // the epoch in ns at start
	// now, when set, reads the clock in epoch ns instead (tests).
	now func() int64

	// mu orders every arrival and answer: it hands out the stamps, the
	// sequence numbers and the latency draws, and holds the key table, the
	// metric labels and the verdicts of the keys given back.
	mu     sync.Mutex
	last   int64
	seq    int64
	keys   map[string]*key
	list   []*key
	peak   int // the most keys held at once
	sweep  int
	rng    *rand.Rand
	labels *metrics.KeyLabels
	gone   map[string]*metrics.KeySeries // by metric label
	goneN  int64                         // violations of the keys given back

	// stopping ends the latency waits at once when the server stops, and
	// conns cuts the connections that serve no request then.
	stopping chan struct{}
	stopOnce sync.Once
	conns    conns

	policy   []string     // the RateLimit-Policy field
	names    []string     // each rule's policy name, quoted
	unitOf   []int        // each rule's unit, by its index in costs; -1 for a call rule
	costs    []CostSource // by unit, as rule.Units orders them
	log      *logWriter
	proxy    *httputil.ReverseProxy
	metrics  http.Handler
	inFlight atomic.Int64
	okN      atomic.Int64
	violN    atomic.Int64
	// unjudged counts the requests refused 413 before judging: a cost no
	// rule could ever admit, or one no window's sum can hold.
	unjudged atomic.Int64
	handlers sync.WaitGroup
}

// key is one key's stream: its checker and the requests it has in flight.
type key struct {
	name     string
	label    string // its metric series
	mu       sync.Mutex
	chk      *checker.Checker
	inFlight int
	capViol  int64
	broken   []brokenRule // filled by the checker during one Observe
}

type brokenRule struct {
	rule int
	v    checker.Violation
}

// New returns a server for opt.
func New(opt Options) (*Server, error) {
	if len(opt.Rules) == 0 && opt.MaxInFlight <= 0 {
		return nil, errors.New("serve: no rules and no in-flight cap: nothing to judge")
	}
	if opt.MaxInFlight < 0 {
		return nil, fmt.Errorf("serve: in-flight cap %d: want 0 or more", opt.MaxInFlight)
	}
	if opt.Status == 0 {
		opt.Status = http.StatusOK
	}
	if opt.Status < 100 || opt.Status > 999 {
		return nil, fmt.Errorf("serve: status %d: want a three-digit HTTP status", opt.Status)
	}
	now := time.Now()
	s := &Server{
		opt: opt, start: now, base: now.UnixNano(),
		keys: map[string]*key{}, gone: map[string]*metrics.KeySeries{},
		rng:      rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15)),
		log:      newLogWriter(opt.Log, rule.Units(opt.Rules), opt.Upstream != nil || opt.Provider != NoProvider, opt.Provider != NoProvider),
		labels:   metrics.NewKeyLabels(opt.MetricsKeys),
		stopping: make(chan struct{}),
		now:      opt.Now,
	}
	if s.opt.UpstreamTimeout <= 0 {
		s.opt.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if err := checkProvider(opt); err != nil {
		return nil, err
	}
	sources := opt.Costs
	if opt.Provider != NoProvider {
		for _, u := range rule.Units(opt.Rules) {
			sources = append(sources, CostSource{Unit: u, Field: u})
		}
	}
	var err error
	if s.costs, err = costSources(opt.Rules, sources); err != nil {
		return nil, err
	}
	s.policy = []string{policyField(opt.Rules)}
	units := rule.Units(opt.Rules)
	for _, r := range opt.Rules {
		s.names = append(s.names, strconv.Quote(policyName(r)))
		s.unitOf = append(s.unitOf, indexOf(units, r.Unit))
	}
	if opt.Upstream != nil {
		s.proxy = s.newProxy(opt.Upstream)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{s})
	s.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return s, nil
}

// DefaultUpstreamTimeout is how long a request forwarded upstream may wait
// for its response headers when Options.UpstreamTimeout is 0.
const DefaultUpstreamTimeout = 30 * time.Second

// Close flushes the log; no request may be in progress.
func (s *Server) Close() error { return s.log.close() }

// stop answers the requests waiting out their latency at once, for a
// prompt shutdown.
func (s *Server) stop() {
	s.stopOnce.Do(func() {
		close(s.stopping)
		s.conns.stop()
	})
}

// conns tracks the server's connections and whether each is serving a
// request, so that a stop can cut the others at once: a client that sends
// half its headers and waits holds no shutdown back.
type conns struct {
	mu       sync.Mutex
	busy     map[net.Conn]bool
	stopping bool
}

type connKey struct{}

// context is the http.Server's ConnContext: it lets a request find its
// connection.
func (c *conns) context(ctx context.Context, conn net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, conn)
}

// state is the http.Server's ConnState.
func (c *conns) state(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateNew:
		if c.busy == nil {
			c.busy = map[net.Conn]bool{}
		}
		c.busy[conn] = false
		if c.stopping {
			conn.SetReadDeadline(time.Now())
		}
	case http.StateHijacked, http.StateClosed:
		delete(c.busy, conn)
	}
}

// serving marks r's connection as serving a request, or no longer.
func (c *conns) serving(r *http.Request, on bool) {
	conn, ok := r.Context().Value(connKey{}).(net.Conn)
	if !ok {
		return // not served by Run's http.Server
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, tracked := c.busy[conn]; tracked {
		c.busy[conn] = on
	}
}

// stop cuts every connection not serving a request: its pending read ends.
func (c *conns) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopping = true
	for conn, busy := range c.busy {
		if !busy {
			conn.SetReadDeadline(time.Now())
		}
	}
}

// Requests returns how many requests were judged, and how many of them
// broke the contract.
func (s *Server) Requests() (judged, violations int64) {
	v := s.violN.Load()
	return s.okN.Load() + v, v
}

// Violations returns the violations judged so far, over every key and
// rule and the in-flight cap, as check would count them on the log.
func (s *Server) Violations() int64 {
	s.mu.Lock()
	keys := append([]*key(nil), s.list...)
	n := s.goneN
	s.mu.Unlock()
	for _, k := range keys {
		k.mu.Lock()
		rep := k.chk.Report()
		n += rep.Violations() + k.capViol
		k.mu.Unlock()
	}
	return n
}

// stamp returns the next instant: now in epoch nanoseconds (read from the
// monotonic clock), and strictly after every instant handed out before, so
// that the log's order is the judging order and no two events of a key tie.
// s.mu must be held.
func (s *Server) stamp() int64 {
	t := s.base + int64(time.Since(s.start))
	if s.now != nil {
		t = s.now()
	}
	if t <= s.last {
		t = s.last + 1
	}
	s.last = t
	return t
}

// lookup returns key name's stream, adding it on first sight. s.mu must be
// held.
func (s *Server) lookup(name string) *key {
	if k, ok := s.keys[name]; ok {
		return k
	}
	k := &key{name: name, label: s.labels.Label(name)}
	k.chk = checker.New(checker.Config{
		Rules: s.opt.Rules, Boundary: s.opt.Boundary,
		OnViolation: func(r int, v checker.Violation) { k.broken = append(k.broken, brokenRule{r, v}) },
	})
	s.keys[name] = k
	s.list = append(s.list, k)
	s.peak = max(s.peak, len(s.list))
	return k
}

// PeakKeys returns the most keys the server held at once: what its memory
// while serving grows with (see docs/serve.md).
func (s *Server) PeakKeys() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// sweepEvery arrivals, up to 2*sweepEvery keys are tried for release (more
// than can have been added since the last sweep): a key with nothing in
// flight whose windows have all passed is given back (as check does), its
// verdict kept under its metric label.
const sweepEvery = 4096

// release gives back the keys gone quiet. s.mu must be held.
func (s *Server) release(now int64) {
	for n := min(2*sweepEvery, len(s.list)); n > 0 && len(s.list) > 0; n-- {
		if s.sweep >= len(s.list) {
			s.sweep = 0
		}
		k := s.list[s.sweep]
		k.mu.Lock()
		quiet := k.inFlight == 0 && k.chk.Idle(now)
		if quiet {
			rep := k.chk.Report()
			s.goneN += rep.Violations() + k.capViol
			g := s.gone[k.label]
			if g == nil {
				g = metrics.NewKeySeries(len(s.opt.Rules))
				s.gone[k.label] = g
			}
			g.Add(k.chk, nil, k.capViol)
		}
		k.mu.Unlock()
		if !quiet {
			s.sweep++
			continue
		}
		last := len(s.list) - 1
		s.list[s.sweep], s.list[last] = s.list[last], nil
		s.list = s.list[:last]
		delete(s.keys, k.name)
	}
}

// arrival is one request as judged at its arrival.
type arrival struct {
	k       *key
	seq     int64
	at      int64
	latency time.Duration
	broken  []brokenRule
	overCap bool // the in-flight cap was full
	// rateLimit is the RateLimit field of the answer.
	rateLimit string
	// wait is how long after at the same request would be admitted, in
	// ns, and retryAfter that rounded up to whole seconds: set for a
	// request that broke the contract.
	wait       int64
	retryAfter int64
	ended      bool
	timer      *time.Timer // the upstream timeout of a forwarded request
	// costs are the request's costs, by unit: a preset's estimates.
	costs []int64
	// pending is a preset's request as its key's checker took it, to be
	// settled with its answer; actual the usage the answer reports, by
	// unit, and settled the answer's instant (docs/serve.md, "Settled
	// usage").
	pending *checker.Pending
	actual  []int64
	settled int64
	// send is the client's send instant (X-Send-Time), when sent is set;
	// id its X-Request-Id.
	send int64
	sent bool
	id   string
	// answer holds the rate-limit headers of the answer, by rlheader.Header:
	// the upstream's, or those a preset sent.
	answer *[rlheader.NumHeaders]string
	// family holds a preset's rate-limit headers.
	family [][2]string
}

func (a *arrival) violates() bool { return len(a.broken) > 0 || a.overCap }

// arrive stamps and judges a request of key name. A request whose costs
// would carry a window's sum past int64 cannot be judged: it is refused
// (a *costError) before it takes a place in the log, and the key's
// checker goes on judging the others.
func (s *Server) arrive(name string, costs []int64) (*arrival, error) {
	s.mu.Lock()
	at := s.stamp()
	if (s.seq+1)%sweepEvery == 0 && len(s.list) > 1 {
		s.release(at) // before the lookup, which must find the key it judges in the table
	}
	k := s.lookup(name)
	// The key's lock is taken before the order's is let go, so that the
	// key sees its requests in stamp order.
	k.mu.Lock()
	if costs != nil {
		if err := k.chk.Fits(at, costs); err != nil {
			k.mu.Unlock()
			s.mu.Unlock()
			return nil, unjudgeable(err)
		}
	}
	a := &arrival{k: k, at: at, seq: s.seq, costs: costs}
	s.seq++
	if !s.opt.Latency.IsZero() {
		a.latency = s.opt.Latency.Draw(s.rng)
	}
	s.mu.Unlock()
	defer k.mu.Unlock()
	a.overCap = s.opt.MaxInFlight > 0 && k.inFlight >= s.opt.MaxInFlight
	_ = k.chk.SettleDue(at) // the answers before at count for the request at at; stamps only grow
	if s.opt.Refusals == rule.RefusedFree && !s.opt.Record {
		a.broken = s.wouldBreak(k, a)
	}
	if !a.violates() || s.opt.Refusals == rule.RefusedCount || s.opt.Record {
		s.observe(k, a)
	}
	k.inFlight++
	s.rateHeaders(a)
	if s.opt.Provider != NoProvider {
		a.family = s.familyHeaders(a)
	}
	s.inFlight.Add(1)
	if a.violates() {
		s.violN.Add(1)
	} else {
		s.okN.Add(1)
	}
	return a, nil
}

// observe takes a's request into its key's checker, and counts it
// against the in-flight cap. k.mu must be held.
func (s *Server) observe(k *key, a *arrival) {
	k.broken = k.broken[:0]
	// Stamps only grow, costs were checked and fit; the ref is the log line.
	switch {
	case a.costs != nil && s.opt.Provider != NoProvider:
		a.pending, _ = k.chk.ObservePending(a.at, a.seq+2, a.costs)
	case a.costs != nil:
		_ = k.chk.ObserveCost(a.at, a.seq+2, a.costs)
	default:
		_ = k.chk.Observe(a.at, a.seq+2)
	}
	if len(k.broken) > 0 {
		a.broken = append([]brokenRule(nil), k.broken...)
	}
	if a.overCap {
		k.capViol++
	}
}

// wouldBreak returns the rules a request of costs at at would break, asked
// of k's checker without taking the request in: under rule.RefusedFree a
// refused request fills no window. k.mu must be held.
func (s *Server) wouldBreak(k *key, a *arrival) []brokenRule {
	var out []brokenRule
	at := a.at
	for i := range s.opt.Rules {
		cost := int64(1)
		if u := s.unitOf[i]; u >= 0 {
			cost = a.costs[u]
		}
		if k.chk.Next(i, at, cost) <= at {
			continue
		}
		v := checker.Violation{Send: checker.Send{At: at, Ref: a.seq + 2}, Count: k.chk.Load(i, at) + 1}
		if s.unitOf[i] >= 0 {
			v.Count, v.Cost, v.Units = 0, cost, k.chk.Load(i, at)+cost
		}
		_, v.WindowStart = k.chk.InWindow(i, at)
		out = append(out, brokenRule{i, v})
	}
	return out
}

// end stamps a request's answer, which frees its in-flight slot, and
// records it.
func (s *Server) end(a *arrival, status int) {
	if a.ended {
		return
	}
	a.ended = true
	s.mu.Lock()
	t := s.stamp()
	a.k.mu.Lock()
	s.mu.Unlock()
	a.k.inFlight--
	if a.pending != nil && a.actual != nil {
		// The answer's stamp follows every arrival its key has taken.
		_ = a.k.chk.Settle(a.pending, checker.Settlement{At: t, Actual: a.actual})
		a.settled = t
	} else {
		a.actual = nil
	}
	a.k.mu.Unlock()
	s.inFlight.Add(-1)
	s.log.put(a, status, t-a.at)
}

// ServeHTTP judges the request, unless it asks for the metrics, and
// answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.conns.serving(r, true)
	defer s.conns.serving(r, false)
	if s.opt.MetricsPath != "" && r.URL.Path == s.opt.MetricsPath {
		s.metrics.ServeHTTP(w, r)
		return
	}
	s.handlers.Add(1)
	defer s.handlers.Done()
	name := ""
	if s.opt.KeyHeader != "" {
		name = r.Header.Get(s.opt.KeyHeader)
	}
	chat, costs, err := s.requestCosts(r)
	if err == nil && !s.opt.Record {
		err = s.oversize(costs)
	}
	var a *arrival
	if err == nil {
		a, err = s.arrive(name, costs)
	}
	if err != nil {
		s.refuse(w, err)
		return
	}
	a.send, a.sent = parseSendTime(r.Header.Get(SendTimeHeader))
	a.id = r.Header.Get(RequestIDHeader)
	if len(s.opt.Rules) > 0 {
		h := w.Header()
		h["Ratelimit-Policy"] = s.policy
		if a.rateLimit != "" {
			h["Ratelimit"] = []string{a.rateLimit}
		}
		for _, kv := range a.family {
			h.Set(kv[0], kv[1])
		}
	}
	if a.violates() && !s.opt.Record {
		s.reject(w, a)
		return
	}
	if s.proxy != nil {
		s.forward(w, r, a)
		return
	}
	if a.latency > 0 {
		t := time.NewTimer(a.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
		case <-s.stopping:
		}
		t.Stop()
	}
	if chat != nil {
		a.answer = s.presetAnswer(a, nil)
		a.actual = s.usage(chat)
		s.end(a, http.StatusOK)
		s.complete(w, a, chat)
		return
	}
	s.end(a, s.opt.Status)
	w.WriteHeader(s.opt.Status)
	io.WriteString(w, s.opt.Body)
}

// requestCosts reads r's costs: from its body as the provider's request,
// under a preset, else where Options.Costs says.
func (s *Server) requestCosts(r *http.Request) (*chatRequest, []int64, error) {
	if s.opt.Provider != NoProvider {
		return s.readChat(r)
	}
	costs, err := s.readCosts(r)
	return nil, costs, err
}

// rejection is the JSON body of a 429.
type rejection struct {
	Error       string       `json:"error"`
	Line        int64        `json:"log_line"`
	At          int64        `json:"arrived_ns"`
	Violations  []windowJSON `json:"violations,omitempty"`
	MaxInFlight int          `json:"max_in_flight,omitempty"`
	RetryAfter  int64        `json:"retry_after_s"`
}

// windowJSON names the rule a request broke and the window it overfilled:
// the sends in [start, at] (both ends included), this one the last.
type windowJSON struct {
	Rule  string `json:"rule"`
	Limit int    `json:"limit"`
	Start int64  `json:"window_start_ns"`
	End   int64  `json:"window_end_ns"`
	Sends int64  `json:"sends_in_window"`
	// Unit, Cost and Units are set for a cost rule: the request's cost
	// and the units in the window, this request's included.
	Unit  string `json:"unit,omitempty"`
	Cost  int64  `json:"cost,omitempty"`
	Units int64  `json:"units_in_window,omitempty"`
	// Kind is the rule's kind other than sliding; Level the level a
	// bucket held.
	Kind  string `json:"kind,omitempty"`
	Level string `json:"bucket_level,omitempty"`
}

// reject answers a request that broke the contract: 429 at once.
func (s *Server) reject(w http.ResponseWriter, a *arrival) {
	if s.opt.Provider != NoProvider {
		s.rejectDialect(w, a)
		return
	}
	body := rejection{Error: "rate limit exceeded", Line: a.seq + 2, At: a.at, RetryAfter: a.retryAfter}
	for _, b := range a.broken {
		r := s.opt.Rules[b.rule]
		wj := windowJSON{
			Rule: r.String(), Limit: r.Limit,
			Start: b.v.WindowStart.At, End: a.at, Sends: b.v.Count,
			Unit: r.Unit, Cost: b.v.Cost, Units: b.v.Units, Level: b.v.Level,
		}
		if r.Kind != rule.Sliding {
			wj.Kind = r.Kind.String()
		}
		body.Violations = append(body.Violations, wj)
	}
	status := http.StatusTooManyRequests
	if a.overCap {
		body.MaxInFlight = s.opt.MaxInFlight
		if len(a.broken) == 0 {
			body.Error = "too many requests in flight"
		}
	}
	s.end(a, status)
	h := w.Header()
	h.Set("Retry-After", strconv.FormatInt(body.RetryAfter, 10))
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

type arrivalKey struct{}

// errUpstreamTimeout cuts a forwarded request whose response headers are
// later than Options.UpstreamTimeout.
var errUpstreamTimeout = errors.New("serve: no response from the upstream within the timeout")

// forward sends a's request upstream; past the timeout without response
// headers it is answered 504, so that no request holds the log back
// longer than that.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, a *arrival) {
	defer s.end(a, http.StatusBadGateway) // when the proxy answered nothing
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	a.timer = time.AfterFunc(s.opt.UpstreamTimeout, func() { cancel(errUpstreamTimeout) })
	defer a.timer.Stop()
	s.proxy.ServeHTTP(w, r.WithContext(context.WithValue(ctx, arrivalKey{}, a)))
}

// newProxy forwards to up, stamping each answer when the upstream's
// response headers arrive (or it fails), before the body is copied.
func (s *Server) newProxy(up *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.SetXForwarded()
		},
		ModifyResponse: func(resp *http.Response) error {
			a, ok := resp.Request.Context().Value(arrivalKey{}).(*arrival)
			if !ok {
				return nil
			}
			if !a.timer.Stop() {
				return errUpstreamTimeout
			}
			a.answer = answerHeaders(resp.Header)
			s.end(a, resp.StatusCode)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			status := http.StatusBadGateway
			if errors.Is(err, errUpstreamTimeout) || errors.Is(context.Cause(r.Context()), errUpstreamTimeout) {
				status, err = http.StatusGatewayTimeout, errUpstreamTimeout
			}
			if a, ok := r.Context().Value(arrivalKey{}).(*arrival); ok {
				s.end(a, status)
			}
			http.Error(w, "serve: upstream: "+err.Error(), status)
		},
	}
}
