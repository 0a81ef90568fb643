package peerbench

import (
	"os"
	"strconv"
	"strings"
)

// procStat is what /proc/<pid>/stat says about one process.
type procStat struct {
	pid, ppid int
	cpuTicks  int64 // utime + stime + cutime + cstime (reaped children)
	ownTicks  int64 // utime + stime
	rssPages  int64
}

// readStat parses /proc/<pid>/stat.
func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	// After the command: state(0) ppid(1) ... utime(11) stime(12)
	// cutime(13) cstime(14) ... rss(21).
	f := strings.Fields(s[i+1:])
	if len(f) < 22 {
		return procStat{}, false
	}
	n := func(k int) int64 { v, _ := strconv.ParseInt(f[k], 10, 64); return v }
	return procStat{pid: pid, ppid: int(n(1)), cpuTicks: n(11) + n(12) + n(13) + n(14), ownTicks: n(11) + n(12), rssPages: n(21)}, true
}

// treeUsage sums CPU time and resident memory over root and every process
// descended from it (a snapshot of /proc).
type treeUsage struct {
	cpuNanos int64
	ownNanos int64 // the root process alone (its own threads, not its children)
	rssBytes int64
	procs    int
}

// clockTick is USER_HZ, 100 on every Linux the project runs on.
const clockTick = 100

func tree(root int) treeUsage {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]procStat{}
	var rootStat procStat
	found := false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		if pid == root {
			rootStat, found = st, true
			continue
		}
		children[st.ppid] = append(children[st.ppid], st)
	}
	if !found {
		return treeUsage{}
	}
	u0 := rootStat.ownTicks * (1e9 / clockTick)
	page := int64(os.Getpagesize())
	u := treeUsage{ownNanos: u0}
	stack := []procStat{rootStat}
	for len(stack) > 0 {
		st := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		u.cpuNanos += st.cpuTicks * (1e9 / clockTick)
		u.rssBytes += st.rssPages * page
		u.procs++
		stack = append(stack, children[st.pid]...)
	}
	return u
}
