package testenv

import (
	"syscall"
	"time"
)

// ProcessCPU is the user+system CPU time of this process so far (all
// threads, GC included; 0 if it cannot be read). A benchmark reports the
// difference over b.N as CPU per operation: unlike ns/op it does not grow
// when other processes compete for the cores.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
