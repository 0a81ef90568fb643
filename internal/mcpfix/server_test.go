package mcpfix

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// testServer is an mcp-go server with tools covering the fast path's
// outcomes: results, tool errors, handler errors, panics, no result, and
// one that reports what its request and context say.
func testServer(t testing.TB, recover bool) *server.MCPServer {
	t.Helper()
	opts := []server.ServerOption{server.WithToolCapabilities(false)}
	if recover {
		opts = append(opts, server.WithRecovery())
	}
	s := server.NewMCPServer("fixture", "1.2.3", opts...)
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := req.RequireString("text")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithNumber("a"), mcp.WithNumber("b")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := req.RequireFloat("b")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultStructuredOnly(map[string]any{"sum": req.GetFloat("a", 0) + b}), nil
		})
	s.AddTool(mcp.NewTool("fail"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("the backend said no")
	})
	s.AddTool(mcp.NewTool("panic"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("boom")
	})
	s.AddTool(mcp.NewTool("nothing"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, nil
	})
	s.AddTool(mcp.NewTool("own-meta"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := mcp.NewToolResultText("with meta")
		res.Meta = mcp.NewMetaFromMap(map[string]any{"x": 1})
		return res, nil
	})
	s.AddTool(mcp.NewTool("inspect"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var b strings.Builder
		info := server.RequestProtocolInfoFromContext(ctx)
		fmt.Fprintf(&b, "modern=%v version=%s server=%v header=%v method=%s\n",
			server.IsModernRequest(ctx), server.RequestProtocolVersion(ctx),
			server.ServerFromContext(ctx) != nil, req.Header != nil, req.Method)
		fmt.Fprintf(&b, "info: client=%s caps=%s level=%q\n", js(info.ClientInfo), js(info.ClientCapabilities), info.LogLevel)
		m := req.Params.Meta
		fmt.Fprintf(&b, "meta: progress=%v(%T) version=%s client=%s caps=%s level=%q\n",
			m.ProgressToken, m.ProgressToken, m.ProtocolVersion(), js(m.ClientInfo()), js(m.ClientCapabilities()), m.LogLevel())
		fmt.Fprintf(&b, "args: %#v raw=%s map=%v", req.Params.Arguments, req.GetRawArguments(), req.GetArguments())
		return mcp.NewToolResultText(b.String()), nil
	})
	return s
}

// js is v as JSON, for comparing what handlers see.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"test-client","version":"0.1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}}}`

func call(id, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + params + `}}`
}

// TestSameResponses runs each request through the fast path and through
// mcp-go's HandleMessage and compares the encoded responses byte for byte.
func TestSameResponses(t *testing.T) {
	for _, recover := range []bool{true, false} {
		srv := testServer(t, recover)
		fast, err := New(Config{Server: srv, Recover: recover})
		if err != nil {
			t.Fatal(err)
		}
		base := fast.BaseContext(context.Background())
		for _, tc := range sameCases {
			if !recover && tc.name == "panic" {
				continue // HandleMessage does not recover: TestStdio covers it
			}
			t.Run(fmt.Sprintf("recover=%v/%s", recover, tc.name), func(t *testing.T) {
				c := fast.Prepare(base, []byte(tc.msg), nil)
				if c == nil {
					t.Fatal("the fast path did not take the call")
				}
				got := fast.Run(base, c)
				want, err := json.Marshal(srv.HandleMessage(context.Background(), json.RawMessage(tc.msg)))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("fast path:\n%s\nmcp-go:\n%s", got, want)
				}
			})
		}
	}
}

