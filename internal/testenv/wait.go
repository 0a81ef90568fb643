package testenv

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing the test when d passes
// first; what names the awaited event in the failure.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !poll(d, cond) {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// poll calls cond every 10 ms until it holds (true) or d passes (false).
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
