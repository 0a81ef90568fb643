package upstream

import (
	"bufio"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// logLimiter is a token bucket for log lines: burst lines at once, then
// perSecond lines per second; what it holds back is counted and reported
// with the next line it lets through.
type logLimiter struct {
	mu         sync.Mutex
	burst      float64
	perSecond  float64
	tokens     float64
	last       time.Time
	suppressed int
}

func newLogLimiter(burst, perSecond float64) *logLimiter {
	return &logLimiter{burst: burst, perSecond: perSecond, tokens: burst}
}

// allow reports whether a line may be logged now, and how many lines were
// held back since the last one that was.
func (l *logLimiter) allow(now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.perSecond)
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	suppressed, l.suppressed = l.suppressed, 0
	return true, suppressed
}

// stderrSink drains a child's stderr: every line goes to the logger (rate
// limited) and the last few are kept for error messages.
type stderrSink struct {
	log     *slog.Logger
	limiter *logLimiter

	mu    sync.Mutex
	lines []string // last keepLines lines
	done  chan struct{}
}

const (
	stderrKeepLines = 8
	stderrMaxLine   = 2048
)

func newStderrSink(log *slog.Logger) *stderrSink {
	return &stderrSink{log: log, limiter: newLogLimiter(20, 5), done: make(chan struct{})}
}

// run reads r until it ends. Lines longer than stderrMaxLine are cut.
func (s *stderrSink) run(r io.Reader) {
	defer close(s.done)
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			text := strings.TrimRight(string(line[:min(len(line), stderrMaxLine)]), "\r\n")
			if err == bufio.ErrBufferFull {
				text += "…"
				for err == bufio.ErrBufferFull { // skip the rest of the long line
					_, err = br.ReadSlice('\n')
				}
			}
			s.add(text)
		}
		if err != nil {
			return
		}
	}
}

func (s *stderrSink) add(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	s.mu.Lock()
	if len(s.lines) == stderrKeepLines {
		copy(s.lines, s.lines[1:])
		s.lines = s.lines[:stderrKeepLines-1]
	}
	s.lines = append(s.lines, line)
	s.mu.Unlock()
	if ok, held := s.limiter.allow(time.Now()); ok {
		if held > 0 {
			s.log.Info("upstream stderr", "line", line, "suppressed_lines", held)
		} else {
			s.log.Info("upstream stderr", "line", line)
		}
	}
}

// wait waits up to d for stderr to end (so that the last lines of a process
// that died are in tail).
func (s *stderrSink) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
	}
}

// tail returns the last lines, joined with " | ", for an error message
// ("" if the process wrote nothing).
func (s *stderrSink) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) == 0 {
		return ""
	}
	out := strings.Join(s.lines, " | ")
	if len(out) > 600 {
		out = "…" + out[len(out)-600:]
	}
	return out
}
