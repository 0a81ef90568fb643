// Command echo is the reference stdio MCP server of the gateway: a small,
// dependency-free server with a few tools, one prompt, one resource and one
// resource template, used by the tests, the benchmarks and as the example in
// docs/upstreams.md.
//
//	go run ./servers/echo                 # MCP over stdin/stdout
//	go run ./servers/echo -http :9000     # Streamable HTTP on :9000/mcp
//
// Tools: echo {text}, add {a, b}, reverse {text}, sleep {ms}, fail {message}.
// Prompt: greeting {name}. Resource: echo://info. Template: echo://items/{id}.
//
// ECHO_MCPGO_ONLY=1 serves stdio with mcp-go alone, without the stateless
// tools/call fast path (internal/mcpfix); ECHO_CPUPROFILE=path (%p: the
// pid) writes a CPU profile of a stdio run. Both are for the benchmarks.
//
// The -misbehave flag turns it into a faulty server for the gateway's fault
// tests (never use it in a registry):
//
//	crash-on-call   exits with status 3 when it receives tools/call
//	hang            never answers tools/call (everything else works)
//	garbage         prints a banner that is not JSON-RPC at start, and answers
//	                tools/call with lines that are not JSON-RPC (never a response)
//	badframe        answers tools/call with a JSON-RPC frame that has neither
//	                result nor error
//	huge            answers tools/call with a text result of -huge-bytes bytes
//	exit-at-start   writes an error to stderr and exits with status 2
//	flood-tools     answers every tools/list with -flood-page generated tools
//	                and a new nextCursor, so its tool list never ends
//	loop-tools      like flood-tools, but the second page's nextCursor
//	                points back at itself (a pagination loop)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
	"github.com/toolrag/mcp-gateway/servers/echo/bigtext"
)

// version is reported in serverInfo.
const version = "1.0.0"

// maxSleep bounds the sleep tool so that a typo cannot park a worker for days.
const maxSleep = 10 * time.Minute

