//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package indexpub

// lockDir is a no-op on systems without flock(2): Puts are then serialised
// only within one process (DirBucket's mutex).
func lockDir(path string) (unlock func(), err error) { return func() {}, nil }
