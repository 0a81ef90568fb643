package config

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// FileSet remembers what a set of files held when it last looked (a
// SHA-256 over their paths and contents; a missing file counts as empty,
// an unreadable one by its error), so that a change, and only a change,
// reloads them.
type FileSet struct {
	paths []string
	sum   []byte
}

// NewFileSet records what paths hold now.
func NewFileSet(paths ...string) *FileSet {
	f := &FileSet{paths: paths}
	f.sum = f.digest()
	return f
}

// Changed reads the files again and reports whether they differ from the
// last look.
func (f *FileSet) Changed() bool {
	sum := f.digest()
	if bytes.Equal(sum, f.sum) {
		return false
	}
	f.sum = sum
	return true
}

func (f *FileSet) digest() []byte {
	h := sha256.New()
	for _, p := range f.paths {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			b = []byte("unreadable: " + err.Error())
		}
		h.Write([]byte(p + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// Watch calls check every poll (0: not on a timer) and at once on SIGHUP
// (after onHUP, when set), until ctx ends.
func Watch(ctx context.Context, poll time.Duration, onHUP func(), check func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-hup:
			if onHUP != nil {
				onHUP()
			}
		}
		check()
	}
}
