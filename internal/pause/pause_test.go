package pause

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"waits out d", context.Background(), time.Millisecond, nil},
		{"no delay", context.Background(), 0, nil},
		{"negative delay", context.Background(), -time.Second, nil},
		{"ended context, long delay", ended, time.Hour, context.Canceled},
		{"ended context, no delay", ended, 0, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := For(tc.ctx, tc.d); !errors.Is(err, tc.want) {
				t.Fatalf("For(%v) = %v, want %v", tc.d, err, tc.want)
			}
		})
	}
}
