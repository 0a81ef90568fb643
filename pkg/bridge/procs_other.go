//go:build !linux

package bridge

const procAvailable = false

// childPIDs needs /proc; elsewhere it knows nothing.
func childPIDs(string) []int { return nil }
