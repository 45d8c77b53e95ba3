package adapter

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"time"
)

// DefaultTimeout is how long a run's answer may take when Config.Timeout
// is zero.
const DefaultTimeout = 10 * time.Second

// maxLine is the longest output line read.
const maxLine = 1 << 20

// Config says which program to start and how long to wait for it.
type Config struct {
	// Command is run by the system shell (sh -c; cmd /C on Windows).
	Command string
	// Dir is its working directory ("" the caller's).
	Dir string
	// Timeout bounds the hello and each run's whole answer; a program
	// that takes longer is killed (0: DefaultTimeout).
	Timeout time.Duration
	// Stderr receives the program's standard error (nil: discarded; the
	// end of it is quoted in errors either way).
	Stderr io.Writer
	// MaxProcs bounds the processes run at once (0: GOMAXPROCS).
	MaxProcs int
}

// Program is a user's adapter program: processes started on demand, each
// serving runs one after another. Its methods are safe for concurrent use.
type Program struct {
	cfg   Config
	names []string
	mu    sync.Mutex
	idle  []*proc
	live  []*proc
	slots chan struct{}
}

// Open starts the program once and reads its hello.
func Open(cfg Config) (*Program, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxProcs < 1 {
		cfg.MaxProcs = runtime.GOMAXPROCS(0)
	}
	p := &Program{cfg: cfg, slots: make(chan struct{}, cfg.MaxProcs)}
	pr, err := p.start()
	if err != nil {
		return nil, err
	}
	p.idle = append(p.idle, pr)
	return p, nil
}

// Strategies are the names the program's hello gave, in its order.
func (p *Program) Strategies() []string { return slices.Clone(p.names) }

// Command is the program's command line.
func (p *Program) Command() string { return p.cfg.Command }

// start starts one process and reads its hello.
func (p *Program) start() (*proc, error) {
	pr, err := startProc(p.cfg)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.live = append(p.live, pr)
	p.mu.Unlock()
	text, err := pr.next(time.Now().Add(p.cfg.Timeout))
	if err == nil {
		var names []string
		names, err = parseHello(text)
		switch {
		case err == nil && p.names == nil:
			p.names = names
		case err == nil && !slices.Equal(names, p.names):
			err = fmt.Errorf("the hello names %q; the first process named %q", names, p.names)
		}
	}
	if err != nil {
		pr.kill()
		return nil, pr.fail(err, text, nil)
	}
	return pr, nil
}

// Run sends r to an idle process (started when none is) and returns its
// checked answer; r.Run is set to the run's number in that process. A
// process that errs is killed and never used again.
func (p *Program) Run(r *Run) (*Answer, error) {
	if !slices.Contains(p.names, r.Strategy) {
		return nil, fmt.Errorf("adapter %q: no strategy %q (it offers %q)", p.cfg.Command, r.Strategy, p.names)
	}
	p.slots <- struct{}{}
	defer func() { <-p.slots }()
	p.mu.Lock()
	var pr *proc
	if n := len(p.idle); n > 0 {
		pr, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if pr == nil {
		var err error
		if pr, err = p.start(); err != nil {
			return nil, err
		}
	}
	ans, err := pr.run(r, p.cfg.Timeout)
	if err != nil {
		pr.kill()
		return nil, err
	}
	p.mu.Lock()
	p.idle = append(p.idle, pr)
	p.mu.Unlock()
	return ans, nil
}

// Close ends every process (a nil Program has none): their input is closed, and those that do not
// exit within the timeout are killed. The first failure is returned.
func (p *Program) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	live := p.live
	p.live, p.idle = nil, nil
	p.mu.Unlock()
	var first error
	for _, pr := range live {
		if err := pr.close(p.cfg.Timeout); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// proc is one running process of the program.
type proc struct {
	command string
	cmd     *exec.Cmd
	in      io.WriteCloser
	lines   chan lineRead
	lineNo  int
	last    string // the last line read
	runs    int64
	stderr  *tail
	waited  chan struct{}
	waitErr error
	once    sync.Once
}

type lineRead struct {
	text string
	err  error
}

func startProc(cfg Config) (*proc, error) {
	cmd := shellCommand(cfg.Command)
	cmd.Dir = cfg.Dir
	stderr := &tail{to: cfg.Stderr}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, &ExchangeError{Command: cfg.Command, Err: fmt.Errorf("cannot start: %w", err)}
	}
	return newProc(cfg.Command, cmd, in, out, stderr), nil
}

// newProc reads out, the output of cmd (nil in tests: nothing to wait
// for), from now on.
func newProc(command string, cmd *exec.Cmd, in io.WriteCloser, out io.Reader, stderr *tail) *proc {
	pr := &proc{command: command, cmd: cmd, in: in, lines: make(chan lineRead, 64), stderr: stderr,
		waited: make(chan struct{})}
	go pr.read(out)
	return pr
}

// read passes the output's lines to pr.lines, then its end.
func (pr *proc) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		pr.lines <- lineRead{text: sc.Text()}
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		err = fmt.Errorf("a line longer than %d bytes", maxLine)
	} else if err == nil {
		err = io.EOF
	}
	pr.lines <- lineRead{err: err}
	pr.once.Do(func() {
		if pr.cmd != nil {
			pr.waitErr = pr.cmd.Wait()
		}
		close(pr.waited)
	})
}

