package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// relayUpstream logs, samples and completes on demand.
func relayUpstream() *server.MCPServer {
	var s *server.MCPServer
	s = server.NewMCPServer("relay-upstream", "1.0.0",
		server.WithToolCapabilities(false), server.WithPromptCapabilities(false),
		server.WithResourceCapabilities(true, false), server.WithLogging(), server.WithCompletions(),
		server.WithPromptCompletionProvider(cityCompletions{}),
	)
	s.AddTool(mcp.NewTool("shout", mcp.WithDescription("Log the tag three times."), mcp.WithString("tag", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tag := req.GetString("tag", "")
			for i := range 3 {
				if i > 0 {
					time.Sleep(15 * time.Millisecond)
				}
				_ = s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "up", fmt.Sprintf("%s-%d", tag, i)))
			}
			// mcp-go's server (without an event store) can drop a
			// notification sent just before the response.
			time.Sleep(10 * time.Millisecond)
			return mcp.NewToolResultText("shouted " + tag), nil
		})
	s.AddTool(mcp.NewTool("ask", mcp.WithDescription("Ask the client's LLM."), mcp.WithString("tag", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res := server.SamplingResponse(req.Params.InputResponses, "llm"); res != nil {
				c, _ := mcp.ParseSamplingContent(res.Content)
				tc, _ := c.(mcp.TextContent)
				return mcp.NewToolResultText("llm said: " + tc.Text), nil
			}
			return server.NewInputRequestBuilder("").Sample("llm", mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("question from " + req.GetString("tag", ""))}},
				MaxTokens: 10,
			}).ToolResult(), nil
		})
	s.AddPrompt(mcp.NewPrompt("weather", mcp.WithArgument("city")),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("w", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("weather"))}), nil
		})
	s.AddResource(mcp.NewResource("up://info", "info"),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "up://info", Text: "info"}}, nil
		})
	return s
}

type cityCompletions struct{}

func (cityCompletions) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	var out []string
	for _, c := range []string{"paris", "park city", "perth"} {
		if strings.HasPrefix(c, arg.Value) {
			out = append(out, prompt+":"+c)
		}
	}
	return &mcp.Completion{Values: out}, nil
}

// relayGateway is the gateway over two upstreams ("alpha", granted to the
// agent key, and "beta", admin only) served at url.
func relayGateway(t *testing.T) (url string) {
	t.Helper()
	return relayGatewayGrace(t, 0)
}

// relayGatewayGrace is relayGateway with a Config.StreamGrace (0: default).
func relayGatewayGrace(t *testing.T, grace time.Duration) (url string) {
	t.Helper()
	srv := httptest.NewServer(newTestGatewayWith(t, relayUpstream(), 10*time.Second, gateway.HTTPOptions{}, nil,
		func(c *gateway.Config) { c.StreamGrace = grace }))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// downstream is a client of the gateway that records its log messages.
type downstream struct {
	c    *client.Client
	mu   sync.Mutex
	logs []string
}

func connect(t *testing.T, url, secret string, opts ...client.ClientOption) *downstream {
	t.Helper()
	return connectListening(t, url, secret, true, opts...)
}

// connectListening connects a client that opens its session's GET stream
// (where mcp-go sends server-initiated requests) only when listen is set.
func connectListening(t *testing.T, url, secret string, listen bool, opts ...client.ClientOption) *downstream {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPLogger(slog.New(slog.DiscardHandler))}
	if listen {
		topts = append(topts, transport.WithContinuousListening())
	}
	d := &downstream{}
	d.c, _ = testenv.Connect(t, url, testenv.MCPClient{Key: secret, Legacy: true, Transport: topts, Options: opts,
		OnNotification: func(n mcp.JSONRPCNotification) {
			if n.Method == string(mcp.MethodNotificationMessage) {
				d.mu.Lock()
				d.logs = append(d.logs, fmt.Sprint(n.Params.AdditionalFields["data"]))
				d.mu.Unlock()
			}
		}})
	return d
}

func (d *downstream) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := d.c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

type samplerFunc func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)

func (f samplerFunc) CreateMessage(ctx context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return f(ctx, r)
}

