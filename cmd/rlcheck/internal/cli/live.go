package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
	"github.com/rlcheck/rlcheck/watch"
	"github.com/rlcheck/rlcheck/workload"
)

// ServeFlags are the flags of rlcheck serve.
type ServeFlags struct {
	Rules                          RuleFlags
	cfg                            serve.Config
	latency, onViolation, upstream string
	format                         Format
	provider, completion, refused  string
	costs                          []string
}

// Add registers the flags on fs.
func (f *ServeFlags) Add(fs *pflag.FlagSet) {
	f.Rules.Add(fs)
	c := &f.cfg
	fs.StringVar(&c.Listen, "listen", serve.DefaultListen, "address to listen on")
	fs.IntVar(&c.MaxInFlight, "max-in-flight", 0, "cap on requests in flight, from arrival to answer (default: the contract's)")
	fs.StringVar(&c.KeyHeader, "key-header", "", "request header that splits the contract per key, e.g. X-API-Key")
	fs.StringVar(&f.latency, "latency", "0", `answer latency: "80ms", "uniform(50ms, 100ms)", "exponential(80ms)" or "lognormal(80ms, 0.5)"`)
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the latency draws")
	fs.IntVar(&c.Status, "status", 200, "status of an answer within the contract")
	fs.StringVar(&c.Body, "body", "", "body of an answer within the contract")
	fs.StringVar(&f.onViolation, "on-violation", "reject", "reject (429) or record (answer as usual; judge at the end)")
	fs.StringVar(&c.LogPath, "log", "", "request log, CSV ts_ns,key,status,duration_ns,send_ns,request_id (with --upstream, then the upstream's rate-limit headers; default: a temporary file)")
	fs.StringVar(&c.MetricsPath, "metrics-path", "/metrics", "path of the Prometheus metrics, not judged")
	fs.DurationVar(&c.Duration, "duration", 0, "stop after this long (default: at SIGINT or SIGTERM)")
	fs.StringVar(&f.upstream, "upstream", "", "forward the requests the contract allows to this API, as a recording proxy")
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", serve.DefaultUpstreamTimeout, "answer 504 (and log it) when the upstream sends no response headers within this long")
	fs.IntVar(&c.MetricsKeys, "metrics-keys", metrics.DefaultMaxKeys, `keys with metric series of their own, the first seen; later keys are summed up under key="(other keys)" (-1: none)`)
	f.format.Register(fs, "text", "", ReportFormats...)
	fs.StringArrayVar(&f.costs, "cost", nil, "where a request carries a unit's cost: UNIT=HEADER (tokens=X-Tokens) or UNIT=body:FIELD (tokens=body:max_tokens, a JSON body field)")
	RegisterKeys(fs, &c.Report.MaxKeys)
	fs.StringVar(&f.provider, "provider", "", "answer as this provider's API: "+strings.Join(serve.Providers(), ", ")+" (costs from the request body: the prompt at 4 characters a token, plus max_tokens)")
	fs.StringVar(&f.completion, "completion-share", "1", "with --provider, the completion's size as a share of max_tokens, 0.001 to 10")
	fs.StringVar(&f.refused, "refused", "count", "requests answered 429: count (they fill every later window, as OpenAI documents) or free (they take nothing; the verdict reads the log's status)")
}

// Config validates the flags set on fs and returns what serve.Run takes.
func (f *ServeFlags) Config(fs *pflag.FlagSet) (serve.Config, error) {
	cfg := f.cfg
	c, err := f.Rules.Load()
	if errors.Is(err, ErrNoRules) && fs.Changed("max-in-flight") && cfg.MaxInFlight > 0 {
		err = nil // serve's own --max-in-flight is a contract: a recording proxy needs no rule
	}
	if errors.Is(err, ErrNoRules) && f.provider != "" {
		return cfg, presetNoRules(f.provider)
	}
	if err != nil {
		return cfg, err
	}
	if err := f.dialect(&cfg, fs); err != nil {
		return cfg, err
	}
	if cfg.Provider == serve.NoProvider {
		if cfg.Costs, err = ServeCostSources(c.Rules, f.costs); err != nil {
			return cfg, err
		}
	}
	cfg.Rules, cfg.Boundary, cfg.Report.Format = c.Rules, c.Boundary, f.format.String()
	cfg.Judge = JudgeServeLog
	if c.Read.Refused != "" && !fs.Changed("refused") {
		f.refused = c.Read.Refused
	}
	if cfg.Refusals, err = rule.ParseRefusals(f.refused); err != nil {
		return cfg, fmt.Errorf("--refused %q: want count (refused requests fill every later window) or free (they take nothing)", f.refused)
	}
	if !fs.Changed("max-in-flight") {
		cfg.MaxInFlight = c.MaxInFlight
	}
	if cfg.Latency, err = workload.ParseDist(f.latency); err != nil {
		return cfg, err
	}
	if _, err := f.format.Resolve(); err != nil {
		return cfg, err
	}
	if err := OneOf("--on-violation", f.onViolation, "reject", "record"); err != nil {
		return cfg, err
	}
	cfg.Record = f.onViolation == "record"
	if cfg.UpstreamTimeout <= 0 {
		return cfg, fmt.Errorf("--upstream-timeout %v: want more than 0", cfg.UpstreamTimeout)
	}
	if f.upstream != "" {
		if cfg.Upstream, err = url.Parse(f.upstream); err != nil || cfg.Upstream.Host == "" {
			return cfg, fmt.Errorf("--upstream %q: want an absolute URL", f.upstream)
		}
	}
	return cfg, nil
}

