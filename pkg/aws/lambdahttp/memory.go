package lambdahttp

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryShare is the part of a function's memory given to the Go heap as
// its soft limit; the rest is for goroutine stacks, the runtime and the
// binary.
const memoryShare = 0.9

// LimitMemory sets the Go runtime's soft memory limit to 90% of the Lambda
// function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, in MB, set by
// Lambda) unless GOMEMLIMIT is set. Without it the heap may grow to twice
// the live data before a collection, and a function whose live data fits
// is killed for exceeding its memory during a cold start or an index
// build; with it the collector works harder near the limit instead. It
// returns the limit it set, or false when it set none.
func LimitMemory(getenv func(string) string) (int64, bool) {
	limit, ok := memoryLimit(getenv)
	if ok {
		debug.SetMemoryLimit(limit)
	}
	return limit, ok
}

func memoryLimit(getenv func(string) string) (int64, bool) {
	if strings.TrimSpace(getenv("GOMEMLIMIT")) != "" {
		return 0, false // the runtime read it already
	}
	mb, err := strconv.ParseInt(strings.TrimSpace(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")), 10, 64)
	if err != nil || mb <= 0 {
		return 0, false
	}
	return int64(float64(mb<<20) * memoryShare), true
}
