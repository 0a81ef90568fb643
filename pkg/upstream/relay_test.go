package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// recorder is a Relay that remembers what it got and answers with its name.
type recorder struct {
	name string
	mu   sync.Mutex
	logs []string
	asks []string // sampling prompts and elicitation messages received
}

func (r *recorder) relay(sample, elicit bool) Relay {
	rel := Relay{
		LogLevel: mcp.LoggingLevelDebug,
		Log: func(n mcp.LoggingMessageNotification) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.logs = append(r.logs, fmt.Sprint(n.Params.Data))
		},
	}
	if sample {
		rel.Sample = func(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := ""
			if len(req.Messages) > 0 {
				if c, ok := req.Messages[0].Content.(mcp.TextContent); ok {
					text = c.Text
				}
			}
			r.mu.Lock()
			r.asks = append(r.asks, text)
			r.mu.Unlock()
			return &mcp.CreateMessageResult{
				SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.TextContent{Type: "text", Text: "answer from " + r.name}},
				Model:           "test-model", StopReason: "endTurn",
			}, nil
		}
	}
	if elicit {
		rel.Elicit = func(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			r.mu.Lock()
			r.asks = append(r.asks, req.Params.Message)
			r.mu.Unlock()
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
				Action:  mcp.ElicitationResponseActionAccept,
				Content: map[string]any{"username": r.name, "email": r.name + "@example.com"},
			}}, nil
		}
	}
	return rel
}

func (r *recorder) got() (logs, asks []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.logs...), append([]string(nil), r.asks...)
}

// The conformance fixture is an mcp-go server: the gateway talks to it on
// the 2026-07-28 protocol, logs come as notifications during the call and
// sampling/elicitation as server-initiated requests (mcp-go lets its
// legacy API through over stdio).
func TestRelayFixtureStdio(t *testing.T) {
	bin := testenv.GoBinary(t, "./internal/conformance/fixture")
	m, _ := newTestManager(t, Options{StdioPoolSize: 1})
	m.SetServers(map[string]ServerConfig{"conf": {Transport: TransportStdio, Command: bin}})
	ctx := ctxT(t, 60*time.Second)

	// mcp-go's stdio server may write the last log message after the
	// response: the call lingers for it. (A log message within
	// quietAfterEnd of another call's end is dropped: the calls are spaced.)
	t.Run("logging", func(t *testing.T) {
		want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
		complete := 0
		const calls = 10
		for i := range calls {
			time.Sleep(quietAfterEnd + 10*time.Millisecond)
			r := &recorder{name: "a"}
			res, err := m.CallTool(WithRelay(ctx, r.relay(false, false)), "conf", "test_tool_with_logging", nil)
			if err != nil || res.IsError {
				t.Fatalf("CallTool = %v, %v", res, err)
			}
			logs, _ := r.got()
			if len(logs) > len(want) || strings.Join(logs, "|") != strings.Join(want[:len(logs)], "|") {
				t.Errorf("call %d: relayed logs = %q, want (a prefix of) %q", i, logs, want)
			}
			if len(logs) == len(want) {
				complete++
			}
		}
		if complete < calls-2 {
			t.Errorf("%d of %d calls got all their log messages", complete, calls)
		}
	})
	t.Run("sampling", func(t *testing.T) {
		r := &recorder{name: "a"}
		res, err := m.CallTool(WithRelay(ctx, r.relay(true, false)), "conf", "test_sampling", map[string]any{"prompt": "say hi"})
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); got != "LLM response: answer from a" {
			t.Errorf("result = %q", got)
		}
		if _, asks := r.got(); len(asks) != 1 || asks[0] != "say hi" {
			t.Errorf("sampling prompts seen = %q", asks)
		}
	})
	// On the 2026-07-28 protocol the client answers input requests before
	// retrying the call, so a refusal fails the call.
	t.Run("sampling refused", func(t *testing.T) {
		r := &recorder{name: "a"}
		_, err := m.CallTool(WithRelay(ctx, r.relay(false, false)), "conf", "test_sampling", map[string]any{"prompt": "say hi"})
		want := `upstream "conf": tools/call failed: the server's sampling/createMessage request was not answered: the gateway's client does not support sampling`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("no relay", func(t *testing.T) {
		_, err := m.CallTool(ctx, "conf", "test_sampling", map[string]any{"prompt": "say hi"})
		if err == nil || !strings.Contains(err.Error(), "the call that is running does not relay sampling/createMessage") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("elicitation", func(t *testing.T) {
		r := &recorder{name: "bob"}
		res, err := m.CallTool(WithRelay(ctx, r.relay(false, true)), "conf", "test_elicitation", map[string]any{"message": "who are you?"})
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); !strings.Contains(got, "action=accept") || !strings.Contains(got, "bob@example.com") {
			t.Errorf("result = %q", got)
		}
		if _, asks := r.got(); len(asks) != 1 || asks[0] != "who are you?" {
			t.Errorf("elicitation messages seen = %q", asks)
		}
	})
}

// Two callers share one upstream connection and call a sampling tool at
// the same time: each sampling request reaches its own caller only.
func TestRelayConcurrentCallersNeverCross(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-everything")
	cfgs := map[string]ServerConfig{
		// Over Streamable HTTP the request comes on the call's own response
		// stream: both calls get their answer.
		"http": startEverything(t, "streamableHttp").config(),
		// Over stdio nothing ties the request to a call: it is relayed only
		// while one call runs, refused otherwise.
		"stdio": {Transport: TransportStdio, Command: bin, Args: []string{"stdio"}},
	}
	m, _ := newTestManager(t, Options{StdioPoolSize: 1})
	m.SetServers(cfgs)
	ctx := ctxT(t, 90*time.Second)
	for id := range cfgs {
		t.Run(id, func(t *testing.T) {
			if _, err := m.ListTools(ctx, id); err != nil { // one connection, opened before the race
				t.Fatal(err)
			}
			const rounds = 4
			for round := range rounds {
				callers := []*recorder{{name: fmt.Sprintf("a%d", round)}, {name: fmt.Sprintf("b%d", round)}}
				results := make([]string, len(callers))
				var wg sync.WaitGroup
				for i, r := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := m.CallTool(WithRelay(ctx, r.relay(true, false)), id, "trigger-sampling-request", map[string]any{"prompt": "from " + r.name})
						if err != nil {
							results[i] = "error: " + err.Error()
							return
						}
						results[i] = resultText(t, res)
					}()
				}
				wg.Wait()
				for i, r := range callers {
					other := callers[1-i].name
					_, asks := r.got()
					for _, a := range asks {
						if !strings.HasSuffix(a, "from "+r.name) {
							t.Errorf("caller %s got the sampling request %q", r.name, a)
						}
					}
					if strings.Contains(results[i], "answer from "+other) {
						t.Errorf("caller %s got %s's answer: %s", r.name, other, results[i])
					}
					if id == "http" && !strings.Contains(results[i], "answer from "+r.name) {
						t.Errorf("caller %s: result %q lacks its own answer", r.name, results[i])
					}
				}
			}
		})
	}
}