func TestRelaySampling(t *testing.T) {
	url := relayGateway(t)
	var asked []string
	var mu sync.Mutex
	// mcp-go's server sends server-initiated requests on the standalone
	// GET stream, which an mcp-go client opens with continuous listening.
	withLLM := connect(t, url, "fz-agent-secret", client.WithSamplingHandler(samplerFunc(
		func(_ context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			q := r.Messages[0].Content.(mcp.TextContent).Text
			mu.Lock()
			asked = append(asked, q)
			mu.Unlock()
			return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("42 for " + q)}, Model: "m"}, nil
		})))
	res := withLLM.call(t, "run_tool", map[string]any{"call_name": "alpha__ask", "arguments": map[string]any{"tag": "A"}})
	if got := testenv.TextSep(res, "\n"); res.IsError || got != "llm said: 42 for question from A" {
		t.Errorf("with sampling: %q (isError %v)", got, res.IsError)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "question from A" {
		t.Errorf("the client's LLM was asked %q", asked)
	}
	mu.Unlock()

	without := connect(t, url, "fz-agent-secret")
	res = without.call(t, "run_tool", map[string]any{"call_name": "alpha__ask", "arguments": map[string]any{"tag": "B"}})
	if got := testenv.TextSep(res, "\n"); !res.IsError || !strings.Contains(got, "does not support sampling (it did not declare the sampling capability)") {
		t.Errorf("without sampling: %q (isError %v)", got, res.IsError)
	}

	// Declared, but no GET stream to receive the request on: a clear
	// error after Config.StreamGrace (2 s) instead of a call waiting out its
	// timeout.
	deaf := connectListening(t, url, "fz-agent-secret", false, client.WithSamplingHandler(samplerFunc(
		func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			t.Error("a client without a GET stream was asked")
			return nil, errors.New("unexpected")
		})))
	start := time.Now()
	res = deaf.call(t, "run_tool", map[string]any{"call_name": "alpha__ask", "arguments": map[string]any{"tag": "C"}})
	if got := testenv.TextSep(res, "\n"); !res.IsError || !strings.Contains(got, "has no open stream for server requests") {
		t.Errorf("sampling without a GET stream: %q (isError %v) after %v", got, res.IsError, time.Since(start))
	}
}

// Two clients call a logging tool of the same upstream connection at the
// same time: neither ever gets the other's log messages; alone, a client
// gets all of its own.
func TestRelayLogsStayWithTheirCaller(t *testing.T) {
	url := relayGateway(t)
	a := connect(t, url, "fz-agent-secret")
	b := connect(t, url, "fz-admin-secret")
	for _, d := range []*downstream{a, b} {
		if err := d.c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
			t.Fatal(err)
		}
	}
	res := a.call(t, "alpha__shout", map[string]any{"tag": "solo"})
	if res.IsError {
		t.Fatal(testenv.TextSep(res, "\n"))
	}
	a.mu.Lock()
	got := strings.Join(a.logs, ",")
	a.mu.Unlock()
	if got != "solo-0,solo-1,solo-2" {
		t.Errorf("alone: logs %q", got)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		for _, c := range []struct {
			d   *downstream
			tag string
		}{{a, fmt.Sprintf("a%d", round)}, {b, fmt.Sprintf("b%d", round)}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.d.call(t, "alpha__shout", map[string]any{"tag": c.tag})
			}()
		}
		wg.Wait()
	}
	for name, d := range map[string]*downstream{"a": a, "b": b} {
		d.mu.Lock()
		for _, l := range d.logs {
			if !strings.HasPrefix(l, name) && !strings.HasPrefix(l, "solo") {
				t.Errorf("client %s got log %q", name, l)
			}
		}
		d.mu.Unlock()
	}
}

// completion/complete reaches the upstream owning the prompt; a prompt the
// key cannot see is answered like one that does not exist.
func TestCompletionPolicy(t *testing.T) {
	url := relayGateway(t)
	agent := connect(t, url, "fz-agent-secret")
	complete := func(prompt string) (string, error) {
		req := mcp.CompleteRequest{}
		req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: prompt}
		req.Params.Argument = mcp.CompleteArgument{Name: "city", Value: "pa"}
		res, err := agent.c.Complete(context.Background(), req)
		if err != nil {
			return "", err
		}
		return strings.Join(res.Completion.Values, ","), nil
	}
	if got, err := complete("alpha__weather"); err != nil || got != "weather:paris,weather:park city" {
		t.Errorf("granted prompt: %q, %v", got, err)
	}
	_, missing := complete("nosuch__weather")
	if missing == nil {
		t.Fatal("unknown prompt completed")
	}
	_, denied := complete("beta__weather")
	if denied == nil || strings.ReplaceAll(denied.Error(), "beta__weather", "X") != strings.ReplaceAll(missing.Error(), "nosuch__weather", "X") {
		t.Errorf("denied prompt: %v\nunknown prompt: %v", denied, missing)
	}
}

