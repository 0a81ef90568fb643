package httpserve_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/httpserve"
)

// countingBody counts the bytes read from it and the times it answered
// io.EOF.
type countingBody struct {
	r         io.Reader
	read, eof int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	if err == io.EOF {
		c.eof++
	}
	return n, err
}

func (c *countingBody) Close() error { return nil }

// TestReadBodyOnce: handlers in a chain that each call ReadBody share one
// read of the body and the same bytes, and the handler behind reads them
// from r.Body; a limit cuts what is returned, not what a later caller with
// a larger limit gets.
func TestReadBodyOnce(t *testing.T) {
	const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`
	for _, tc := range []struct {
		name          string
		limits        []int64
		want          []int // len of each ReadBody's answer
		read, eofSeen int
	}{
		{"no limit twice", []int64{-1, -1}, []int{len(text), len(text)}, len(text), 1},
		{"limit above the size", []int64{-1, 1 << 20}, []int{len(text), len(text)}, len(text), 1},
		{"over a limit, then no limit", []int64{9, -1}, []int{10, len(text)}, len(text), 1},
		{"over a limit twice", []int64{9, 9}, []int{10, 10}, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &countingBody{r: strings.NewReader(text)}
			r, _ := http.NewRequest(http.MethodPost, "/mcp", body)
			var first []byte
			for i, limit := range tc.limits {
				b, err := httpserve.ReadBody(r, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != tc.want[i] || string(b) != text[:len(b)] {
					t.Fatalf("ReadBody %d (limit %d) = %q, want %d bytes", i, limit, b, tc.want[i])
				}
				if i == 0 {
					first = b
				} else if len(first) == len(text) && &b[0] != &first[0] {
					t.Fatal("the second ReadBody copied the body")
				}
			}
			if body.read != tc.read || body.eof != tc.eofSeen {
				t.Fatalf("the body was read for %d bytes with %d EOFs, want %d and %d", body.read, body.eof, tc.read, tc.eofSeen)
			}
			if tc.eofSeen == 1 {
				rest, err := io.ReadAll(r.Body)
				if err != nil || string(rest) != text {
					t.Fatalf("the handler behind read %q, %v", rest, err)
				}
				if body.eof != 1 {
					t.Fatalf("the handler behind read the original body again (%d EOFs)", body.eof)
				}
			}
		})
	}
}
