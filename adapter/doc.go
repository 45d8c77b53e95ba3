// Package adapter runs a limiter written in any language on rlcheck's
// workloads: it starts the user's program and speaks to it over its
// standard input and output in JSON lines (docs/adapters.md).
//
// rlcheck writes one run a line (the rules, the callers with their
// arrivals, workers, keys and costs, the drawn timer lateness and
// operation costs, a seed); the program answers each call's send instant
// on its own virtual clock, or its refusal, and closes the run. Every
// answer is checked before it is believed: an answer that is malformed,
// lies (a send before its arrival, a call answered twice or never, an
// unknown call or run) or does not come within the timeout is an
// *ExchangeError naming the line of the program's output and its text,
// and a program that hangs is killed.
//
// A Program keeps a few processes alive and hands each run to an idle one,
// so a thousand seeds cost a few process starts, not a thousand; each run
// starts from fresh state in the program, so which process serves it does
// not change its answer.
package adapter
