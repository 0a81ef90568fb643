package jsonhttp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	tests := map[string]time.Duration{"": -1, "junk": -1, "0": 0, "1.5": 1500 * time.Millisecond, "120": 2 * time.Minute,
		"Mon, 02 Jan 2006 15:04:05 GMT": 0}
	for in, want := range tests {
		if got := ParseRetryAfter(in); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	if got := ParseRetryAfter(future); got < 59*time.Minute {
		t.Errorf("ParseRetryAfter(future date) = %v", got)
	}
}

// One set of retry rules for every caller: what is retried, how long it
// waits, what the error says.
func TestPost(t *testing.T) {
	tests := []struct {
		name      string
		answers   []int // status of each answer; the last repeats
		header    string
		body      string
		limit     int64
		wantCalls int
		wantErr   []string // substrings; nil = success
		wantWaits int
	}{
		{"ok", []int{200}, "", `{"ok":true}`, 0, 1, nil, 0},
		{"503 then ok", []int{503, 200}, "", `{}`, 0, 2, nil, 1},
		{"429 with Retry-After then ok", []int{429, 200}, "1", `{}`, 0, 2, nil, 1},
		{"408 and 500 are retried", []int{408, 500, 200}, "", `{}`, 0, 3, nil, 2},
		{"400 is not retried", []int{400}, "", `bad input for sk-1`, 0, 1, []string{"test: ", "400 Bad Request", "bad input for [redacted]"}, 0},
		{"gives up", []int{502}, "", `down`, 0, 3, []string{"502", "down", "gave up after 3 attempts"}, 2},
		{"too large", []int{200}, "", `{"big":"0123456789"}`, 8, 1, []string{"larger than 8 bytes"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer sk-1" || r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("headers %v", r.Header)
				}
				code := tc.answers[min(calls, len(tc.answers)-1)]
				calls++
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				w.WriteHeader(code)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			var waits []time.Duration
			c := New(Config{Name: "test", URL: srv.URL, APIKey: "sk-1", MaxRetries: 2, RetryBaseDelay: 10 * time.Millisecond,
				MaxRetryDelay: 500 * time.Millisecond, MaxResponseBytes: tc.limit,
				Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
			raw, err := c.Post(context.Background(), []byte(`{}`))
			if calls != tc.wantCalls || len(waits) != tc.wantWaits {
				t.Errorf("%d calls, waits %v; want %d calls and %d waits", calls, waits, tc.wantCalls, tc.wantWaits)
			}
			if tc.header == "1" && len(waits) > 0 && waits[0] != 500*time.Millisecond {
				t.Errorf("Retry-After 1s capped at MaxRetryDelay: waited %v, want 500ms", waits[0])
			}
			for _, w := range waits {
				if tc.header == "" && (w < 5*time.Millisecond || w > 40*time.Millisecond) {
					t.Errorf("backoff %v outside [5ms, 40ms]", w)
				}
			}
			if tc.wantErr == nil {
				if err != nil || string(raw) != tc.body {
					t.Errorf("Post = %q, %v", raw, err)
				}
				return
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to contain %q", err, want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "sk-1") {
				t.Errorf("the error leaks the key: %v", err)
			}
		})
	}
}

// Each attempt has its own timeout; a timed-out attempt is retried.
func TestPostTimeout(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release) // before srv.Close: unblock the handlers
	c := New(Config{Name: "test", URL: srv.URL, Timeout: 30 * time.Millisecond, MaxRetries: 1,
		Sleep: func(ctx context.Context, d time.Duration) error { return nil }})
	_, err := c.Post(context.Background(), []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "did not answer within 30ms") || calls.Load() != 2 {
		t.Errorf("err = %v after %d calls, want a timeout after 2", err, calls.Load())
	}
}
