package strategies

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// BenchmarkBooksBytes reports the heap a limiter's bookkeeping holds for
// 10/s, 500/min, 10000/day after n admissions at saturation: flat under
// the default policy, growing to the limits with exact logs.
//
//	go test -run '^$' -bench BooksBytes -benchtime 1x ./strategies/
func BenchmarkBooksBytes(b *testing.B) {
	rules, err := rule.ParseList("10/s,500/min,10000/day")
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"exact", "default-policy"} {
		for _, n := range []int{1_000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/admissions=%d", kind, n), func(b *testing.B) {
				var bytes uint64
				for range b.N {
					bytes = booksBytes(rules, kind == "exact", n)
				}
				b.ReportMetric(float64(bytes), "B/limiter")
			})
		}
	}
}

func booksBytes(rules []rule.Rule, exact bool, n int) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	books := make(Books, len(rules))
	for i, r := range rules {
		if exact {
			books[i] = NewSlidingLog(r)
		} else {
			books[i] = NewBook(r)
		}
	}
	now := int64(0)
	for range n {
		for w, _ := books.WaitTime(now); w > 0; w, _ = books.WaitTime(now) {
			now += int64(w)
		}
		books.Record(now)
		now += int64(time.Millisecond)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(books)
	return after.HeapAlloc - before.HeapAlloc
}
