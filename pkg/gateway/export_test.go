package gateway

import "time"

// SetTouchEvery sets touchEvery for a test and returns the function that
// restores it.
func SetTouchEvery(d time.Duration) (restore func()) {
	old := touchEvery
	touchEvery = d
	return func() { touchEvery = old }
}
