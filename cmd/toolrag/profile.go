package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// cpuProfile writes a CPU profile of the whole run to the file named by
// TOOLRAG_CPUPROFILE, if set (for `go tool pprof`; serve and bridge stop
// on SIGTERM and write it then); "%p" in the name becomes the process id,
// for a command that runs others (bench-peers). It returns the function
// that stops it.
func cpuProfile() func() {
	path := os.Getenv("TOOLRAG_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolrag: TOOLRAG_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "toolrag: TOOLRAG_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
