package infer

import "strings"

type jsonReport struct {
	SchemaVersion int          `json:"schema_version"`
	Version       string       `json:"version"`
	File          string       `json:"file"`
	Calls         int          `json:"calls"`
	OtherStatuses int          `json:"other_statuses"`
	Keys          []jsonKeyOut `json:"keys"`
	BadHeaders    []jsonBad    `json:"malformed_headers,omitempty"`
}

type jsonKeyOut struct {
	Key          string         `json:"key"`
	Calls        int            `json:"calls"`
	Accepted     int            `json:"accepted"`
	Refused      int            `json:"refused"`
	FirstNs      int64          `json:"first_ns"`
	LastNs       int64          `json:"last_ns"`
	Verdict      string         `json:"verdict"` // "fits", "fits within the delay", "lower bounds only", "contradiction" "breaks accepted calls" or "leaves refusals unexplained"
	Reading      string         `json:"reading"`
	BothFit      bool           `json:"both_readings_fit"`
	Rules        string         `json:"rules"` // for --rules
	Smallest     bool           `json:"smallest"`
	Unproved     string         `json:"smallest_unproved,omitempty"`
	Broken       int            `json:"accepted_calls_broken,omitempty"`
	BrokenLine   int64          `json:"first_accepted_call_broken_line,omitempty"`
	Missed       int            `json:"refusals_left_unexplained,omitempty"`
	MissedLine   int64          `json:"first_refusal_left_unexplained_line,omitempty"`
	Contract     []jsonRule     `json:"contract"`
	OtherReading jsonReading    `json:"other_reading"`
	Unexplained  []jsonUnexpl   `json:"unexplained,omitempty"`
	UnexplainedN int            `json:"unexplained_total,omitempty"`
	Windows      []jsonWindow   `json:"windows"`
	BucketSteps  int64          `json:"bucket_steps"`
	Declared     *jsonDecl      `json:"declared,omitempty"`
	Headers      *jsonHeaderOut `json:"headers,omitempty"`
	Tolerance    *jsonTolerance `json:"tolerance,omitempty"`
}

type jsonDecl struct {
	Rules           string         `json:"rules"`
	Reading         string         `json:"reading"`
	Looser          bool           `json:"looser"`
	Allowed         int            `json:"refused_calls_it_allows"`
	AllowedLine     int64          `json:"first_refused_call_it_allows_line,omitempty"`
	Stricter        bool           `json:"stricter"`
	Refused         int            `json:"accepted_calls_it_refuses"`
	RefusedLine     int64          `json:"first_accepted_call_it_refuses_line,omitempty"`
	PerRule         []jsonDeclRule `json:"per_rule"`
	ConsistentRules string         `json:"consistent_rules,omitempty"`
}

type jsonDeclRule struct {
	Rule    string `json:"rule"`
	Kind    string `json:"kind"`
	Unit    string `json:"unit,omitempty"`
	Took    int    `json:"provider_allows_at_least"` // a bucket's burst
	Unused  int    `json:"left_unused"`
	Refuses int    `json:"accepted_calls_it_refuses"`
}

type jsonRule struct {
	Rule       string   `json:"rule"`
	WindowNs   int64    `json:"window_ns"`
	Kind       string   `json:"kind"`
	Unit       string   `json:"unit"`
	Min        int      `json:"min"`
	Max        *int     `json:"max"` // null: no upper bound
	Explains   int      `json:"explains"`
	MinPins    int      `json:"min_pinned_by"`
	Tightest   int64    `json:"tightest_accepted_line"`
	MaxPins    int      `json:"max_pinned_by"`
	Closest    int64    `json:"closest_refused_line"`
	Confidence float64  `json:"confidence"`
	AlsoFits   []string `json:"also_fits"`
	Burst      int      `json:"burst,omitempty"`
	RateMin    int64    `json:"rate_min_per_day,omitempty"`
	RateMax    int64    `json:"rate_max_per_day,omitempty"`
	RateOpen   bool     `json:"rate_open,omitempty"`
	Outer      bool     `json:"outer,omitempty"`
	Advice     string   `json:"advice,omitempty"`
}

type jsonReading struct {
	Reading string `json:"reading"`
	Fits    bool   `json:"fits"`
	Rules   string `json:"rules"`
}

type jsonUnexpl struct {
	Line     int64  `json:"line"`
	AtNs     int64  `json:"at_ns"`
	Window   string `json:"window"`
	Kind     string `json:"kind"`
	Before   int    `json:"before"`
	Tightest int64  `json:"tightest_accepted_line"`
	AtLeast  int    `json:"at_least"`
}

