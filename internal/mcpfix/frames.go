package mcpfix

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"sync"
)

// The client half: a stdio upstream's output checked before mcp-go's
// client reads it.
//
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
//     with a too-large error (GuardTooLarge); otherwise the stream ends
//     with FrameReader.TooLarge's error (fatal);
//   - a line that is not a JSON object, or has neither method nor id, is
//     dropped, counted and logged; the count and the last such line go into
//     the timeout error of the call that was waiting;
//   - a response for an id with neither result nor error, or whose error is
//     not an object with a numeric code, becomes an error response for that
//     id (GuardInvalid).

// GuardMarker starts the message of every error response FrameReader makes
// up; GuardTooLarge is followed by the frame's size in bytes, GuardInvalid
// by what is wrong with the response.
const (
	GuardMarker   = "[upstream-guard] "
	GuardTooLarge = GuardMarker + "too large: "
	GuardInvalid  = GuardMarker + "invalid response: "
)

// FrameReader is an io.Reader of newline-terminated, well-formed JSON-RPC frames.
type FrameReader struct {
	br      *bufio.Reader
	max     int64
	pending []byte
	err     error // sticky error to return once pending is drained

	// OnGarbage is called for each dropped line (may be nil).
	OnGarbage func(line string)
	// TooLarge is the error that ends the stream at an oversized frame
	// without an id (size bytes, over the limit max).
	TooLarge func(size, max int64) error

	mu          sync.Mutex
	garbage     int
	lastGarbage string
}

// NewFrameReader reads the frames of r, max bytes at most each; set
// TooLarge before the first Read.
func NewFrameReader(r io.Reader, max int64) *FrameReader {
	return &FrameReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (f *FrameReader) Read(p []byte) (int, error) {
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

// Garbage returns how many lines were dropped, and the last of them.
func (f *FrameReader) Garbage() (n int, last string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.garbage, f.lastGarbage
}

// next returns the next frame to pass on, or an error that ends the stream.
func (f *FrameReader) next() ([]byte, error) {
	for {
		line, size, head, tail, err := f.readLine()
		if size > f.max {
			if id := findID(head, tail); id != nil {
				return errorFrame(id, GuardTooLarge+strconv.FormatInt(size, 10)), err
			}
			return nil, f.TooLarge(size, f.max)
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
func (f *FrameReader) readLine() (line []byte, size int64, head, tail []byte, err error) {
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
func (f *FrameReader) check(line []byte) []byte {
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
			return errorFrame(env.ID, GuardInvalid+"its error is not a JSON-RPC error object: "+truncate(string(env.Error), 200))
		}
		if _, ok := e.Message.(string); !ok && e.Message != nil {
			return errorFrame(env.ID, GuardInvalid+"its error message is not a string: "+truncate(string(env.Error), 200))
		}
		return withNewline(line)
	}
	if len(env.Result) == 0 {
		return errorFrame(env.ID, GuardInvalid+"the response has neither result nor error: "+truncate(string(line), 200))
	}
	return withNewline(line)
}

func (f *FrameReader) dropGarbage(line []byte) {
	s := string(line[:min(len(line), 512)])
	f.mu.Lock()
	f.garbage++
	f.lastGarbage = s
	f.mu.Unlock()
	if f.OnGarbage != nil {
		f.OnGarbage(s)
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
