// Package specimens holds the rate limiters `rlcheck audit` measures and
// nobody should run: third-party libraries driven on a clock.Runtime (libs
// and its sub-packages) and Redis designs users write by hand
// (handwritten). They live under internal/ so that the public packages show
// only the limiters to use (strategies, strategies/redislimit).
package specimens