type jsonWindow struct {
	Window   string `json:"window"`
	WindowNs int64  `json:"window_ns"`
	Kind     string `json:"kind"`
	Unit     string `json:"unit"`
	Reading  string `json:"reading"`
	AtLeast  int    `json:"at_least"`
	Explains int    `json:"explains"`
	Steps    int64  `json:"steps"`
}

func jsonKey(key string, res *Result) jsonKeyOut {
	f := res.Fits[res.Best]
	o := res.Fits[1-res.Best]
	out := jsonKeyOut{
		Key: key, Calls: res.Sends, Accepted: res.Accepted, Refused: res.Refused, FirstNs: res.First, LastNs: res.Last,
		Verdict: "fits", Reading: f.Reading.String(), BothFit: res.BothFit, Rules: RulesText(f.Rules), Smallest: f.Smallest, Unproved: f.Unproved,
		OtherReading: jsonReading{Reading: o.Reading.String(), Fits: o.Fits, Rules: RulesText(o.Rules)},
		Contract:     []jsonRule{}, UnexplainedN: f.Unexplaineds, BucketSteps: res.BucketSteps,
		Broken: f.Broken, BrokenLine: f.BrokenLine, Missed: f.Missed, MissedLine: f.MissedLine,
	}
	switch {
	case res.Refused == 0:
		out.Verdict = "lower bounds only"
	case res.Tolerance.WithinDelay():
		out.Verdict = "fits within the delay"
	case !f.Fits:
		out.Verdict = "contradiction"
	case f.Broken > 0:
		out.Verdict = "breaks accepted calls"
	case f.Missed > 0:
		out.Verdict = "leaves refusals unexplained"
	}
	for _, r := range f.Rules {
		jr := jsonRule{
			Rule: r.Rule().String(), WindowNs: int64(r.Window), Kind: r.Kind.String(), Unit: r.Unit, Min: r.Min, Explains: r.Explains,
			MinPins: r.MinPins, Tightest: r.TightestLine, MaxPins: r.MaxPins, Closest: r.ClosestRefusedLine,
			Confidence: r.Confidence, AlsoFits: []string{}, Burst: r.Burst, RateMin: r.RateMin, RateMax: r.RateMax,
			RateOpen: r.RateOpen, Outer: r.Outer, Advice: r.Advice(),
		}
		if r.Max > 0 {
			jr.Max = &r.Max
		}
		for _, a := range r.AlsoFits {
			jr.AlsoFits = append(jr.AlsoFits, a.String())
		}
		out.Contract = append(out.Contract, jr)
	}
	for _, u := range f.Unexplained {
		out.Unexplained = append(out.Unexplained, jsonUnexpl{
			Line: u.Line, AtNs: u.At, Window: u.Window.String(), Kind: u.Kind.String(),
			Before: u.Before, Tightest: u.TightestLine, AtLeast: u.AtLeast,
		})
	}
	for _, c := range res.Candidates {
		out.Windows = append(out.Windows, jsonWindow{
			Window: c.Window.String(), WindowNs: int64(c.Window), Kind: c.Kind.String(), Unit: c.Unit,
			Reading: c.Reading.String(), AtLeast: c.AtLeast, Explains: c.Explains, Steps: c.Steps,
		})
	}
	if res.Declared != nil {
		out.Declared = jsonDeclared(res)
	}
	out.Headers = jsonHeadersOf(res.Headers)
	out.Tolerance = jsonToleranceOf(res.Tolerance)
	return out
}

func jsonDeclared(res *Result) *jsonDecl {
	d := res.Declared
	out := &jsonDecl{Reading: d.Reading.String(), Looser: d.Looser(), Allowed: d.Allowed, AllowedLine: d.AllowedLine,
		Stricter: d.Refused > 0, Refused: d.Refused, RefusedLine: d.RefusedLine, PerRule: []jsonDeclRule{}}
	var rs []string
	for _, r := range d.Rules {
		rs = append(rs, r.Rule.String())
		out.PerRule = append(out.PerRule, jsonDeclRule{Rule: r.Rule.String(), Kind: r.Rule.Kind.String(), Unit: r.Rule.Unit,
			Took: r.AtLeast, Unused: r.Unused(), Refuses: r.Refused})
	}
	out.Rules = strings.Join(rs, ",")
	if f := res.Fits[res.Best]; f.Fits && res.Refused > 0 {
		out.ConsistentRules = RulesText(f.Rules)
	}
	return out
}
