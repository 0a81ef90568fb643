// Package duration reads the durations of settings: a Go duration ("30s",
// "1m30s") or a plain number of seconds ("30", "0.5").
package duration

import (
	"fmt"
	"strconv"
	"time"
)

// Parse reads s as a non-negative number of seconds or Go duration. A
// setting that must be positive checks d > 0 itself.
func Parse(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (use seconds or e.g. 30s)", s)
	}
	return d, nil
}
