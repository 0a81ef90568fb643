//go:build unix

package upstream

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// newProcessGroup makes the child lead a process group of its own, so that
// everything it starts (a `go run` binary, an `npx` node process) can be
// signalled and stopped with it.
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group led by pid; a group that is
// gone already is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// waitGroupGone waits up to d for every process of group pgid to be gone
// (orphaned members are reaped by init, a moment after they are killed).
func waitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
