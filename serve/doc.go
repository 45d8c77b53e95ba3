// Package serve is a strict fake provider: an HTTP server that stands in
// for a rate-limited API in a client's tests and judges every request, at
// its arrival, against a contract (the rules, the boundary and an
// in-flight cap), optionally per key. It is the library behind
// `rlcheck serve`.
//
// A request within the contract is answered after a latency drawn from a
// seeded distribution; one that overfills a window, or arrives while the
// cap is full, is answered 429 with Retry-After and the IETF RateLimit
// headers (or, with Options.Record, answered like the others, so that an
// unmodified client runs to its end). With Options.Upstream the server is a
// recording reverse proxy in front of a real API instead. With
// Options.Provider it speaks the OpenAI, Anthropic or Azure OpenAI dialect
// (completions with usage, the provider's 429 body and rate-limit
// headers, costs estimated from the request body), so that the provider's
// official SDK runs against it unchanged.
//
// Arrivals are stamped in one total order (integer nanoseconds, strictly
// increasing) and judged in that order by the checker package, one
// streaming checker per key under the key's own mutex; the in-flight cap
// counts a request from its arrival to its answer. Every request is
// recorded as a CSV line (ts_ns,key,status,duration_ns,send_ns,request_id)
// in arrival order, which `rlcheck check` reads, and Run's verdict is
// logcheck's on that very log, so serve and check can never disagree. A
// client that sends its send instants (X-Send-Time) is judged at send too
// (BothViews).
package serve
