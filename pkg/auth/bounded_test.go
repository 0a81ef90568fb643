package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

type lookupFunc func(ctx context.Context, secretHash string) (policy.Key, error)

func (f lookupFunc) LookupKey(ctx context.Context, h string) (policy.Key, error) { return f(ctx, h) }

// Bounded gives each lookup a deadline and reports store failures only.
func TestBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		reported bool
	}{
		{"found", nil, false},
		{"unknown key", ErrUnknownKey, false},
		{"disabled key", ErrDisabledKey, false},
		{"store down", errors.New("DynamoDB did not answer"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reported []error
			var deadline time.Duration
			b := Bounded(lookupFunc(func(ctx context.Context, _ string) (policy.Key, error) {
				if dl, ok := ctx.Deadline(); ok {
					deadline = time.Until(dl)
				}
				return policy.Key{ID: "k"}, tc.err
			}), time.Second, func(err error) { reported = append(reported, err) })
			_, err := b.LookupKey(context.Background(), "h")
			if !errors.Is(err, tc.err) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
			if deadline <= 0 || deadline > time.Second {
				t.Errorf("lookup deadline %v, want within 1s", deadline)
			}
			if (len(reported) == 1) != tc.reported || len(reported) > 1 {
				t.Errorf("reported %v, want reported=%v", reported, tc.reported)
			}
		})
	}
}
