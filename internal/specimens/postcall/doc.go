// Package postcall holds the post-call limiter, the pattern gateways use
// for token-metered calls: it admits a call while every window has room
// left and charges the call's actual cost only when its answer reports
// it. A provider charges the estimate from the send on (docs/semantics.md,
// "Reserved costs"), so every call in flight is a charge the limiter does
// not see yet: under a burst its admissions overfill the provider's
// windows. It is a specimen for the simulator to measure, not a design to
// copy (strategies.Reserver is).
package postcall