func main() {
	misbehave := flag.String("misbehave", "", "test-only fault mode: crash-on-call, hang, garbage, badframe, huge, flood-tools, loop-tools or exit-at-start")
	hugeBytes := flag.Int("huge-bytes", 10<<20, "size of the text result in -misbehave=huge mode")
	floodPage := flag.Int("flood-page", 5000, "tools per tools/list page in -misbehave=flood-tools mode")
	alias := flag.String("alias", "", "also offer the echo tool and a prompt under this name (tests of hostile names)")
	httpAddr := flag.String("http", "", "serve Streamable HTTP at this address (path /mcp) instead of stdio")
	stderrLine := flag.String("stderr-line", "", "test-only: write this line to stderr at start (e.g. a connection string, to check that the gateway never shows it to callers)")
	big := flag.Bool("big", false, "test-only: also offer the big tool, which answers a text (or structured content) of the given size (large-result tests)")
	growFile := flag.String("grow-file", "", "test-only: when this file appears, offer a tool named by its first line and send notifications/tools/list_changed (stdio)")
	traceTool := flag.Bool("trace-tool", false, "test-only: also offer the tool trace_context, which answers with the traceparent header and the _meta its call arrived with (the tracing tests)")
	flag.Parse()
	if *stderrLine != "" {
		fmt.Fprintln(os.Stderr, *stderrLine)
	}

	switch *misbehave {
	case "", "crash-on-call", "hang", "garbage", "badframe", "huge", "flood-tools", "loop-tools":
	case "exit-at-start":
		fmt.Fprintln(os.Stderr, "echo: cannot start: ECHO_REQUIRED_SETTING is not set (-misbehave=exit-at-start)")
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "echo: unknown -misbehave mode %q\n", *misbehave)
		os.Exit(2)
	}

	s := newServer()
	if *traceTool {
		addTraceTool(s)
	}
	if *alias != "" {
		s.AddTool(mcp.NewTool(*alias,
			mcp.WithDescription("Return the given text unchanged (an alias of echo)."),
			mcp.WithString("text", mcp.Required(), mcp.Description("Text to return.")),
		), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("alias " + *alias + ": " + req.GetString("text", "")), nil
		})
		s.AddPrompt(mcp.NewPrompt(*alias, mcp.WithPromptDescription("The greeting prompt under another name.")),
			func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return mcp.NewGetPromptResult("alias", []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("alias "+*alias)),
				}), nil
			})
	}
	if *big {
		addBig(s)
	}
	if *httpAddr != "" {
		// Listen first, then say where: with port 0 the line names the
		// port the system picked (tests read it).
		l, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "echo:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "echo: serving Streamable HTTP on http://%s/mcp\n", l.Addr())
		mux := http.NewServeMux()
		mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(withTraceHeader)))
		if err := http.Serve(l, mux); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "echo:", err)
			os.Exit(1)
		}
		return
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	defer cpuProfile()()
	// Frames written by the misbehave filter and growWhenAsked never
	// interleave with the server's.
	out := mcpfix.NewLockedWriter(os.Stdout)
	var in io.Reader = os.Stdin
	if *misbehave != "" {
		in = misbehaveFilter(os.Stdin, out, *misbehave, *hugeBytes, *floodPage)
	}
	if *growFile != "" {
		go growWhenAsked(ctx, s, out, *growFile)
	}
	fmt.Fprintf(os.Stderr, "echo: serving MCP on stdio (pid %d)\n", os.Getpid())
	stdio := server.NewStdioServer(s)
	server.WithWorkerPoolSize(32)(stdio)
	var err error
	if *misbehave == "" && os.Getenv("ECHO_MCPGO_ONLY") == "" {
		// 2026-07-28 tools/call requests are answered without mcp-go's
		// per-request re-decoding (docs/mcp-go-stateless-cost.md).
		err = serveFast(ctx, s, stdio, in, out)
	} else {
		err = stdio.Listen(ctx, in, out)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

// cpuProfile profiles the stdio server into $ECHO_CPUPROFILE (%p: the pid)
// when set, for the benchmarks; the returned function ends the profile.
func cpuProfile() func() {
	path := os.Getenv("ECHO_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid())))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo: ECHO_CPUPROFILE:", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// serveFast serves stdio through the stateless tools/call fast path.
func serveFast(ctx context.Context, s *server.MCPServer, stdio *server.StdioServer, in io.Reader, out io.Writer) error {
	fast, err := mcpfix.New(mcpfix.Config{Server: s, Recover: true})
	if err != nil {
		return err
	}
	return fast.ServeStdio(ctx, stdio, in, out)
}

// newServer builds the MCP server with every tool, prompt and resource.
func newServer() *server.MCPServer {
	s := server.NewMCPServer("echo", version,
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithRecovery(),
		server.WithInstructions("Reference server of the MCP gateway: echo, add, reverse, sleep and fail tools."),
	)

	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Return the given text unchanged."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to return.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := req.RequireString("text")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(text), nil
	})

	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Add two numbers and return the sum."),
		mcp.WithNumber("a", mcp.Required(), mcp.Description("First addend.")),
		mcp.WithNumber("b", mcp.Required(), mcp.Description("Second addend.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := req.RequireFloat("a")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		b, err := req.RequireFloat("b")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(fmt.Sprint(a + b)), nil
	})

	s.AddTool(mcp.NewTool("reverse",
		mcp.WithDescription("Return the given text with its characters in reverse order."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to reverse.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := req.RequireString("text")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		r := []rune(text)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return mcp.NewToolResultText(string(r)), nil
	})

	s.AddTool(mcp.NewTool("sleep",
		mcp.WithDescription("Wait the given number of milliseconds, then answer (for timeout tests)."),
		mcp.WithNumber("ms", mcp.Required(), mcp.Description("Milliseconds to wait (at most 600000).")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ms, err := req.RequireFloat("ms")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		d := time.Duration(ms * float64(time.Millisecond))
		if d < 0 || d > maxSleep {
			return mcp.NewToolResultError(fmt.Sprintf("ms must be between 0 and %d", maxSleep.Milliseconds())), nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return mcp.NewToolResultText(fmt.Sprintf("slept %d ms", d.Milliseconds())), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})

	s.AddTool(mcp.NewTool("fail",
		mcp.WithDescription("Return a tool error (isError: true) with the given message."),
		mcp.WithString("message", mcp.Description("Error message to return.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(req.GetString("message", "failed as asked")), nil
	})

	s.AddPrompt(mcp.NewPrompt("greeting",
		mcp.WithPromptDescription("Greet someone by name."),
		mcp.WithArgument("name", mcp.RequiredArgument(), mcp.ArgumentDescription("Who to greet.")),
	), func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name := req.Params.Arguments["name"]
		if name == "" {
			return nil, errors.New("argument name is required")
		}
		return mcp.NewGetPromptResult("A greeting", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Say hello to "+name+".")),
		}), nil
	})

	s.AddResource(mcp.NewResource("echo://info", "info",
		mcp.WithResourceDescription("What this server is."),
		mcp.WithMIMEType("text/plain"),
	), func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: "echo://info", MIMEType: "text/plain",
			Text: "echo " + version + ": reference MCP server of the gateway",
		}}, nil
	})

	s.AddResourceTemplate(mcp.NewResourceTemplate("echo://items/{id}", "item",
		mcp.WithTemplateDescription("An item by id; its text names the id."),
		mcp.WithTemplateMIMEType("text/plain"),
	), func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		id := strings.TrimPrefix(req.Params.URI, "echo://items/")
		if id == "" || strings.Contains(id, "/") {
			return nil, fmt.Errorf("no item at %s", req.Params.URI)
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id,
		}}, nil
	})
	return s
}

// growWhenAsked waits for file to appear, then offers a tool named by its
// first line and tells the client its tool list changed: the test of a
// catalog that follows its servers live.
func growWhenAsked(ctx context.Context, s *server.MCPServer, out io.Writer, file string) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b, err := os.ReadFile(file)
		name := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
		if err != nil || name == "" {
			continue
		}
		s.AddTool(mcp.NewTool(name,
			mcp.WithDescription("Forecast the tide height at a harbour (a tool this server added while running)."),
			mcp.WithString("harbour", mcp.Required(), mcp.Description("Harbour name.")),
		), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("tide at " + req.GetString("harbour", "") + ": 2.1 m"), nil
		})
		fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		return
	}
}