// next returns the next output line, or an error once the output ends or
// the deadline passes (the process is then killed).
func (pr *proc) next(deadline time.Time) (string, error) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case l := <-pr.lines:
		if l.err != nil {
			pr.lines <- l // every later read sees the end too
			return "", l.err
		}
		pr.lineNo++
		pr.last = l.text
		return l.text, nil
	case <-t.C:
		pr.kill()
		return "", errTimeout
	}
}

var errTimeout = errors.New("timed out")

// run writes r and reads its answer.
func (pr *proc) run(r *Run, timeout time.Duration) (*Answer, error) {
	pr.runs++
	r.Run = pr.runs
	msg, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	wrote := make(chan error, 1)
	go func() { _, err := pr.in.Write(append(msg, '\n')); wrote <- err }()
	ans := &Answer{Strategy: r.Strategy, Seed: r.Seed, Calls: make([]Result, len(r.Calls))}
	for {
		text, err := pr.next(deadline)
		if err == nil {
			var done bool
			done, err = accept(r, ans, text, pr.lineNo)
			if err == nil && done {
				return ans, nil
			}
		}
		if err != nil {
			if errors.Is(err, errTimeout) {
				err = fmt.Errorf("no complete answer within %v: killed it", timeout)
			}
			return nil, pr.fail(err, text, r)
		}
	}
}

// fail wraps err about the output line text (empty when no line was read
// or the output ended) as an *ExchangeError.
func (pr *proc) fail(err error, text string, r *Run) error {
	e := &ExchangeError{Command: pr.command, Line: pr.lineNo, Text: text, Err: err}
	if r != nil {
		e.Run, e.Seed = r.Run, r.Seed
	}
	if text == "" {
		e.Text, e.After = pr.last, pr.lineNo > 0
	}
	if errors.Is(err, io.EOF) {
		e.Err = fmt.Errorf("the output ended%s", pr.exitText())
	}
	return e
}

// exitText describes how the process ended and the end of its stderr.
func (pr *proc) exitText() string {
	select {
	case <-pr.waited:
	case <-time.After(2 * time.Second):
		return ""
	}
	s := ""
	if pr.waitErr != nil {
		s = fmt.Sprintf(" (%v)", pr.waitErr)
	}
	if t := pr.stderr.String(); t != "" {
		s += "; its standard error ends: " + quoteLine(t)
	}
	return s
}

func (pr *proc) kill() {
	if pr.cmd != nil {
		killTree(pr.cmd)
	}
}

// close closes the input and waits for the exit, killing the process
// when it outlives timeout.
func (pr *proc) close(timeout time.Duration) error {
	pr.in.Close()
	select {
	case <-pr.waited:
	case <-time.After(timeout):
		pr.kill()
		<-pr.waited
		return &ExchangeError{Command: pr.command, Line: pr.lineNo, Err: fmt.Errorf("did not exit within %v of its input closing: killed it", timeout)}
	}
	return nil
}
