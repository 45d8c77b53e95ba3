// Package handwritten holds the Redis rate limiters users write by hand
// and post, each as written, so the simulator and the checker can show
// what they let through: a check and a record in two round trips, one
// atomic script whose sorted-set member is the timestamp, fixed windows
// counted with INCR and EXPIRE, and the guide's multi-window script with
// float seconds that returns the first wait it finds.
//
// They read the caller's clock (rt.Now from libs.Epoch), as their authors
// do; none of them is a design to copy (strategies/redislimit is).
package handwritten