// misbehaveFilter returns the server's input: stdin with tools/call requests
// handled the faulty way mode asks for.
func misbehaveFilter(stdin io.Reader, out io.Writer, mode string, hugeBytes, floodPage int) io.Reader {
	pr, pw := io.Pipe()
	if mode == "garbage" {
		fmt.Fprintln(out, "echo server starting (this banner is not JSON-RPC)")
	}
	go func() {
		br := bufio.NewReaderSize(stdin, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 && !misbehave(line, out, mode, hugeBytes, floodPage) {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// misbehave handles one input line in a fault mode and reports whether it
// consumed it (true) or the server should see it (false).
func misbehave(line []byte, out io.Writer, mode string, hugeBytes, floodPage int) bool {
	var msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil {
		return false
	}
	if (mode == "flood-tools" || mode == "loop-tools") && msg.Method == "tools/list" {
		io.WriteString(out, floodTools(msg.ID, msg.Params.Cursor, floodPage, mode == "loop-tools"))
		return true
	}
	if msg.Method != "tools/call" {
		return false
	}
	switch mode {
	case "crash-on-call":
		fmt.Fprintln(os.Stderr, "echo: crashing on tools/call as asked (-misbehave=crash-on-call)")
		os.Exit(3)
	case "hang":
		fmt.Fprintln(os.Stderr, "echo: ignoring tools/call as asked (-misbehave=hang)")
	case "garbage":
		fmt.Fprint(out, "garbage: this line is not JSON\n{not json either\n[1,2,3]\n")
	case "badframe":
		fmt.Fprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"unexpected\":true}\n", msg.ID)
	case "huge":
		// The id goes last, as the TypeScript SDK writes it.
		var b strings.Builder
		b.Grow(hugeBytes + 128)
		b.WriteString(`{"result":{"content":[{"type":"text","text":"`)
		b.WriteString(strings.Repeat("x", hugeBytes))
		b.WriteString(`"}]},"jsonrpc":"2.0","id":`)
		b.Write(msg.ID)
		b.WriteString("}\n")
		io.WriteString(out, b.String())
	default:
		return false
	}
	return true
}

// floodTools is one tools/list page of -misbehave=flood-tools: n tools
// named after the page, and a cursor to a next page that always exists
// (with loop, page 1 again after page 1).
func floodTools(id json.RawMessage, cursor string, n int, loop bool) string {
	page := 0
	fmt.Sscanf(cursor, "page-%d", &page)
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":{"tools":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"flood_%d_%d","description":"Generated tool %d of page %d.","inputSchema":{"type":"object"}}`, page, i, i, page)
	}
	next := page + 1
	if loop {
		next = 1
	}
	fmt.Fprintf(&b, `],"nextCursor":"page-%d"}}`+"\n", next)
	return b.String()
}

type traceHeaderKey struct{}

// withTraceHeader keeps the traceparent header of an HTTP request for the
// trace_context tool.
func withTraceHeader(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, traceHeaderKey{}, r.Header.Get("traceparent"))
}

// addTraceTool offers trace_context: it answers with the traceparent
// header (HTTP) and the _meta members its call arrived with, as JSON.
func addTraceTool(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("trace_context",
		mcp.WithDescription("Report the trace context this call arrived with (test tool)."),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out := struct {
			Header string         `json:"traceparent_header"`
			Meta   map[string]any `json:"meta"`
		}{Meta: map[string]any{}}
		out.Header, _ = ctx.Value(traceHeaderKey{}).(string)
		if req.Params.Meta != nil {
			for k, v := range req.Params.Meta.AdditionalFields {
				out.Meta[k] = v
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(string(b)), nil
	})
}

// addBig offers the big tool: a text of the given size made of numbered
// lines ("%08d\n", cut at size), so that a reader can check every byte
// came back in order (bigtext.Text). With structured, the text is in
// structuredContent {"data": ...} and the text content is one short line.
func addBig(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("big",
		mcp.WithDescription("Return a text of the given number of bytes (numbered lines)."),
		mcp.WithNumber("bytes", mcp.Required(), mcp.Description("Size of the text, at most 512 MiB.")),
		mcp.WithBoolean("structured", mcp.Description("Return it as structuredContent.data instead.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, err := req.RequireFloat("bytes")
		if err != nil || n < 0 || n > 512<<20 {
			return mcp.NewToolResultError("bytes must be between 0 and 536870912"), nil
		}
		text := bigtext.Text(int(n))
		if req.GetBool("structured", false) {
			return mcp.NewToolResultStructured(map[string]any{"data": text}, fmt.Sprintf("%d bytes in structuredContent.data", len(text))), nil
		}
		return mcp.NewToolResultText(text), nil
	})
}
