package testenv

import (
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int // cond holds from this call on (0: never)
		d     time.Duration
		want  bool
	}{
		{"holds at once", 1, 0, true},
		{"holds on the third call", 3, time.Second, true},
		{"never holds", 0, 50 * time.Millisecond, false},
		{"holds too late", 1000, 30 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			start := time.Now()
			got := poll(tc.d, func() bool { calls++; return tc.after > 0 && calls >= tc.after })
			if got != tc.want {
				t.Fatalf("poll = %v after %d calls, want %v", got, calls, tc.want)
			}
			if !got && time.Since(start) < tc.d {
				t.Errorf("gave up after %s, before %s", time.Since(start), tc.d)
			}
		})
	}
}
