package audit

import (
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
)

// maxCallers caps each workload, so contracts with long windows stay quick
// to audit (their long windows are then not saturated).
const maxCallers = 20000

// Workload is one adversarial traffic pattern for a contract.
type Workload struct {
	Name string
	Doc  string
	// Arrivals and Callers go into the simulated scenario.
	Arrivals simulate.Arrivals
	Callers  int
}

// Workloads returns the audit's traffic for rules: a burst after a long
// idle spell (every bucket full, every window empty), steady arrivals at
// twice the fastest rule's rate, and Poisson arrivals at the slowest rule's
// long-run rate.
func Workloads(rules []rule.Rule) []Workload {
	var (
		maxN    int
		maxW    time.Duration
		fastest = rules[0]
		slowest = rules[0]
	)
	for _, r := range rules {
		maxN = max(maxN, r.Limit)
		maxW = max(maxW, r.Window)
		// Compare N1/W1 with N2/W2 in integers: N1*W2 against N2*W1.
		if int64(r.Limit)*int64(fastest.Window) > int64(fastest.Limit)*int64(r.Window) {
			fastest = r
		}
		if int64(r.Limit)*int64(slowest.Window) < int64(slowest.Limit)*int64(r.Window) {
			slowest = r
		}
	}
	burst := min(3*maxN, maxCallers)
	times := make([]int64, 1+burst)
	for i := 1; i < len(times); i++ {
		times[i] = int64(2 * maxW)
	}
	steady := min(max(4*maxN, 2*int(int64(2*maxW)*int64(fastest.Limit)/int64(fastest.Window))), maxCallers)
	return []Workload{
		{
			Name: "burst-after-idle",
			Doc:  "one call, an idle spell of twice the longest window, then every caller at once",
			Arrivals: simulate.Arrivals{
				Kind: simulate.Replay, Times: times,
			},
		},
		{
			Name: "steady",
			Doc:  "one caller every half of the fastest rule's spacing: saturation",
			Arrivals: simulate.Arrivals{
				Kind: simulate.Interval, Every: max(fastest.Window/time.Duration(2*fastest.Limit), 1),
			},
			Callers: steady,
		},
		{
			Name: "poisson",
			Doc:  "Poisson arrivals at the slowest rule's long-run rate",
			Arrivals: simulate.Arrivals{
				Kind: simulate.Poisson, Rate: float64(slowest.Limit) / slowest.Window.Seconds(),
			},
			Callers: min(4*maxN, maxCallers),
		},
	}
}
