//go:build !unix

package upstream

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

func newProcessGroup(cmd *exec.Cmd) {}

// signalGroup can only kill the process itself on this platform.
func signalGroup(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

func waitGroupGone(pgid int, d time.Duration) bool { return true }
