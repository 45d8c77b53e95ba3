// Command tradeoff measures ways of keeping a rule on one scenario:
// violations and sends from the simulator, against the exact log's sends,
// and the bytes one limiter's bookkeeping holds after the scenario's
// arrivals (heap in use, measured). It prints a Markdown table and draws
// the chart of docs/windows.md.
//
//	go run ./scripts/tradeoff -scenario long-window -out docs/img/tradeoff.svg
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/time/rate"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/plots"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// way is one way of keeping the rules: a strategy to simulate and the
// bookkeeping whose bytes are measured (nil books: rate limiters).
type way struct {
	label string
	st    catalog.Strategy
	books func([]rule.Rule) strategies.Books
}

func booksStrategy(name string, mk func(rule.Rule) strategies.Book) way {
	books := func(rs []rule.Rule) strategies.Books {
		b := make(strategies.Books, len(rs))
		for i, r := range rs {
			b[i] = mk(r)
		}
		return b
	}
	return way{label: name, books: books, st: catalog.Strategy{Name: name, New: func(e catalog.Env) (strategies.Limiter, error) {
		return strategies.NewCombinedBooks(e.Runtime, books(e.Rules)...), nil
	}}}
}

func xrate(label string, burst int) way {
	st, _ := catalog.LibStrategy(catalog.XRateReserveAll, libs.Config{Burst: burst})
	st.Name = label
	return way{label: label, st: st}
}

func main() {
	name := flag.String("scenario", "long-window", "shipped scenario")
	out := flag.String("out", "", "chart to write (.svg or .png)")
	flag.Parse()
	s, err := scenarios.Shipped(*name)
	if err != nil {
		fail(err)
	}
	ways := []way{booksStrategy("exact log", func(r rule.Rule) strategies.Book { return strategies.NewSlidingLog(r) })}
	for _, k := range []int{4, 16, 64, 256} {
		ways = append(ways, booksStrategy(fmt.Sprintf("bucketed k=%d", k), func(r rule.Rule) strategies.Book { return strategies.NewBucketWindow(r, k) }))
	}
	ways = append(ways,
		booksStrategy("sliding-window counter", func(r rule.Rule) strategies.Book { return strategies.NewWindowCounter(r) }),
		booksStrategy("fixed window", func(r rule.Rule) strategies.Book { return strategies.NewFixedWindow(r) }),
		xrate("token bucket, burst 1", 1),
		xrate("token bucket, burst N", 0),
	)
	arrivals := s.ArrivalTimes(s.Seed)
	var points []plots.TradeOffPoint
	var exactSends int
	fmt.Printf("scenario %s, seed %d, rules %v\n\n", s.Name, s.Seed, s.Rules)
	fmt.Println("| keeping | sends | of the exact log's | violations | bytes per limiter |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	for _, w := range ways {
		res, err := simulate.RunStrategy(&s.Scenario, w.st, s.Seed, simulate.Options{})
		if err != nil {
			fail(err)
		}
		if exactSends == 0 {
			exactSends = len(res.Sends)
		}
		bytes := rateBytes(s.Rules)
		if w.books != nil {
			// The least of five runs: the heap also holds whatever else the
			// runtime allocated meanwhile.
			bytes = booksBytes(func() strategies.Books { return w.books(s.Rules) }, arrivals)
			for range 4 {
				bytes = min(bytes, booksBytes(func() strategies.Books { return w.books(s.Rules) }, arrivals))
			}
		}
		pt := plots.TradeOffPoint{Name: w.label, Bytes: float64(bytes), Utilisation: float64(len(res.Sends)) / float64(exactSends), Violations: res.Violations()}
		points = append(points, pt)
		fmt.Printf("| %s | %d | %.2f%% | %d | %d |\n", w.label, len(res.Sends), 100*pt.Utilisation, pt.Violations, bytes)
	}
	if *out != "" {
		rules := make([]string, len(s.Rules))
		for i, r := range s.Rules {
			rules[i] = r.String()
		}
		if err := plots.TradeOff(*out, fmt.Sprintf("scenario %s (%s), seed %d · go run ./scripts/tradeoff", s.Name, strings.Join(rules, ", "), s.Seed), points); err != nil {
			fail(err)
		}
	}
}

// booksBytes is the heap the books hold after admitting, greedily, a call
// at each arrival.
func booksBytes(mk func() strategies.Books, arrivals []int64) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b := mk()
	var now int64
	for _, a := range arrivals {
		now = max(now, a)
		for w, _ := b.WaitTime(now); w > 0; w, _ = b.WaitTime(now) {
			now += int64(w)
		}
		b.Record(now)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(b)
	return after.HeapAlloc - before.HeapAlloc
}

// rateBytes is the heap of one x/time/rate limiter per rule, averaged over
// a thousand.
func rateBytes(rs []rule.Rule) uint64 {
	const n = 1000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := make([][]*rate.Limiter, n)
	for i := range keep {
		for _, r := range rs {
			keep[i] = append(keep[i], libs.NewRateLimiter(r, libs.Config{}))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return (after.HeapAlloc - before.HeapAlloc) / n
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tradeoff:", err)
	os.Exit(1)
}
