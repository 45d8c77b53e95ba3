// Package checker is rlcheck's oracle: it decides, send by send, whether a
// stream of send times keeps every rule, and reports where it did not.
//
// Send i breaks rule N/W when N or more earlier sends lie in (t_i-W, t_i]
// ([t_i-W, t_i] for a closed boundary). On sends taken in time order that is
// exactly t[i]-t[i-N] < W, so the checker keeps one history of recent send
// times for all the rules of a stream and decides each send against every
// rule in one pass, in O(1) time per rule. The history grows with the sends
// seen, up to one more than the fullest window seen (within a bound per
// rule that keeps the largest occupancy exact; see Config.MaxTrack): its
// memory follows the log's busiest window, however long the log and however
// large N.
//
// Cost rules ("90000 tokens/1m", sends given with ObserveCost) and the
// window kinds other than sliding (fixed, bucket, first-call) take a
// separate, simple path, one judge per rule, exact in integers as
// docs/semantics.md states; the sliding call rules keep the path above.
//
// The checker imports only the rule package: it never sees the strategies or
// the simulator whose output it judges.
package checker
