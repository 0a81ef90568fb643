package upstream

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
)

func readAllFrames(t *testing.T, f *mcpfix.FrameReader) (string, error) {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 7) // small reads exercise the pending buffer
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
	}
}

func TestFrameReader(t *testing.T) {
	big := strings.Repeat("z", 300)
	cases := []struct {
		name    string
		in      string
		max     int64
		want    string
		garbage int
		fatal   bool
	}{
		{
			name: "valid frames pass unchanged, CRLF and blank lines tolerated",
			in:   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n",
			want: "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n",
		},
		{
			name:    "non-JSON lines are dropped and counted",
			in:      "Server started on stdio\n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\n[1,2]\nnull\n{broken\n",
			want:    "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\n",
			garbage: 4,
		},
		{
			name:    "objects that are neither request nor response are dropped",
			in:      "{\"hello\":1}\n{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"result\":{}}\n",
			garbage: 3,
		},
		{
			name: "a response with neither result nor error becomes an error for its id",
			in:   "{\"jsonrpc\":\"2.0\",\"id\":7}\n",
			want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"[upstream-guard] invalid response: the response has neither result nor error: {\"jsonrpc\":\"2.0\",\"id\":7}"}}` + "\n",
		},
		{
			name: "a malformed error object becomes a proper error",
			in:   "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"error\":\"boom\"}\n",
			want: `{"jsonrpc":"2.0","id":"q","error":{"code":-32603,"message":"[upstream-guard] invalid response: its error is not a JSON-RPC error object: \"boom\""}}` + "\n",
		},
		{
			name: "a proper error passes",
			in:   "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n",
			want: "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n",
		},
		{
			name: "oversized frame with the id first is replaced by an error",
			in:   `{"jsonrpc":"2.0","id":12,"result":{"text":"` + big + `"}}` + "\n" + `{"jsonrpc":"2.0","id":13,"result":{}}` + "\n",
			max:  200,
			want: `{"jsonrpc":"2.0","id":12,"error":{"code":-32603,"message":"[upstream-guard] too large: 346"}}` + "\n" + `{"jsonrpc":"2.0","id":13,"result":{}}` + "\n",
		},
		{
			name: "oversized frame with the id last (TypeScript SDK order)",
			in:   `{"result":{"text":"` + big + `"},"jsonrpc":"2.0","id":"req-9"}` + "\r\n",
			max:  100,
			want: `{"jsonrpc":"2.0","id":"req-9","error":{"code":-32603,"message":"[upstream-guard] too large: 351"}}` + "\n",
		},
		{
			name: "oversized frame with the id after jsonrpc at the end",
			in:   `{"result":{"text":"` + big + `"},"id":5,"jsonrpc":"2.0"}` + "\n",
			max:  100,
			want: `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"[upstream-guard] too large: 345"}}` + "\n",
		},
		{
			name:  "oversized frame whose id cannot be found is fatal",
			in:    `{"result":{"text":"` + big + `","id":5}}` + "\n",
			max:   100,
			fatal: true,
		},
		{
			name:  "an endless line is fatal without buffering it",
			in:    strings.Repeat("x", 1<<20),
			max:   1000,
			fatal: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			max := c.max
			if max == 0 {
				max = 1 << 20
			}
			f := newFrameReader(strings.NewReader(c.in), max)
			var fatal error
			f.TooLarge = func(size, max int64) error { fatal = tooLarge(size, max); return fatal }
			got, err := readAllFrames(t, f)
			if c.fatal {
				if fatal == nil || !errors.Is(err, ErrResultTooLarge) {
					t.Fatalf("want a fatal too-large error, got %v (TooLarge %v)", err, fatal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("frames:\n got %q\nwant %q", got, c.want)
			}
			if n, _ := f.Garbage(); n != c.garbage {
				t.Errorf("garbage = %d, want %d", n, c.garbage)
			}
		})
	}
}

func TestGuardError(t *testing.T) {
	p, ok := guardError("internal error: [upstream-guard] too large: 9437184", 8<<20)
	if !ok || !errors.Is(p, ErrResultTooLarge) || p.msg != "the server's response of 9 MiB is larger than the 8 MiB limit (MaxResultBytes)" {
		t.Errorf("too large: %v %v", p, ok)
	}
	p, ok = guardError("internal error: [upstream-guard] invalid response: nope", 1)
	if !ok || !errors.Is(p, ErrInvalidResponse) || p.msg != "the server sent an invalid JSON-RPC response: nope" {
		t.Errorf("invalid: %v %v", p, ok)
	}
	if _, ok := guardError("Method not found", 1); ok {
		t.Error("an ordinary message was taken for a guard error")
	}
}

func TestGarbageHint(t *testing.T) {
	f := newFrameReader(strings.NewReader("banner\n"), 100)
	if garbageHint(f) != "" {
		t.Error("hint before any garbage")
	}
	readAllFrames(t, f)
	if h := garbageHint(f); !strings.Contains(h, `wrote 1 line to stdout that are not JSON-RPC, last: "banner"`) {
		t.Errorf("hint = %q", h)
	}
}
