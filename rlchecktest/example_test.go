package rlchecktest_test

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
)

// printTB stands in for the *testing.T a real test passes.
type printTB struct{}

func (printTB) Helper()                           {}
func (printTB) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// A log of sends taken every 300 ms keeps 5/1s but breaks 3/1s; the
// failure names the first window that holds too many.
func ExampleAssertCompliantNs() {
	var sends []int64
	for i := range 8 {
		sends = append(sends, int64(i)*int64(300*time.Millisecond))
	}
	ok := rlchecktest.AssertCompliantNs(printTB{}, sends, rule.Rule{Limit: 5, Window: time.Second})
	fmt.Println("5/1s kept:", ok)
	rlchecktest.AssertCompliantNs(printTB{}, sends, rule.Rule{Limit: 3, Window: time.Second})
	// Output:
	// 5/1s kept: true
	// rlchecktest: rule 3/1s broken by 5 of 8 sends (most in one window: 4)
	//   first offending window [+0s, +1s) holds 4 sends, limit 3; send 4 at +900ms is one too many
	//   sends in it: +0s, +300ms, +600ms, +900ms
	//   (offsets from the first send at 0 ns)
}

// In a service's test, wrap the client's transport, exercise the code that
// calls the API, then assert (t is the test's *testing.T).
func ExampleRecorder_Transport() {
	var rec rlchecktest.Recorder
	_ = rec.Transport(nil) // http.Client{Transport: rec.Transport(nil)}
	for range 3 {
		_ = rec.Record(func() error { return nil }) // or any call
	}
	fmt.Println(rec.AssertCompliant(printTB{}, rule.Rule{Limit: 10, Window: time.Second}), rec.Len())
	// Output:
	// true 3
}