// resources/subscribe is forwarded for a granted resource; one the key
// cannot see is answered like one that does not exist.
func TestSubscribePolicy(t *testing.T) {
	url := relayGateway(t)
	agent := connect(t, url, "fz-agent-secret")
	sub := func(uri string) error {
		req := mcp.SubscribeRequest{}
		req.Params.URI = uri
		return agent.c.Subscribe(context.Background(), req)
	}
	if err := sub("gateway://alpha/up://info"); err != nil {
		t.Errorf("granted resource: %v", err)
	}
	missing := sub("gateway://nosuch/up://info")
	if missing == nil {
		t.Fatal("unknown resource subscribed")
	}
	denied := sub("gateway://beta/up://info")
	if denied == nil || strings.ReplaceAll(denied.Error(), "beta", "X") != strings.ReplaceAll(missing.Error(), "nosuch", "X") {
		t.Errorf("denied resource: %v\nunknown resource: %v", denied, missing)
	}
	req := mcp.UnsubscribeRequest{}
	req.Params.URI = "gateway://alpha/up://info"
	if err := agent.c.Unsubscribe(context.Background(), req); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}
}

// TestSamplingWaitsForLateStream: a client whose tool call overtakes its
// GET stream (it opens it after initialize) still gets the sampling
// request once the stream opens, within Config.StreamGrace.
func TestSamplingWaitsForLateStream(t *testing.T) {
	// A grace far beyond the stream's delay: a loaded machine can take
	// seconds to open it, and the test is about waiting, not its length.
	url := relayGatewayGrace(t, 30*time.Second)
	late := connectListening(t, url, "fz-agent-secret", false, client.WithSamplingHandler(samplerFunc(
		func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("not asked through the client: the raw stream below answers")
		})))
	sid := late.c.GetTransport().(*transport.StreamableHTTP).GetSessionId()
	if sid == "" {
		t.Fatal("no session id")
	}
	answer := make(chan *mcp.CallToolResult, 1)
	go func() {
		answer <- late.call(t, "run_tool", map[string]any{"call_name": "alpha__ask", "arguments": map[string]any{"tag": "L"}})
	}()
	select {
	case res := <-answer:
		t.Fatalf("the call did not wait for the GET stream: %q (isError %v)", testenv.TextSep(res, "\n"), res.IsError)
	case <-time.After(300 * time.Millisecond): // the call is waiting for a stream now
	}

	// The GET stream, opened by hand: read the sampling request from it and
	// answer it with a POST, as a listening client does.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer fz-agent-secret")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(data), &ask); err == nil && ask.Method == "sampling/createMessage" {
				break
			}
		}
	}
	if ask.Method != "sampling/createMessage" {
		t.Fatalf("no sampling request on the late stream (%v)", sc.Err())
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"late but here"},"model":"m"}}`, ask.ID)
	post, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	post.Header.Set("Authorization", "Bearer fz-agent-secret")
	post.Header.Set("Mcp-Session-Id", sid)
	post.Header.Set("Content-Type", "application/json")
	post.Header.Set("Accept", "application/json, text/event-stream")
	pr, err := http.DefaultClient.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	pr.Body.Close()
	res := <-answer
	if got := testenv.TextSep(res, "\n"); res.IsError || got != "llm said: late but here" {
		t.Fatalf("sampling after a late GET stream: %q (isError %v)", got, res.IsError)
	}
}

// slowRegistration delays the end of every initialize request by d after
// its response has reached the client: mcp-go registers a session only
// after writing that response, so this opens the window in which the
// client's next requests arrive before the session exists.
func slowRegistration(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if !bytes.Contains(body, []byte(`"initialize"`)) {
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(&delayedWriter{ResponseWriter: w, d: d}, r)
		})
	}
}

type delayedWriter struct {
	http.ResponseWriter
	d time.Duration
}

func (w *delayedWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.ResponseWriter.(http.Flusher).Flush()
	time.Sleep(w.d)
	return n, err
}

func (w *delayedWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// TestSamplingRightAfterInitialize: a client whose requests overtake the
// registration of its session (mcp-go registers it after writing the
// initialize response) still has its capabilities known and gets the
// sampling request on its GET stream.
func TestSamplingRightAfterInitialize(t *testing.T) {
	srv := httptest.NewServer(newTestGatewayWith(t, relayUpstream(), 10*time.Second, gateway.HTTPOptions{},
		slowRegistration(time.Second), nil))
	t.Cleanup(srv.Close)
	withLLM := connect(t, srv.URL+"/mcp", "fz-agent-secret", client.WithSamplingHandler(samplerFunc(
		func(_ context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant,
				Content: mcp.NewTextContent("early")}, Model: "m"}, nil
		})))
	res := withLLM.call(t, "run_tool", map[string]any{"call_name": "alpha__ask", "arguments": map[string]any{"tag": "E"}})
	if got := testenv.TextSep(res, "\n"); res.IsError || got != "llm said: early" {
		t.Errorf("sampling right after initialize: %q (isError %v)", got, res.IsError)
	}
}
