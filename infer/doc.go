// Package infer learns a provider's contract from a log of calls and the
// statuses the provider gave them: which calls it accepted (2xx) and which
// it refused (429).
//
// For each window length on a grid and each window kind (sliding, fixed
// aligned to the Unix epoch), and under both readings of whether refused
// calls count toward later windows, it bounds the limit N: no accepted call
// may find N earlier calls in its window (N is at least the fullest such
// window plus one), and a refused call explained by the rule found N or more
// (N is at most its count). It then chooses the smallest set of rules that
// explains every refusal while refusing no accepted call, with each rule's
// range of N, the calls that pin each bound and a confidence.
//
// For each cost unit the calls carry (Options.Units), cost rules "N UNIT/W"
// are bounded the same way over prefix sums of the costs, and join the
// search beside the call rules.
//
// Token buckets are tried too, per unit: at a rate, one pass gives the
// least burst the accepted calls allow and the refusals it explains; a
// coarse sweep of rates, then a bisection for the least rate of each burst
// searched, give the buckets that join the cover search where no window
// explains as much (bucket.go, bucketrange.go).
//
// Every window and kind costs one pass over the sorted times with two
// pointers: O(n) per window, kind and reading together. A log with no
// refusal yields lower bounds only; a log that no rule on the grid can
// explain is reported as a contradiction, naming its lines, with the
// least delay spread (and clock offset) within which a contract fits when
// the log's instants are not the provider's (Tolerance).
//
// Where the log keeps the provider's rate-limit headers (RateLimit,
// RateLimit-Policy, X-RateLimit-*, Retry-After, x-ratelimit-*-requests and
// -tokens), the limits they announce are listed, their windows join the
// grid, and the calls where the provider's behaviour contradicts them are
// counted with the same window counts.
package infer
