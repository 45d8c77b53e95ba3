// Package checker is rlcheck's oracle: it decides, send by send, whether a
// stream of send times keeps every rule, and reports where it did not.
//
// Send i breaks rule N/W when N or more earlier sends lie in (t_i-W, t_i]
// ([t_i-W, t_i] for a closed boundary). On sends taken in time order that is
// exactly t[i]-t[i-N] < W, so each rule keeps a ring of recent send times and
// decides each send in O(1) time and O(N) memory, however long the log.
//
// The checker imports only the rule package: it never sees the strategies or
// the simulator whose output it judges.
package checker
