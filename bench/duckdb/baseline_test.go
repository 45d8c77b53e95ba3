package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// bruteViolations counts, straight from the definition, the sends that find
// at least r.Limit earlier sends in (t - W, t]; ties keep their sorted order.
func bruteViolations(sorted []int64, r rule.Rule) int64 {
	var n int64
	for i, t := range sorted {
		inWindow := 0
		for _, u := range sorted[:i] {
			if t-u < int64(r.Window) {
				inWindow++
			}
		}
		if inWindow >= r.Limit {
			n++
		}
	}
	return n
}

// writeCSV writes the times shuffled, so that only ORDER BY puts them in order.
func writeCSV(t *testing.T, times []int64, rng *rand.Rand) string {
	t.Helper()
	shuffled := slices.Clone(times)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var buf bytes.Buffer
	buf.WriteString("ts_ns,key\n")
	for i, ts := range shuffled {
		fmt.Fprintf(&buf, "%d,k%d\n", ts, i%3)
	}
	path := filepath.Join(t.TempDir(), "sends.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// randomTimes mixes ties, gaps of exactly one window and epoch-sized values
// beyond float64's exact range, the cases a float or closed-window query gets wrong.
func randomTimes(rng *rand.Rand, n int, window time.Duration) []int64 {
	times := make([]int64, n)
	t := int64(1767225600_000_000_007)
	for i := range times {
		switch rng.IntN(6) {
		case 0: // tie with the previous send
		case 1:
			t += int64(window)
		case 2:
			t += int64(window) - 1
		default:
			t += rng.Int64N(int64(window) / 2)
		}
		times[i] = t
	}
	return times
}

func TestViolationsMatchBruteForce(t *testing.T) {
	ctx := context.Background()
	rules := []rule.Rule{
		{Limit: 1, Window: time.Second},
		{Limit: 3, Window: time.Second},
		{Limit: 5, Window: 3 * time.Second},
		{Limit: 12, Window: 10 * time.Second},
		{Limit: 5000, Window: time.Hour}, // more than the rows: no lag exists
	}
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 7))
		times := randomTimes(rng, 1500, time.Second)
		path := writeCSV(t, times, rng)
		b, err := Open(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := b.Load(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if rows != int64(len(times)) {
			t.Errorf("seed %d: loaded %d rows, want %d", seed, rows, len(times))
		}
		together, err := b.ViolationsTogether(ctx, rules)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rules {
			got, err := b.Violations(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteViolations(times, r)
			if got != want {
				t.Errorf("seed %d, rule %s: duckdb counts %d, brute force %d", seed, r, got, want)
			}
			if together[i] != want {
				t.Errorf("seed %d, rule %s: one query counts %d, brute force %d", seed, r, together[i], want)
			}
		}
		b.Close()
	}
}

func TestRunPrintsOneCountPerRule(t *testing.T) {
	// Six sends at the same instant: 5/1s sees the sixth as its one violation.
	var lines []string
	for range 6 {
		lines = append(lines, "1767225600000000000,k1")
	}
	path := filepath.Join(t.TempDir(), "tie.csv")
	if err := os.WriteFile(path, []byte("ts_ns,key\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-csv", path, "-rules", "5/1s,2/s", "-threads", "1"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	for _, want := range []string{"threads 1 (set by -threads)", "loaded 6 rows", "5/1s: 1 violations", "2/1s: 4 violations"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunOneQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pair.csv")
	// Two sends exactly one second apart break 1/1s only when both ends count.
	if err := os.WriteFile(path, []byte("ts_ns,key\n1000000000,a\n2000000000,a\n2000000001,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-csv", path, "-rules", "1/1s,2/2s", "-one-query"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	for _, want := range []string{"(DuckDB's default)", "1/1s: 1 violations", "2/2s: 1 violations", "one query for 2 rules"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-csv", "x.csv", "extra"},
		{"-csv", "x.csv", "-rules", "5 per second"},
		{"-csv", filepath.Join(t.TempDir(), "missing.csv")},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