func TestRelayEverythingElicitationStdio(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-everything")
	m, _ := newTestManager(t, Options{StdioPoolSize: 1})
	m.SetServers(map[string]ServerConfig{"ev": {Transport: TransportStdio, Command: bin, Args: []string{"stdio"}}})
	ctx := ctxT(t, 60*time.Second)
	r := &recorder{name: "carol"}
	res, err := m.CallTool(WithRelay(ctx, r.relay(false, true)), "ev", "trigger-elicitation-request", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if _, asks := r.got(); len(asks) != 1 {
		t.Fatalf("elicitation requests relayed = %q, want 1", asks)
	}
	if got := resultText(t, res); res.IsError || !strings.Contains(got, "carol") {
		t.Errorf("result = %q (isError %v), want the elicited content", got, res.IsError)
	}
}

func TestRelayRouteRule(t *testing.T) {
	h := newConnRelay(nil, "s", discardLogger())
	a := &Relay{}
	ctxA, endA := h.begin(WithRelay(context.Background(), *a))
	markNotified(ctxA)
	if in, _ := h.route(context.Background()); in == nil || in.relay == nil {
		t.Fatalf("one call in flight: route = %v", in)
	}
	ctxB, endB := h.begin(context.Background())
	if in, why := h.route(context.Background()); in != nil || !strings.Contains(why, "2 calls") {
		t.Errorf("two calls in flight, no association: route = %v, %q", in, why)
	}
	if in, _ := h.route(ctxB); in == nil || in.relay != nil {
		t.Errorf("explicit association to the call without relay: route = %v", in)
	}
	if in, _ := h.route(ctxA); in == nil || in.relay == nil {
		t.Errorf("explicit association to the relaying call: route = %v", in)
	}
	other := newConnRelay(nil, "t", discardLogger())
	if in, _ := other.route(ctxA); in != nil {
		t.Errorf("a call of another connection was routed: %v", in)
	}
	endA()
	if in, why := h.route(context.Background()); in != nil || !strings.Contains(why, "ended") {
		t.Errorf("one call left just after another ended: route = %v, %q", in, why)
	}
	if in, _ := h.route(ctxB); in == nil {
		t.Errorf("explicit association right after another call ended: route = nil")
	}
	endB()
	if in, why := h.route(context.Background()); in != nil || !strings.Contains(why, "no call") {
		t.Errorf("idle connection: route = %v, %q", in, why)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// BenchmarkRelayBeginEnd is what every call pays for the relay: register
// on the connection, and unregister.
func BenchmarkRelayBeginEnd(b *testing.B) {
	h := newConnRelay(nil, "s", discardLogger())
	ctx := WithRelay(context.Background(), Relay{})
	b.ReportAllocs()
	for b.Loop() {
		_, end := h.begin(ctx)
		end()
	}
}

// BenchmarkRelayLogMessage is routing one log notification to the only
// call in flight.
func BenchmarkRelayLogMessage(b *testing.B) {
	h := newConnRelay(nil, "s", discardLogger())
	n := 0
	_, end := h.begin(WithRelay(context.Background(), Relay{Log: func(mcp.LoggingMessageNotification) { n++ }}))
	defer end()
	msg := mcp.JSONRPCNotification{Notification: mcp.Notification{Method: string(mcp.MethodNotificationMessage),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"level": "info", "data": "x"}}}}
	b.ReportAllocs()
	for b.Loop() {
		h.notify(msg)
	}
	if n == 0 {
		b.Fatal("nothing relayed")
	}
}
