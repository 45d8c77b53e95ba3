package redislimit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

func TestDialRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, url string
		cluster   []string
		want      string
	}{
		{"neither", "", nil, "no server URL"},
		{"both", "redis://127.0.0.1:1", []string{"127.0.0.1:1"}, "not both"},
		{"bad url", "http://x", nil, "redislimit:"},
		{"nobody there", "redis://127.0.0.1:1/0", nil, "cannot reach Redis at redis://127.0.0.1:1/0"},
	}
	for _, tc := range cases {
		c, err := Dial(ctx, tc.url, tc.cluster, time.Second)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Dial = %v, %v; want an error containing %q", tc.name, c, err, tc.want)
		}
	}
}

func TestDialRealServer(t *testing.T) {
	s := redistest.Start(t)
	c, err := Dial(context.Background(), "redis://"+s.Addr+"/0", nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := Reset(context.Background(), c, "k", []rule.Rule{{Limit: 1, Window: time.Second}}); err != nil {
		t.Fatal(err)
	}
}

// TestVirtualTimeAndReset: the Virtual source reads Options.Now, not the
// runtime; Reset empties the windows, so the same instant admits again.
func TestVirtualTimeAndReset(t *testing.T) {
	c, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	rules := []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 1, Window: time.Second}}
	server := epoch
	rt := &stepRT{t: epoch - int64(time.Hour)} // a skewed caller clock, ignored
	l, err := New(c, rt, rules, Options{Key: "v", TimeSource: Virtual, Now: func() int64 { return server }})
	if err != nil {
		t.Fatal(err)
	}
	if at, err := l.AcquireAt(ctx); err != nil || at != server {
		t.Fatalf("AcquireAt = %d, %v; want %d", at, err, server)
	}
	if wait, _, _, err := l.try(ctx, "again", false); err != nil || wait != time.Second {
		t.Fatalf("wait %v, %v; want 1s", wait, err)
	}
	if err := Reset(ctx, c, "v", rules); err != nil {
		t.Fatal(err)
	}
	if wait, _, _, err := l.try(ctx, "after-reset", false); err != nil || wait != 0 {
		t.Fatalf("after Reset: wait %v, %v; want 0", wait, err)
	}
	if s := l.Stats(); len(s.Records) != 2 || s.Records[0] != 2 || s.Records[1] != 2 {
		t.Fatalf("stats %+v: want two records for each of the two rules given", s)
	}
}
