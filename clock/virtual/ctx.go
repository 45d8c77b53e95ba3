package virtual

import "context"

type deadlineKey struct{}

// WithDeadline returns ctx carrying a virtual deadline: a caller parked in
// the virtual runtime past instant at gets ErrDeadline. It is a value, not a
// context deadline, because no wall clock may run in the virtual path.
func WithDeadline(ctx context.Context, at int64) context.Context {
	return context.WithValue(ctx, deadlineKey{}, at)
}

// Deadline returns the virtual deadline ctx carries, if any.
func Deadline(ctx context.Context) (int64, bool) {
	at, ok := ctx.Value(deadlineKey{}).(int64)
	return at, ok
}
