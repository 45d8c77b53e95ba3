// Package libs drives the rate limiters Go services commonly reach for,
// golang.org/x/time/rate and go.uber.org/ratelimit, on a clock.Runtime, so
// the simulator can measure exactly what they let through against a strict
// sliding-window contract.
//
// Each library is configured the way its users write it ("N per W" becomes
// rate.NewLimiter(rate.Limit(N/W), N), or ratelimit.New(N, ratelimit.Per(W))),
// with knobs (Config) for the burst, the slack and a margin added to each
// window, so a safe setting can be searched for.
package libs
