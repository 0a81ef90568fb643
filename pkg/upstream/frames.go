package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// mcp-go's stdio client reads the child's stdout with bufio.ReadString: a
// line without an end grows without bound, lines that are not JSON are
// skipped silently (a call then waits for its timeout with no hint why), and
// a response with neither result nor error, or with a malformed error,
// either fails with a confusing unmarshal error or is dropped. frameReader
// sits between the pipe and mcp-go and passes on only well-formed frames:
//
//   - a line longer than the limit is discarded while it streams in (memory
//     stays bounded); if its request id can be found at its start or end, an
//     error response for that id takes its place, so only that call fails
//     with ErrResultTooLarge; otherwise the process is stopped (fatal);
//   - a line that is not a JSON object, or has neither method nor id, is
//     dropped, counted and logged; the count and the last such line go into
//     the timeout error of the call that was waiting;
//   - a response for an id with neither result nor error, or whose error is
//     not an object with a numeric code, becomes an error response for that
//     id (ErrInvalidResponse).

// guardMarker starts the message of every error response frameReader makes up.
const guardMarker = "[upstream-guard] "

const (
	guardTooLarge = guardMarker + "too large: "
	guardInvalid  = guardMarker + "invalid response: "
)

// frameReader is an io.Reader of newline-terminated, well-formed JSON-RPC frames.
type frameReader struct {
	br      *bufio.Reader
	max     int64
	pending []byte
	err     error // sticky error to return once pending is drained

	onGarbage func(line string)      // called for each dropped line (may be nil)
	onFatal   func(problem *problem) // an oversized frame without an id (may be nil)

	mu          sync.Mutex
	garbage     int
	lastGarbage string
}

func newFrameReader(r io.Reader, max int64) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending, f.err = f.next()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// garbageHint describes the dropped lines for an error message ("" if none).
func (f *frameReader) garbageHint() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.garbage == 0 {
		return ""
	}
	noun := "lines"
	if f.garbage == 1 {
		noun = "line"
	}
	return " (the server wrote " + strconv.Itoa(f.garbage) + " " + noun +
		" to stdout that are not JSON-RPC, last: " + quoteHead(f.lastGarbage, 120) +
		"; a stdio server must write only JSON-RPC to stdout and log to stderr)"
}

