package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// TestStatelessFastPathSameBytes runs servers/echo with its stateless
// tools/call fast path (internal/mcpfix) and with mcp-go alone
// (ECHO_MCPGO_ONLY=1), sends both the same requests over stdio, and
// compares the response lines byte for byte: results, tool errors,
// requests that go to mcp-go either way.
func TestStatelessFastPathSameBytes(t *testing.T) {
	echo := testenv.GoBinary(t, "./servers/echo")
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"toolrag-gateway","version":"0.1.0"},` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta + `,` + params + `}}`
	}
	requests := []string{
		call("1", `"name":"echo","arguments":{"text":"hi"}`),
		call(`"s-2"`, `"name":"echo","arguments":{"text":"<é & 😀 \"q\">"}`),
		call("3", `"name":"add","arguments":{"a":1.5,"b":2}`),
		call("4", `"name":"add","arguments":{"a":1}`),
		call("5", `"name":"reverse","arguments":{"text":"abc"}`),
		call("6", `"name":"sleep","arguments":{"ms":-1}`),
		call("7", `"name":"sleep","arguments":{"ms":1}`),
		call("8", `"name":"fail","arguments":{"message":"as asked"}`),
		call("9", `"name":"fail"`),
		call("10", `"name":"echo"`),
		call("11", `"name":"nope","arguments":{}`),
		call("12", `"name":"echo","arguments":{"text":"x"},"task":{"ttl":1}`),
		`{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"no capabilities"}}}`,
		`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"future"}}}`,
	}
	transcript := func(mcpgoOnly bool) []string {
		cmd := exec.Command(echo)
		if mcpgoOnly {
			cmd.Env = append(os.Environ(), "ECHO_MCPGO_ONLY=1")
		}
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		outPipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { in.Close(); _ = cmd.Wait() }()
		out := bufio.NewReader(outPipe)
		var lines []string
		for _, req := range requests {
			if _, err := io.WriteString(in, req+"\n"); err != nil {
				t.Fatal(err)
			}
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("after %s: %v", req, err)
			}
			lines = append(lines, line)
		}
		return lines
	}
	fast, mcpgo := transcript(false), transcript(true)
	for i := range requests {
		if fast[i] != mcpgo[i] {
			t.Errorf("request %s\nfast path: %smcp-go:    %s", requests[i], fast[i], mcpgo[i])
		}
	}
	if !strings.Contains(fast[0], `"text":"hi"`) || !strings.Contains(fast[0], `"resultType":"complete"`) {
		t.Errorf("unexpected echo answer: %s", fast[0])
	}
}