// sameCases are requests the fast path answers.
var sameCases = []struct{ name, msg string }{
	{"echo", call("1", modernMeta+`,"name":"echo","arguments":{"text":"hi"}`)},
	{"string id", call(`"req-7"`, modernMeta+`,"name":"echo","arguments":{"text":"hi"}`)},
	{"fractional id", call("1.5", modernMeta+`,"name":"echo","arguments":{"text":"hi"}`)},
	{"huge id", call("12345678901234567890", modernMeta+`,"name":"echo","arguments":{"text":"hi"}`)},
	{"escapes and unicode", call("2", modernMeta+`,"name":"echo","arguments":{"text":"<a&b> \u2028 é 😀 \"q\" \\"}`)},
	{"structured result", call("3", modernMeta+`,"name":"add","arguments":{"a":1,"b":2.5}`)},
	{"tool error result", call("4", modernMeta+`,"name":"add","arguments":{"a":1}`)},
	{"handler error", call("5", modernMeta+`,"name":"fail"`)},
	{"panic", call("6", modernMeta+`,"name":"panic"`)},
	{"no result", call("7", modernMeta+`,"name":"nothing"`)},
	{"result with its own meta", call("8", modernMeta+`,"name":"own-meta"`)},
	{"inspect", call("9", modernMeta+`,"name":"inspect","arguments":{"n":12345678901234567890,"s":"x","l":[1,{"k":null}]}`)},
	{"inspect, progress and log level", call("10", `"_meta":{"progressToken":"p-1","io.modelcontextprotocol/logLevel":"debug",`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"inspect"`)},
	{"inspect, numeric progress token", call("11", `"arguments":{},"name":"inspect","_meta":{"progressToken":42,`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}}`)},
	{"inspect, null arguments", call("12", modernMeta+`,"name":"inspect","arguments":null`)},
	{"inspect, arguments not an object", call("13", modernMeta+`,"name":"inspect","arguments":"text"`)},
	{"whitespace", "  " + call("14", modernMeta+`,"name":"echo","arguments":{"text":"hi"}`) + " "},
}

// TestFallback checks that the fast path leaves to mcp-go what it does not
// reproduce.
func TestFallback(t *testing.T) {
	cases := []struct{ name, msg string }{
		{"legacy, no _meta", call("1", `"name":"echo","arguments":{"text":"hi"}`)},
		{"legacy version", call("1", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo"`)},
		{"unknown version", call("1", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo"`)},
		{"no capabilities", call("1", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo"`)},
		{"capabilities null", call("1", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null},"name":"echo"`)},
		{"capabilities of the wrong shape", call("1", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]},"name":"echo"`)},
		{"trace context in _meta", call("1", `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo"`)},
		{"key in another case", call("1", `"_meta":{"io.modelcontextprotocol/protocolversion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo"`)},
		{"task", call("1", modernMeta+`,"name":"echo","task":{"ttl":1000}`)},
		{"multi round-trip retry", call("1", modernMeta+`,"name":"echo","requestState":"abc"`)},
		{"unknown tool", call("1", modernMeta+`,"name":"nope"`)},
		{"multi round-trip answers", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"echo","inputResponses":{"a":{}}}}`},
		{"response-shaped", `{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{},"params":{` + modernMeta + `,"name":"echo"}}`},
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{` + modernMeta + `,"name":"echo"}}`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{` + modernMeta + `,"name":"echo"}}`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{` + modernMeta + `,"name":"echo"}}`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"echo"}}`},
		{"other method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `,"x":"tools/call"}}`},
		{"malformed", call("1", modernMeta+`,"name":"echo","arguments":{"text":}`)},
		{"trailing data", call("1", modernMeta+`,"name":"echo"`) + `{}`},
		{"arguments that do not decode", call("1", modernMeta+`,"name":"echo","arguments":{"text":"\ud800"}x`)},
	}
	srv := testServer(t, true)
	fast, err := New(Config{Server: srv, Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if c := fast.Prepare(context.Background(), []byte(tc.msg), nil); c != nil {
				t.Errorf("the fast path took %s", tc.msg)
			}
		})
	}

	t.Run("hooks", func(t *testing.T) {
		hooks := &server.Hooks{}
		hooks.AddBeforeCallTool(func(ctx context.Context, id any, req *mcp.CallToolRequest) {})
		srv := server.NewMCPServer("hooked", "1", server.WithHooks(hooks))
		srv.AddTool(mcp.NewTool("echo"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("x"), nil
		})
		fast, err := New(Config{Server: srv})
		if err != nil {
			t.Fatal(err)
		}
		if c := fast.Prepare(context.Background(), []byte(call("1", modernMeta+`,"name":"echo"`)), nil); c != nil {
			t.Error("the fast path took a call on a server with tool-call hooks")
		}
	})
}

// stdioConn runs srv over pipes, through the fast path when fast is set,
// and returns a function that sends a line and reads the next line back.
func stdioConn(t *testing.T, srv *server.MCPServer, fast *Server) (in io.Writer, send func(string) string, stop func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	stdio := server.NewStdioServer(srv)
	server.WithErrorLogger(log.New(io.Discard, "", 0))(stdio)
	done := make(chan error, 1)
	go func() {
		if fast != nil {
			done <- fast.ServeStdio(ctx, stdio, inR, outW)
		} else {
			done <- stdio.Listen(ctx, inR, outW)
		}
	}()
	lines := bufio.NewReader(outR)
	send = func(msg string) string {
		t.Helper()
		if msg != "" {
			if _, err := io.WriteString(inW, msg+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	stop = func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("serving stdio: %v", err)
		}
	}
	return inW, send, stop
}

// TestStdio compares what a client reads on stdio from mcp-go's StdioServer
// alone and behind ServeStdio: the fast path's answers, panics without
// WithRecovery, requests passed on to mcp-go, and cancellation.
func TestStdio(t *testing.T) {
	passed := []struct{ name, msg string }{
		{"legacy call", call("100", `"name":"echo","arguments":{"text":"legacy"}`)},
		{"unknown tool", call("101", modernMeta+`,"name":"nope"`)},
		{"tools/list", `{"jsonrpc":"2.0","id":102,"method":"tools/list","params":{` + modernMeta + `}}`},
		{"parse error", `{"jsonrpc":"2.0","id":103,"method":"tools/call"`},
	}
	transcript := func(fastPath bool) []string {
		srv := testServer(t, false)
		started := make(chan struct{}, 1)
		srv.AddTool(mcp.NewTool("block"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		})
		var fast *Server
		if fastPath {
			var err error
			if fast, err = New(Config{Server: srv}); err != nil {
				t.Fatal(err)
			}
		}
		in, send, stop := stdioConn(t, srv, fast)
		defer stop()
		var out []string
		for _, tc := range append(sameCases, passed...) {
			out = append(out, tc.name+": "+send(tc.msg))
		}
		// A call cancelled by the client ends with its handler's error.
		// (Cancel once it runs: mcp-go registers the call only then.)
		if _, err := io.WriteString(in, call(`"b-1"`, modernMeta+`,"name":"block"`)+"\n"); err != nil {
			t.Fatal(err)
		}
		<-started
		out = append(out, "cancelled: "+send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"test"}}`))
		return out
	}
	want := transcript(false)
	got := transcript(true)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("behind ServeStdio:\n%s\nmcp-go alone:\n%s", got[i], want[i])
		}
	}
}

// TestStdioStopsWithContext checks that ServeStdio returns when its context
// ends although its input is still open (the reader is blocked on it), and
// that a call still running is cancelled first, as mcp-go's workers are.
func TestStdioStopsWithContext(t *testing.T) {
	srv := testServer(t, true)
	started, ended := make(chan struct{}), make(chan error, 1)
	srv.AddTool(mcp.NewTool("block"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	fast, err := New(Config{Server: srv, Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe() // never closed while serving
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- fast.ServeStdio(ctx, server.NewStdioServer(srv), inR, io.Discard) }()
	if _, err := io.WriteString(inW, call("1", modernMeta+`,"name":"block"`)+"\n"); err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeStdio: %v", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the running call ended with %v, want context.Canceled", err)
		}
	default:
		t.Error("ServeStdio returned before the running call ended")
	}
}
