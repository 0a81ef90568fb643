//go:build linux

package bridge

import (
	"bytes"
	"os"
	"sort"
	"strconv"
)

const procAvailable = true

// childPIDs lists the live children of this process that lead their own
// process group (the Manager starts each server that way) and carry
// markerVar=marker in their environment. Grandchildren inherit the
// variable but not the group leadership, so they are not counted.
func childPIDs(marker string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	want := []byte(markerVar + "=" + marker + "\x00")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		ppid, pgrp, state, ok := procStat(pid)
		if !ok || ppid != self || pgrp != pid || state == 'Z' || state == 'X' {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.HasPrefix(env, want) && !bytes.Contains(env, append([]byte{0}, want...)) {
			continue
		}
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids
}

// procStat reads state, parent pid and process group from /proc/pid/stat.
func procStat(pid int) (ppid, pgrp int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, 0, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return ppid, pgrp, f[0][0], true
}
