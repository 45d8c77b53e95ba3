package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// Config is what `rlcheck serve` runs: a server, where it listens, where
// its log goes, how long it runs and how its verdict is reported.
type Config struct {
	Options
	// Listen is the address to listen on (default 127.0.0.1:8080);
	// Listener, when set, is used instead.
	Listen   string
	Listener net.Listener
	// LogPath is the request log; "" keeps it in a temporary file, removed
	// once the verdict is written.
	LogPath string
	// Duration stops the server after this long; 0 runs until ctx ends.
	Duration time.Duration
	// Judge checks the request log at the end; Report is how its verdict is
	// written to Out; ErrOut gets the address served once listening.
	Judge       Judge
	Report      report.Options
	Out, ErrOut io.Writer
}

// A Judge checks the request log, named name and read as
// LogCheckConfig(o, perKey) says, against o's contract exactly as `rlcheck check`
// does (the command passes logcheck.Run's verdict), so that serve's verdict
// and check's on its log always agree.
type Judge func(name string, log io.Reader, perKey bool, o Options) (*report.Result, error)

// DefaultListen is where Run listens when Config.Listen is empty: the
// loopback interface only.
const DefaultListen = "127.0.0.1:8080"

// shutdownGrace is how long the requests still waiting on the upstream at
// the end may take to be answered before their connections are closed
// (requests waiting out a drawn latency are answered at once).
const shutdownGrace = time.Second

// shutdown stops srv: the latency waits end at once, connections not
// serving a request (one still sending its headers, an idle one) are cut,
// and the requests still waiting on the upstream have shutdownGrace.
func (s *Server) shutdown(srv *http.Server) {
	s.stop()
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		srv.Close() // the requests still waiting see their context end
	}
	s.handlers.Wait()
}

// Run serves until ctx ends or Config.Duration has passed, then answers the
// requests in progress, closes the log and writes the verdict on it: the
// report of cfg.Judge on the log, which must agree with the verdicts given
// live. The result is nil when no request arrived.
func Run(ctx context.Context, cfg Config) (*report.Result, error) {
	if cfg.Judge == nil {
		return nil, errors.New("serve: Config.Judge is nil: give the check that judges the request log")
	}
	path, name := cfg.LogPath, cfg.LogPath
	if path == "" {
		f, err := os.CreateTemp("", "rlcheck-serve-*.csv")
		if err != nil {
			return nil, err
		}
		f.Close()
		path, name = f.Name(), "requests"
		defer os.Remove(path)
	}
	logFile, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cfg.Log = logFile
	s, err := New(cfg.Options)
	if err != nil {
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		addr := cfg.Listen
		if addr == "" {
			addr = DefaultListen
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, err
		}
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ConnState: s.conns.state, ConnContext: s.conns.context}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if cfg.ErrOut != nil {
		metrics := "no metrics"
		if cfg.MetricsPath != "" {
			metrics = "metrics at " + cfg.MetricsPath
		}
		fmt.Fprintf(cfg.ErrOut, "rlcheck serve: listening on http://%s (%s); recording to %s\n", ln.Addr(), metrics, path)
	}
	flush := time.NewTicker(time.Second)
	defer flush.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case err := <-served:
			return nil, err
		case <-flush.C:
			s.log.flush()
		}
	}
	s.shutdown(srv)
	if err := s.Close(); err != nil {
		return nil, fmt.Errorf("serve: writing %s: %w", path, err)
	}
	judged, _ := s.Requests()
	if judged == 0 {
		return s.reportNothing(cfg)
	}
	if cfg.ErrOut != nil {
		fmt.Fprintf(cfg.ErrOut, "rlcheck serve: stopped after %s (at most %d keys held at once); checking the log\n", plural(judged, "request"), s.PeakKeys())
	}
	if _, err := logFile.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	res, err := cfg.Judge(name, logFile, cfg.KeyHeader != "", cfg.Options)
	if err != nil {
		return nil, err
	}
	if live := s.Violations(); live != res.Violations() {
		return nil, fmt.Errorf("serve: %d violations judged live, %d in the log: a bug; please report it", live, res.Violations())
	}
	if n := s.unjudged.Load(); n > 0 {
		res.NotChecked = append(res.NotChecked, unjudgedNote(n))
	}
	if err := report.Write(cfg.Out, []*report.Result{res}, cfg.Report); err != nil {
		return res, err
	}
	return res, writeViews(logFile, cfg)
}

// writeViews adds the send view to the report when clients sent their send
// instants: after a text report, or on ErrOut after one meant for machines.
func writeViews(log io.ReadSeeker, cfg Config) error {
	if _, err := log.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if len(rule.Units(cfg.Rules)) > 0 {
		return nil // the views judge calls: cost rules have none
	}
	v, err := BothViews(log, cfg.Rules, cfg.Boundary, cfg.KeyHeader != "")
	if err != nil || v == nil {
		return err
	}
	out := cfg.Out
	if f := cfg.Report.Format; f != "" && f != "text" {
		out = cfg.ErrOut
	}
	if out == nil {
		return nil
	}
	return v.Write(out)
}

// reportNothing ends a run that judged no request: the reason in text,
// and for machines (JSON, JUnit, GitHub) a report of no sends that says it
// under not_checked, so that what reads the output still gets its format.
func (s *Server) reportNothing(cfg Config) (*report.Result, error) {
	if f := cfg.Report.Format; f == "" || f == "text" {
		fmt.Fprintln(cfg.Out, s.nothingJudged())
		return nil, nil
	}
	empty := checker.New(checker.Config{Rules: cfg.Rules, Boundary: cfg.Boundary}).Report()
	res := report.New(report.Result{Rules: cfg.Rules, Boundary: cfg.Boundary, MaxInFlight: cfg.MaxInFlight,
		NotChecked: []string{s.nothingJudged()}}, []report.Group{{Report: empty}})
	return res, report.Write(cfg.Out, []*report.Result{res}, cfg.Report)
}

// nothingJudged says why a run with no request judged has no report.
func (s *Server) nothingJudged() string {
	if n := s.unjudged.Load(); n > 0 {
		return "no requests judged: " + unjudgedNote(n)
	}
	return "no requests arrived"
}

// unjudgedNote says how many requests were refused 413 before judging.
// They are not in the log, so the verdict on it leaves them out.
func unjudgedNote(n int64) string {
	return plural(n, "request") + " answered 413 unjudged and unlogged: a cost no rule could ever admit, or one past what a window's sum holds in int64"
}
