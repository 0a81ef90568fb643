//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// takeForeground moves the process into its own process group and makes
// that group the terminal's foreground group, so that Ctrl-C interrupts
// the gateway alone and not the make that started it (make would report
// "Interrupt" and fail even though the gateway stopped cleanly). It
// returns the function that gives the terminal back. Without a terminal,
// or when the process is not in the foreground, it does nothing.
func takeForeground() (restore func()) {
	nop := func() {}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nop
	}
	fd := int(tty.Fd())
	prev, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || prev != unix.Getpgrp() {
		tty.Close()
		return nop
	}
	// A process outside the foreground group that sets it is stopped by
	// SIGTTOU unless it ignores the signal.
	signal.Ignore(syscall.SIGTTOU)
	if err := unix.Setpgid(0, 0); err != nil {
		tty.Close()
		return nop
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp()); err != nil {
		_ = unix.Setpgid(0, prev)
		tty.Close()
		return nop
	}
	return func() {
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, prev)
		tty.Close()
	}
}
