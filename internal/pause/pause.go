// Package pause waits out a delay unless the context ends first: the sleep
// between retries and before a restart.
package pause

import (
	"context"
	"time"
)

// For waits d or until ctx ends, whichever is first, and returns ctx.Err()
// in the second case. d <= 0 does not wait.
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
