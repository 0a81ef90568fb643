package provision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// state is servers/<id>/.provision-state.json (gitignored).
type state struct {
	SetupHash   string    `json:"setup_hash"`
	CompletedAt time.Time `json:"completed_at"`
}

// tailLines is how much output of a failed setup step goes into the error.
const tailLines = 20

// SetupHash returns the hash that decides whether a stdio server's setup
// must run again: it covers the steps and the env they run with.
func SetupHash(m *Manifest) string {
	keys := make([]string, 0, len(m.Env))
	for k := range m.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, len(keys))
	for i, k := range keys {
		env[i] = k + "=" + m.Env[k]
	}
	b, _ := json.Marshal(struct {
		Setup []string `json:"setup"`
		Env   []string `json:"env"`
	}{m.Setup, env})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// setupPending reports whether m's setup has not completed with its
// current steps.
func setupPending(root string, m *Manifest) bool {
	var st state
	b, err := os.ReadFile(filepath.Join(root, ServersDir, m.ID, StateName))
	return err != nil || json.Unmarshal(b, &st) != nil || st.SetupHash != SetupHash(m)
}

func runSetup(ctx context.Context, root string, m *Manifest, force bool, out io.Writer) error {
	dir := filepath.Join(root, ServersDir, m.ID)
	statePath := filepath.Join(dir, StateName)
	want := SetupHash(m)
	if !force {
		var st state
		if b, err := os.ReadFile(statePath); err == nil && json.Unmarshal(b, &st) == nil && st.SetupHash == want {
			fmt.Fprintf(out, "provision: %s: setup unchanged; skipped (use --force to run it again)\n", m.ID)
			return nil
		}
	}
	// A stale state must not survive a failed run.
	if err := os.Remove(statePath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("provision: %s: removing %s: %w", m.ID, statePath, err)
	}
	env := os.Environ()
	for k, v := range m.Env {
		env = append(env, k+"="+v)
	}
	for i, step := range m.Setup {
		fmt.Fprintf(out, "provision: %s: setup %d/%d: %s\n", m.ID, i+1, len(m.Setup), step)
		tail := &tailWriter{max: tailLines}
		cmd := exec.CommandContext(ctx, "sh", "-c", step)
		cmd.Dir = dir
		cmd.Env = env
		w := io.MultiWriter(out, tail)
		cmd.Stdout, cmd.Stderr = w, w
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			msg := fmt.Sprintf("provision: server %q (%s): setup step %d of %d failed: %s\n  step: %s",
				m.ID, path.Join(ServersDir, m.ID, ManifestName)+fmt.Sprintf(":%d", m.line("setup")), i+1, len(m.Setup), err, step)
			if t := tail.String(); t != "" {
				msg += "\n  last output:\n    " + strings.ReplaceAll(strings.TrimRight(t, "\n"), "\n", "\n    ")
			}
			return &SetupError{Server: m.ID, Step: i + 1, Command: step, Output: tail.String(), Err: err, msg: msg}
		}
	}
	b, _ := json.MarshalIndent(state{SetupHash: want, CompletedAt: time.Now().UTC()}, "", "  ")
	if err := writeAtomic(statePath, append(b, '\n')); err != nil {
		return fmt.Errorf("provision: %s: writing %s: %w", m.ID, statePath, err)
	}
	return nil
}

// SetupError reports a failed stdio setup step.
type SetupError struct {
	Server  string
	Step    int    // 1-based
	Command string // the step as written in the manifest
	Output  string // the last lines of its output
	Err     error
	msg     string
}

func (e *SetupError) Error() string { return e.msg }
func (e *SetupError) Unwrap() error { return e.Err }

// tailWriter keeps the last max lines written to it.
type tailWriter struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  string
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.part + string(p)
	parts := strings.Split(s, "\n")
	t.part = parts[len(parts)-1]
	if len(t.part) > 4096 {
		t.part = t.part[len(t.part)-4096:]
	}
	for _, l := range parts[:len(parts)-1] {
		if len(l) > 512 {
			l = l[:512] + "…"
		}
		t.lines = append(t.lines, l)
	}
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ls := t.lines
	if t.part != "" {
		ls = append(append([]string{}, ls...), t.part)
		if len(ls) > t.max {
			ls = ls[len(ls)-t.max:]
		}
	}
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}