// presetNoRules is the error for a preset given without rules: a preset
// answers in the provider's dialect, and the limits are the account's,
// which no preset can know.
func presetNoRules(provider string) error {
	example := `--rules "500/1m, 30000 tokens/1m"`
	if p, err := serve.ParseProvider(provider); err == nil && p == serve.Anthropic {
		example = `--rules "50/1m, 30000 input_tokens/1m, 8000 output_tokens/1m"`
	}
	return fmt.Errorf("no rules: --provider %s answers in its dialect, the limits are your account's (its limits page lists them); give them, such as %s, or --contract FILE", provider, example)
}

// dialect reads --provider and --completion-share.
func (f *ServeFlags) dialect(cfg *serve.Config, fs *pflag.FlagSet) error {
	if f.provider == "" {
		if fs.Changed("completion-share") {
			return errors.New("--completion-share goes with --provider")
		}
		return nil
	}
	p, err := serve.ParseProvider(f.provider)
	if err != nil {
		return fmt.Errorf("--provider %q: want %s", f.provider, strings.Join(serve.Providers(), ", "))
	}
	if len(f.costs) > 0 {
		return fmt.Errorf("--cost with --provider %s: the preset reads the costs from the request body", p)
	}
	share, err := strconv.ParseFloat(strings.TrimSpace(f.completion), 64)
	permille := int(math.Round(share * 1000))
	if err != nil || permille < 1 || permille > serve.MaxCompletionPermille {
		return fmt.Errorf("--completion-share %q: want a share of max_tokens from 0.001 to %d", f.completion, serve.MaxCompletionPermille/1000)
	}
	cfg.Provider, cfg.CompletionPermille = p, permille
	return nil
}

// WatchFlags are the flags of rlcheck watch.
type WatchFlags struct {
	Rules   RuleFlags
	cfg     watch.Config
	read    ReadFlags
	format  Format
	costs   []string
	settled SettledFlags
}

// Add registers the flags on fs.
func (f *WatchFlags) Add(fs *pflag.FlagSet) {
	f.Rules.Add(fs)
	c := &f.cfg
	f.read.AddLayout(fs, "auto, plain, csv, jsonl, nginx or apache")
	fs.StringArrayVar(&f.costs, "cost", nil, "read a unit's cost from this CSV column or JSON field: UNIT=NAME (default: the column or field named as the unit)")
	f.settled.Add(fs)
	f.format.Register(fs, "text", "json: one violation a line", "text", "json")
	fs.DurationVar(&c.Poll, "poll", 0, "how often the files are looked at (default 100ms)")
	fs.StringVar(&c.Listen, "listen", "", "serve Prometheus metrics on this address, e.g. 127.0.0.1:9100")
	fs.StringVar(&c.MetricsPath, "metrics-path", "/metrics", "path of the metrics")
	fs.IntVar(&c.MetricsKeys, "metrics-keys", metrics.DefaultMaxKeys, `keys with metric series of their own, the first seen; later keys are summed up under key="(other keys)" (-1: none)`)
}

// Config validates the flags and returns what watch.Run takes for paths.
func (f *WatchFlags) Config(paths []string) (watch.Config, error) {
	cfg := f.cfg
	c, err := f.Rules.Load()
	if err != nil {
		return cfg, err
	}
	if len(c.Rules) == 0 {
		return cfg, errors.New("watch checks rates: give at least one rule")
	}
	if cfg.Read, err = f.read.Options(); err != nil {
		return cfg, err
	}
	if cfg.Read.Costs, err = CostSources(c.Rules, f.costs); err != nil {
		return cfg, err
	}
	if err = f.settled.Apply(&cfg.Read); err != nil {
		return cfg, err
	}
	if _, err := f.format.Resolve(); err != nil {
		return cfg, err
	}
	if cfg.Poll < 0 {
		return cfg, fmt.Errorf("--poll %v: want more than 0", cfg.Poll)
	}
	cfg.Rules, cfg.Boundary, cfg.Paths, cfg.JSON = c.Rules, c.Boundary, paths, f.format.String() == "json"
	return cfg, nil
}

// JudgeServeLog is serve's Judge: `rlcheck check` on the request log.
func JudgeServeLog(name string, log io.Reader, perKey bool, o serve.Options) (*report.Result, error) {
	read, refusals := serve.LogCheckConfig(o, perKey)
	return logcheck.Run([]logcheck.Input{{Name: name, R: log}}, logcheck.Config{
		Rules: o.Rules, Boundary: o.Boundary, MaxInFlight: o.MaxInFlight, Read: read, Refusals: refusals,
	})
}
