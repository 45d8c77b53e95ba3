package main

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/buildinfo"
)

// The structs below mirror docs/json.md, table by table. Decoding every
// command's JSON into them with unknown fields disallowed keeps the page and
// the program in step: a field added to a report fails here until it is
// documented and mirrored.

type docHeader struct {
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"version"`
}

func (h docHeader) header() docHeader { return h }

type docCheck struct {
	docHeader
	docCheckBody
}

type docCheckPerFile struct {
	docHeader
	PerFile []docCheckBody `json:"per_file"`
}

type docCheckBody struct {
	Files []struct {
		Name         string `json:"name"`
		InputFormat  string `json:"input_format"`
		TimeColumn   string `json:"time_column"`
		Timestamps   string `json:"timestamps"`
		Lines        int64  `json:"lines"`
		Sends        int64  `json:"sends"`
		SkippedLines int64  `json:"skipped_lines"`
		SkippedFirst []struct {
			Line  int64  `json:"line"`
			Error string `json:"error"`
		} `json:"skipped_first"`
	} `json:"files"`
	Sends      int64  `json:"sends"`
	FirstNs    int64  `json:"first_ns"`
	LastNs     int64  `json:"last_ns"`
	Boundary   string `json:"boundary"`
	OutOfOrder struct {
		Lines int64 `json:"lines"`
		MaxNs int64 `json:"max_ns"`
	} `json:"out_of_order"`
	Rules      []docRuleReport `json:"rules"`
	InFlight   *docInFlight    `json:"in_flight"`
	NotChecked []string        `json:"not_checked"`
	Shard      *struct {
		FromNs       *int64 `json:"from_ns"`
		ToNs         *int64 `json:"to_ns"`
		LogStart     bool   `json:"log_start"`
		ContextSends int64  `json:"context_sends"`
		SendsAfterTo bool   `json:"sends_after_to"`
	} `json:"shard"`
	Keys []struct {
		Key        string          `json:"key"`
		Violations int64           `json:"violations"`
		Sends      int64           `json:"sends"`
		Rules      []docRuleReport `json:"rules"`
		InFlight   *docInFlight    `json:"in_flight"`
	} `json:"keys"`
	KeyCount   int   `json:"key_count"`
	KeysListed *int  `json:"keys_listed"`
	Violations int64 `json:"violations"`
}

type docRuleReport struct {
	Rule                  string         `json:"rule"`
	Limit                 int            `json:"limit"`
	Window                string         `json:"window"`
	WindowNs              int64          `json:"window_ns"`
	Violations            int64          `json:"violations"`
	KeysWithViolations    *int           `json:"keys_with_violations"`
	MaxInWindow           int64          `json:"max_in_window"`
	MaxInWindowLowerBound bool           `json:"max_in_window_is_lower_bound"`
	MaxWindowStart        *docPlace      `json:"max_window_start"`
	Usage                 *float64       `json:"usage"`
	FirstViolation        *docViolation  `json:"first_violation"`
	ViolationsListed      []docViolation `json:"violations_listed"`
}

type docPlace struct {
	AtNs int64  `json:"at_ns"`
	File string `json:"file"`
	Line int64  `json:"line"`
}

type docViolation struct {
	docPlace
	Key               string     `json:"key"`
	Index             int64      `json:"index"`
	WindowStart       docPlace   `json:"window_start"`
	Count             int64      `json:"count"`
	CountIsLowerBound bool       `json:"count_is_lower_bound"`
	Window            []docPlace `json:"window"`
}

type docInFlight struct {
	MaxInFlight     int       `json:"max_in_flight"`
	Violations      int64     `json:"violations"`
	Peak            int64     `json:"peak"`
	PeakAt          docPlace  `json:"peak_at"`
	FirstViolation  *docPlace `json:"first_violation"`
	InFlightAtFrom  int64     `json:"in_flight_at_from"`
	InFlightAfterTo []struct {
		StartNs int64 `json:"start_ns"`
		EndNs   int64 `json:"end_ns"`
	} `json:"in_flight_after_to"`
}

type docSimulate struct {
	docHeader
	Scenario   string `json:"scenario"`
	Seed       uint64 `json:"seed"`
	Runs       int    `json:"runs"`
	MarginNs   int64  `json:"margin_ns"`
	Strategies []struct {
		Name                     string  `json:"name"`
		Sends                    int     `json:"sends"`
		DurationNs               int64   `json:"duration_ns"`
		DurationSeconds          float64 `json:"duration_seconds"`
		Cancelled                int     `json:"cancelled"`
		Runs                     int     `json:"runs"`
		RunsWithViolations       *int    `json:"runs_with_violations"`
		RunsWithRecordViolations *int    `json:"runs_with_record_violations"`
		Rules                    []struct {
			Rule             string   `json:"rule"`
			Limit            int      `json:"limit"`
			Window           string   `json:"window"`
			Unit             string   `json:"unit"`
			Kind             string   `json:"kind"`
			Violations       int64    `json:"violations"`
			RecordViolations *int64   `json:"record_violations"`
			Leaked           int64    `json:"leaked"`
			ViolationsMean   *float64 `json:"violations_mean"`
			ViolationsP50    *int64   `json:"violations_p50"`
			ViolationsP95    *int64   `json:"violations_p95"`
			ViolationsMax    *int64   `json:"violations_max"`
			UsagePeak        float64  `json:"usage_peak"`
			UsageMean        float64  `json:"usage_mean"`
			FirstFullNs      *int64   `json:"first_full_ns"`
			WaitedNs         *int64   `json:"waited_ns"`
			FirstBoundNs     *int64   `json:"first_bound_ns"`
		} `json:"rules"`
		Binding     string `json:"binding"`
		BindingRule string `json:"binding_rule"`
	} `json:"strategies"`
}

type docMargins struct {
	docHeader
	Scenario     string `json:"scenario"`
	Seed         uint64 `json:"seed"`
	Runs         int    `json:"runs"`
	ResolutionNs int64  `json:"resolution_ns"`
	Strategies   []struct {
		Name            string  `json:"name"`
		ViolatingAtZero int     `json:"runs_violating_at_zero"`
		Found           bool    `json:"found"`
		MarginNs        int64   `json:"margin_ns"`
		BoundNs         int64   `json:"bound_ns"`
		BoundObserved   bool    `json:"bound_observed"`
		MarginsTried    int     `json:"margins_tried"`
		RunsSimulated   int     `json:"runs_simulated"`
		AtZero          docCost `json:"at_zero"`
		AtMargin        docCost `json:"at_margin"`
	} `json:"strategies"`
}

type docCost struct {
	DurationNs int64   `json:"duration_ns"`
	SendsMean  float64 `json:"sends_mean"`
}

type docSpread struct {
	N   int   `json:"n"`
	Min int64 `json:"min"`
	P50 int64 `json:"p50"`
	P95 int64 `json:"p95"`
	Max int64 `json:"max"`
}

type docRun struct {
	docHeader
	Scenario   string   `json:"scenario"`
	Speed      float64  `json:"speed"`
	MarginNs   int64    `json:"margin_ns"`
	Rules      []string `json:"rules"`
	Prediction struct {
		Seeds      int `json:"seeds"`
		Strategies []struct {
			Name               string `json:"name"`
			RunsWithViolations int    `json:"runs_with_violations"`
			Rules              []struct {
				P5   int64   `json:"p5"`
				P50  int64   `json:"p50"`
				P95  int64   `json:"p95"`
				Max  int64   `json:"max"`
				Mean float64 `json:"mean"`
			} `json:"rules"`
		} `json:"strategies"`
	} `json:"prediction"`
	Runs []struct {
		WallNs     int64 `json:"wall_ns"`
		Strategies []struct {
			Name        string `json:"name"`
			Sent        int    `json:"sent"`
			Cancelled   int    `json:"cancelled"`
			MaxInFlight int    `json:"max_in_flight"`
			DurationNs  int64  `json:"duration_ns"`
			Rules       []struct {
				Rule             string `json:"rule"`
				Violations       int64  `json:"violations"`
				MaxInWindow      int64  `json:"max_in_window"`
				WorstShortfallNs int64  `json:"worst_shortfall_ns"`
			} `json:"rules"`
			RecordViolations  []int64    `json:"record_violations"`
			TimerLatenessNs   docSpread  `json:"timer_lateness_ns"`
			RecordToSendGapNs *docSpread `json:"record_to_send_gap_ns"`
		} `json:"strategies"`
	} `json:"runs"`
	Broken []string `json:"broken"`
}

type docAuditSetting struct {
	Burst   int  `json:"burst"`
	Half    bool `json:"half"`
	Slack   *int `json:"slack"`
	PerRule []struct {
		Burst int `json:"burst"`
		Limit int `json:"limit"`
	} `json:"per_rule"`
	Order    []int  `json:"order"`
	MarginNs int64  `json:"margin_ns"`
	Go       string `json:"go"`
}

type docAuditRule struct {
	Rule        string `json:"rule"`
	Violations  int64  `json:"violations"`
	MaxInWindow int64  `json:"max_in_window"`
	Limit       int    `json:"limit"`
}

type docAuditWorkload struct {
	Workload           string         `json:"workload"`
	Runs               int            `json:"runs"`
	RunsWithViolations int            `json:"runs_with_violations"`
	SendsMean          int            `json:"sends_mean"`
	Refused            int            `json:"refused"`
	Rules              []docAuditRule `json:"rules"`
	ProviderKinds      []struct {
		Kind               string         `json:"kind"`
		RunsWithViolations int            `json:"runs_with_violations"`
		Rules              []docAuditRule `json:"rules"`
	} `json:"provider_kinds"`
}

type docAudit struct {
	docHeader
	Rules       []string `json:"rules"`
	Boundary    string   `json:"boundary"`
	Seed        uint64   `json:"seed"`
	Seeds       int      `json:"seeds"`
	VerifySeeds int      `json:"verify_seeds"`
	Lateness    string   `json:"lateness"`
	OpCost      string   `json:"op_cost"`
	KeptAs      []string `json:"kept_as"`
	Skipped     []struct {
		Name string `json:"name"`
		Why  string `json:"why"`
	} `json:"skipped"`
	Strategies []struct {
		Name          string             `json:"name"`
		Setting       docAuditSetting    `json:"setting"`
		Workloads     []docAuditWorkload `json:"workloads"`
		AnalyticWorst []int64            `json:"analytic_worst"`
		Tried         int                `json:"tried"`
		Refuted       int                `json:"refuted"`
		Rejected      string             `json:"rejected"`
		Safe          *struct {
			Setting   docAuditSetting    `json:"setting"`
			Workloads []docAuditWorkload `json:"workloads"`
			Verdicts  []struct {
				Rule          string `json:"rule"`
				MaxInWindow   int64  `json:"max_in_window"`
				AnalyticWorst int64  `json:"analytic_worst"`
				BoundBy       string `json:"bound_by"`
				Limit         int    `json:"limit"`
				Status        string `json:"status"`
			} `json:"verdicts"`
			Crowds []struct {
				Callers int   `json:"callers"`
				TookNs  int64 `json:"took_ns"`
			} `json:"crowds"`
			LongRun  float64 `json:"long_run"`
			RateKept float64 `json:"rate_kept"`
			Assumes  string  `json:"assumes"`
		} `json:"safe"`
	} `json:"strategies"`
}

// decodeStrict decodes data into v, failing on any field v does not have.
func decodeStrict(t *testing.T, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "%s", data)
	assert.False(t, dec.More(), "one document")
}

func TestJSONSchema(t *testing.T) {
	const (
		fleet1 = "../../testdata/fleet/host1.csv"
		fleet2 = "../../testdata/fleet/host2.csv.gz"
		seq    = "../../testdata/fixtures/asyncio-sequential.txt"
	)
	for _, tc := range []struct {
		name  string
		args  []string
		doc   func() any
		check func(t *testing.T, doc any)
	}{
		{"check per key, listed", []string{"check", "--rules", "2/1s,4/2s", "--key-col", "tenant", "--list", "1", fleet1, fleet2},
			func() any { return &docCheck{} }, func(t *testing.T, d any) {
				doc := d.(*docCheck)
				assert.Equal(t, 2, doc.KeyCount)
				require.NotNil(t, doc.Rules[0].FirstViolation)
				assert.Equal(t, int64(1767225600100000000), doc.Rules[0].FirstViolation.AtNs)
				assert.NotEmpty(t, doc.Keys[0].Rules[0].ViolationsListed[0].Window)
			}},
		{"check in flight", []string{"check", "--rules", "10/s", "--max-in-flight", "2", "--duration-col", "took_ms", "--duration-unit", "ms", fleet1, fleet2},
			func() any { return &docCheck{} }, func(t *testing.T, d any) {
				doc := d.(*docCheck)
				require.NotNil(t, doc.InFlight)
				assert.Equal(t, int64(5), doc.InFlight.Violations)
			}},
		{"check shard", []string{"check", "--rules", "5/1s,12/3s", "--from", "3000000000", "--to", "5000000000", "--log-start", seq},
			func() any { return &docCheck{} }, func(t *testing.T, d any) {
				doc := d.(*docCheck)
				require.NotNil(t, doc.Shard)
				assert.True(t, doc.Shard.LogStart)
				assert.Positive(t, doc.Shard.ContextSends)
				assert.True(t, doc.Shard.SendsAfterTo)
			}},
		{"check contract without end times", []string{"check", "--contract", "../../testdata/contracts/api.yaml", seq},
			func() any { return &docCheck{} }, func(t *testing.T, d any) {
				doc := d.(*docCheck)
				assert.Nil(t, doc.InFlight)
				require.Len(t, doc.NotChecked, 1)
				assert.Contains(t, doc.NotChecked[0], "in-flight cap")
			}},
		{"check per file", []string{"check", "--rules", "3/1s", "--per-file", fleet1, fleet2},
			func() any { return &docCheckPerFile{} }, func(t *testing.T, d any) {
				assert.Len(t, d.(*docCheckPerFile).PerFile, 2)
			}},
		{"simulate", []string{"simulate", "cancellation", "--strategies", "sequential,gated-rates-first"},
			func() any { return &docSimulate{} }, func(t *testing.T, d any) {
				doc := d.(*docSimulate)
				st := doc.Strategies[0]
				assert.Equal(t, 27, st.Cancelled)
				assert.Equal(t, int64(6), st.Rules[0].Leaked)
				assert.InDelta(t, float64(st.DurationNs)/1e9, st.DurationSeconds, 1e-9)
			}},
		{"simulate runs", []string{"simulate", "seed", "--runs", "3", "--strategies", "sequential"},
			func() any { return &docSimulate{} }, func(t *testing.T, d any) {
				doc := d.(*docSimulate)
				assert.Equal(t, 3, doc.Runs)
				assert.Equal(t, int64(7005927470), doc.Strategies[0].DurationNs)
				require.NotNil(t, doc.Strategies[0].Rules[0].ViolationsMax)
			}},
		{"simulate send path", []string{"simulate", "provider-edge", "--runs", "3", "--strategies", "combined", "--margin", "1ms"},
			func() any { return &docSimulate{} }, func(t *testing.T, d any) {
				doc := d.(*docSimulate)
				assert.Equal(t, int64(1e6), doc.MarginNs)
				st := doc.Strategies[0]
				require.NotNil(t, st.RunsWithRecordViolations)
				assert.Zero(t, *st.RunsWithRecordViolations, "combined keeps its own records")
				require.NotNil(t, st.Rules[0].RecordViolations)
			}},
		{"simulate find-margin", []string{"simulate", "provider-edge", "--runs", "3", "--strategies", "combined", "--find-margin=1ms"},
			func() any { return &docMargins{} }, func(t *testing.T, d any) {
				doc := d.(*docMargins)
				assert.Equal(t, int64(1e6), doc.ResolutionNs)
				st := doc.Strategies[0]
				assert.True(t, st.Found)
				assert.LessOrEqual(t, st.MarginNs, st.BoundNs, "the margin found is within the max-min bound")
			}},
		{"run", []string{"run", "seed", "--strategies", "sequential,redis", "--speed", "20", "--seeds", "2", "--margin", "1ms"},
			func() any { return &docRun{} }, func(t *testing.T, d any) {
				doc := d.(*docRun)
				assert.Equal(t, int64(1e6), doc.MarginNs)
				require.Len(t, doc.Runs, 1)
				assert.NotNil(t, doc.Runs[0].Strategies[1].RecordToSendGapNs)
			}},
		{"infer", []string{"infer", "../../testdata/infer/calls.csv"},
			func() any { return &docInfer{} }, func(t *testing.T, d any) {
				doc := d.(*docInfer)
				require.Len(t, doc.Keys, 1)
				assert.Equal(t, "7/1s,40/10s", doc.Keys[0].Rules)
				assert.Len(t, doc.Keys[0].Windows, 68, "17 windows, 2 kinds, 2 readings")
			}},
		{"infer declared", []string{"infer", "--cost", "tokens", "--rules", "6/1s,1200 tokens/10s,20 tokens/1s burst 40", "../../testdata/infer/costs.csv"},
			func() any { return &docInfer{} }, func(t *testing.T, d any) {
				doc := d.(*docInfer)
				require.Len(t, doc.Keys, 1)
				decl := doc.Keys[0].Declared
				require.NotNil(t, decl)
				require.Len(t, decl.PerRule, 3)
				assert.Equal(t, "tokens", decl.PerRule[1].Unit)
				assert.Equal(t, "bucket", decl.PerRule[2].Kind)
				assert.True(t, decl.Stricter, "a burst of 40 tokens refuses calls the provider took")
				assert.Greater(t, decl.PerRule[2].AtLeast, 40)
			}},
		{"infer tolerance", []string{"infer", "../../testdata/infer/delayed.csv"},
			func() any { return &docInfer{} }, func(t *testing.T, d any) {
				doc := d.(*docInfer)
				require.Len(t, doc.Keys, 1)
				tol := doc.Keys[0].Tolerance
				require.NotNil(t, tol, "no contract fits the delayed log exactly")
				assert.True(t, tol.Fits)
				assert.False(t, tol.Simpler, "no contract fits exactly: the tolerance is not beside one")
				assert.Equal(t, "7/1s,40/10s fixed", tol.Rules)
				assert.Zero(t, tol.BucketsNs, "no bucket: no buckets' ranges")
				assert.Zero(t, tol.DelayNs, "no delay given")
			}},
		{"infer delay", []string{"infer", "--delay", "5ms", "../../testdata/infer/delayed.csv"},
			func() any { return &docInfer{} }, func(t *testing.T, d any) {
				doc := d.(*docInfer)
				require.Len(t, doc.Keys, 1)
				tol := doc.Keys[0].Tolerance
				require.NotNil(t, tol, "a delay given: the fit within it")
				assert.Equal(t, int64(5e6), tol.DelayNs)
				assert.Equal(t, "fits within the delay", doc.Keys[0].Verdict, "the verdict agrees with the exit status")
				assert.True(t, tol.Fits)
				assert.LessOrEqual(t, tol.SpreadNs, tol.DelayNs)
				assert.Equal(t, "7/1s,40/10s fixed", tol.Rules)
			}},
		{"audit", []string{"audit", "--rules", "5/1s", "--seeds", "1", "--verify", "1", "--margin", "2ms"},
			func() any { return &docAudit{} }, func(t *testing.T, d any) {
				doc := d.(*docAudit)
				assert.Equal(t, int64(2e6), doc.Strategies[0].Setting.MarginNs)
				for _, st := range doc.Strategies {
					assert.Equal(t, st.Name == "uber-ratelimit", st.Setting.Slack != nil, "%s: slack only where the design has one", st.Name)
					if st.Safe != nil {
						require.Len(t, st.Safe.Crowds, 2, st.Name)
						assert.Equal(t, 15, st.Safe.Crowds[1].Callers, st.Name)
						assert.Contains(t, st.Safe.Assumes, "delay ≤", st.Name)
					}
				}
			}},
		{"audit-fixed", []string{"audit", "--rules", "10/s,1000/1h burst 50", "--seeds", "1", "--verify", "1", "--strategies", "xrate-reserve-all"},
			func() any { return &docAudit{} }, func(t *testing.T, d any) {
				doc := d.(*docAudit)
				require.Len(t, doc.KeptAs, 1)
				require.NotNil(t, doc.Strategies[0].Safe, "a suggestion for a bucket rule")
				assert.NotEmpty(t, doc.Strategies[0].Safe.Setting.PerRule)
			}},
		{"audit-kinds", []string{"audit", "--rules", "5/1s", "--seeds", "1", "--no-search", "--provider-kinds", "--strategies", "redis-fixed-window"},
			func() any { return &docAudit{} }, func(t *testing.T, d any) {
				doc := d.(*docAudit)
				assert.Equal(t, "fixed", doc.Strategies[0].Workloads[0].ProviderKinds[1].Kind)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", append(tc.args, "--format", "json")...)
			require.Contains(t, []int{exitOK, exitViolations}, code, errOut)
			doc := tc.doc()
			decodeStrict(t, out, doc)
			h := doc.(interface{ header() docHeader }).header()
			assert.Equal(t, docHeader{SchemaVersion: 1, Version: buildinfo.Version()}, h)
			tc.check(t, doc)
		})
	}
}

// TestJSONDocsNameEveryField: every field of the mirror structs is named,
// in backquotes, in docs/json.md.
func TestJSONDocsNameEveryField(t *testing.T) {
	page, err := os.ReadFile("../../docs/json.md")
	require.NoError(t, err)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		for i := range ty.NumField() {
			f := ty.Field(i)
			if tag := f.Tag.Get("json"); tag != "" {
				assert.True(t, bytes.Contains(page, []byte("`"+tag+"`")), "docs/json.md does not name %q (%s.%s)", tag, ty.Name(), f.Name)
			}
			walk(f.Type)
		}
	}
	for _, v := range []any{docCheck{}, docCheckPerFile{}, docSimulate{}, docMargins{}, docRun{}, docAudit{}, docInfer{}} {
		walk(reflect.TypeOf(v))
	}
}
