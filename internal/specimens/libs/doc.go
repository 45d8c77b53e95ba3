// Package libs drives the rate limiters Go services commonly reach for,
// golang.org/x/time/rate and go.uber.org/ratelimit, on a clock.Runtime, so
// the simulator can measure exactly what they let through against a strict
// sliding-window contract; its sub-packages do the same for redis_rate
// (redisrate), throttled (throttled) and ulule/limiter (ulule), and
// clockredis puts an embedded Redis on a virtual clock for them.
//
// Each library is configured the way its users write it ("N per W" becomes
// rate.NewLimiter(rate.Limit(N/W), N), or ratelimit.New(N, ratelimit.Per(W))),
// with knobs (Config) for the burst, the slack, a margin added to each
// window and half the limit for fixed windows, so a safe setting can be
// searched for. Chain is the ask-and-retry loop around a limiter that
// refuses instead of waiting.
package libs
