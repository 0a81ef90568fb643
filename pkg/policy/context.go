package policy

import "context"

type ctxKey struct{}

// NewContext returns ctx carrying p (the authentication middleware
// attaches the caller's policy this way).
func NewContext(ctx context.Context, p Policy) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the policy attached to ctx. ok is false for an
// unauthenticated context, which must be treated as "grants nothing".
func FromContext(ctx context.Context) (Policy, bool) {
	p, ok := ctx.Value(ctxKey{}).(Policy)
	return p, ok
}