// next returns the next frame to pass on, or an error that ends the stream.
func (f *frameReader) next() ([]byte, error) {
	for {
		line, size, head, tail, err := f.readLine()
		if size > f.max {
			if id := findID(head, tail); id != nil {
				return errorFrame(id, guardTooLarge+strconv.FormatInt(size, 10)), err
			}
			p := tooLarge(size, f.max)
			if f.onFatal != nil {
				f.onFatal(p)
			}
			return nil, p
		}
		if out := f.check(line); out != nil {
			return out, err
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads one line. A line up to the limit is returned whole (size
// excludes the line end); a longer one is discarded as it streams in and
// only its first and last bytes are kept.
func (f *frameReader) readLine() (line []byte, size int64, head, tail []byte, err error) {
	const keep = 512
	var buf []byte
	discarding := false
	for {
		chunk, e := f.br.ReadSlice('\n')
		if !discarding && int64(len(buf)+len(chunk)) > f.max+2 {
			discarding = true
			all := append(buf, chunk...)
			head = append([]byte(nil), all[:min(keep, len(all))]...)
			tail = append([]byte(nil), all[max(0, len(all)-keep):]...)
			size = int64(len(all))
			buf = nil
		} else if discarding {
			size += int64(len(chunk))
			tail = append(tail, chunk...)
			if len(tail) > keep {
				tail = append(tail[:0:0], tail[len(tail)-keep:]...)
			}
		} else {
			buf = append(buf, chunk...)
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		if discarding {
			size -= int64(len(tail) - len(bytes.TrimRight(tail, "\r\n")))
			return nil, size, head, bytes.TrimRight(tail, "\r\n"), e
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if int64(len(buf)) > f.max {
			return nil, int64(len(buf)), buf[:min(keep, len(buf))], buf[max(0, len(buf)-keep):], e
		}
		return buf, int64(len(buf)), nil, nil, e
	}
}

// envelope is the part of a JSON-RPC message the filter looks at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// check returns the frame to pass on for line (nil to drop it).
func (f *frameReader) check(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var env envelope
	if line[0] != '{' || json.Unmarshal(line, &env) != nil {
		f.dropGarbage(line)
		return nil
	}
	if env.Method != "" {
		return withNewline(line)
	}
	if !validID(env.ID) {
		f.dropGarbage(line)
		return nil
	}
	hasErr := len(env.Error) > 0 && string(env.Error) != "null"
	if hasErr {
		var e struct {
			Code    *int64 `json:"code"`
			Message any    `json:"message"`
		}
		if json.Unmarshal(env.Error, &e) != nil || e.Code == nil {
			return errorFrame(env.ID, guardInvalid+"its error is not a JSON-RPC error object: "+truncate(string(env.Error), 200))
		}
		if _, ok := e.Message.(string); !ok && e.Message != nil {
			return errorFrame(env.ID, guardInvalid+"its error message is not a string: "+truncate(string(env.Error), 200))
		}
		return withNewline(line)
	}
	if len(env.Result) == 0 {
		return errorFrame(env.ID, guardInvalid+"the response has neither result nor error: "+truncate(string(line), 200))
	}
	return withNewline(line)
}

func (f *frameReader) dropGarbage(line []byte) {
	s := string(line[:min(len(line), 512)])
	f.mu.Lock()
	f.garbage++
	f.lastGarbage = s
	f.mu.Unlock()
	if f.onGarbage != nil {
		f.onGarbage(s)
	}
}

// validID reports whether raw is a JSON-RPC request id: a string or a number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		return json.Unmarshal(raw, &n) == nil
	}
	return false
}

func withNewline(b []byte) []byte {
	out := make([]byte, len(b)+1)
	copy(out, b)
	out[len(b)] = '\n'
	return out
}

// errorFrame builds an error response for id with an internal-error code.
func errorFrame(id json.RawMessage, msg string) []byte {
	m, _ := json.Marshal(msg)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":-32603,"message":`)
	b.Write(m)
	b.WriteString("}}\n")
	return b.Bytes()
}

var (
	idValue = `(-?[0-9]+(?:\.[0-9]+)?|"(?:[^"\\]|\\.)*")`
	// headID finds the id of a frame that starts {"jsonrpc":"2.0","id":… or {"id":…
	headID = regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + idValue)
	// tailID finds the id of a frame that ends …,"id":…} or …"id":…,"jsonrpc":"2.0"}
	tailID = regexp.MustCompile(`"id"\s*:\s*` + idValue + `\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`)
)

// findID looks for the top-level id of an oversized frame in its first and
// last bytes. Only ids that are certainly top-level are returned.
func findID(head, tail []byte) json.RawMessage {
	if m := headID.FindSubmatch(head); m != nil && validID(m[1]) {
		return append(json.RawMessage(nil), m[1]...)
	}
	if m := tailID.FindSubmatch(tail); m != nil && validID(m[1]) {
		return append(json.RawMessage(nil), m[1]...)
	}
	return nil
}

// guardError recognises an error response made up by frameReader and words
// it; ok is false for any other message.
func guardError(message string, limit int64) (p *problem, ok bool) {
	i := strings.Index(message, guardMarker)
	if i < 0 {
		return nil, false
	}
	rest := message[i:]
	switch {
	case strings.HasPrefix(rest, guardTooLarge):
		n, _ := strconv.ParseInt(strings.TrimSpace(rest[len(guardTooLarge):]), 10, 64)
		return tooLarge(n, limit), true
	case strings.HasPrefix(rest, guardInvalid):
		return newProblem(ErrInvalidResponse, nil, "the server sent an invalid JSON-RPC response: %s", rest[len(guardInvalid):]), true
	}
	return nil, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
